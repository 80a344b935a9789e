import OrderedJSON

/// A category of notifications and its action buttons, as the app declares it with the
/// plugin's `categories` op (PH-1): iOS `UNNotificationCategory`; on Android the plugin
/// adds the buttons to the notifications it posts itself (PH-2).
public struct NotificationCategory: Sendable, Equatable {
    /// One button (`UNNotificationAction`, Android `Notification.Action`).
    public struct Action: Sendable, Equatable {
        public var id: String
        public var title: String
        /// Brings the app to the foreground, as a tap does; otherwise the app runs in the
        /// background (PH-3).
        public var foreground: Bool
        /// Asks the user for text (`UNTextInputNotificationAction`, Android `RemoteInput`).
        public var input: Bool
        public var destructive: Bool

        public init(id: String, title: String, foreground: Bool = false, input: Bool = false, destructive: Bool = false)
        {
            self.id = id
            self.title = title
            self.foreground = foreground
            self.input = input
            self.destructive = destructive
        }

        public var json: JSON {
            var object = JSONObject([("id", .string(id)), ("title", .string(title))])
            if foreground { object["foreground"] = true }
            if input { object["input"] = true }
            if destructive { object["destructive"] = true }
            return .object(object)
        }
    }

    public var id: String
    public var actions: [Action]

    public init(id: String, actions: [Action]) {
        self.id = id
        self.actions = actions
    }

    /// Our bound on a category's actions: iOS shows at most four, Android three.
    public static let maximumActions = 4
    /// How many of a category's actions an Android notification shows.
    public static let androidShownActions = 3

    public var json: JSON {
        .object(JSONObject([("id", .string(id)), ("actions", .array(actions.map(\.json)))]))
    }

    /// The `categories` op's input: a JSON array of categories. A sentence names what is
    /// wrong with it; nothing is declared unless all of it is right.
    public static func parse(_ input: String) -> Result<[NotificationCategory], CategoryRefusal> {
        do {
            return parse(json: try JSON.parse(text: input))
        } catch {
            return .failure(CategoryRefusal("categories' input is not JSON: \(error)"))
        }
    }

    /// The same rules over a parsed document (a state file's `categories`).
    public static func parse(json parsed: JSON) -> Result<[NotificationCategory], CategoryRefusal> {
        guard let list = parsed.arrayValue else {
            return .failure(
                CategoryRefusal(
                    #"categories' input must be a JSON array of categories, such as [{"id":"booking","actions":[{"id":"accept","title":"Accept"}]}]"#
                ))
        }
        var categories: [NotificationCategory] = []
        for (index, item) in list.enumerated() {
            switch category(item, at: index, after: categories) {
            case .success(let category): categories.append(category)
            case .failure(let refusal): return .failure(refusal)
            }
        }
        return .success(categories)
    }

    private static func category(_ item: JSON, at index: Int, after earlier: [NotificationCategory]) -> Result<
        NotificationCategory, CategoryRefusal
    > {
        guard let object = item.objectValue else {
            return .failure(CategoryRefusal("category \(index + 1) is not an object with \"id\" and \"actions\""))
        }
        guard let id = object["id"]?.stringValue, !id.isEmpty else {
            return .failure(CategoryRefusal("category \(index + 1) has no \"id\" (a non-empty string)"))
        }
        if earlier.contains(where: { $0.id == id }) {
            return .failure(CategoryRefusal("two categories have the id '\(id)'"))
        }
        switch actions(object["actions"] ?? .array([]), of: id) {
        case .success(let actions): return .success(NotificationCategory(id: id, actions: actions))
        case .failure(let refusal): return .failure(refusal)
        }
    }

    /// A category's `actions` (a state file keeps a tray entry's this way too): at most
    /// `maximumActions`, each with an `id` of its own and a `title`.
    public static func actions(_ value: JSON, of id: String) -> Result<[Action], CategoryRefusal> {
        guard let items = value.arrayValue else {
            return .failure(CategoryRefusal("category '\(id)': \"actions\" must be an array"))
        }
        guard items.count <= maximumActions else {
            return .failure(
                CategoryRefusal(
                    "category '\(id)' has \(items.count) actions; at most \(maximumActions) (iOS shows four, Android three)"
                ))
        }
        var actions: [Action] = []
        for (number, item) in items.enumerated() {
            guard let action = item.objectValue else {
                return .failure(CategoryRefusal("category '\(id)': action \(number + 1) is not an object"))
            }
            guard let actionID = action["id"]?.stringValue, !actionID.isEmpty else {
                return .failure(
                    CategoryRefusal("category '\(id)': action \(number + 1) has no \"id\" (a non-empty string)"))
            }
            if actions.contains(where: { $0.id == actionID }) {
                return .failure(CategoryRefusal("category '\(id)' has two actions with the id '\(actionID)'"))
            }
            guard let title = action["title"]?.stringValue else {
                return .failure(CategoryRefusal("category '\(id)': action '\(actionID)' has no \"title\" (a string)"))
            }
            var flags: [Bool] = []
            for flag in ["foreground", "input", "destructive"] {
                switch action[flag] {
                case nil: flags.append(false)
                case .bool(let value)?: flags.append(value)
                default:
                    return .failure(
                        CategoryRefusal("category '\(id)': action '\(actionID)''s \"\(flag)\" must be true or false"))
                }
            }
            actions.append(
                Action(id: actionID, title: title, foreground: flags[0], input: flags[1], destructive: flags[2]))
        }
        return .success(actions)
    }
}

/// Why a `categories` input was refused, in a sentence.
public struct CategoryRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
