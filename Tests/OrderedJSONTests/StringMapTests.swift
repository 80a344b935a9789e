import Testing

@testable import OrderedJSON

/// `JSONStringMap`'s plain form against the tree: it is read exactly when an object's
/// members are all plain strings with unique keys, and then holds what the tree holds.
@Suite struct StringMapTests {
    /// What `read` gives for `text`, from its start: the map and where it ended, or nil.
    static func read(_ text: String) -> (map: JSONStringMap, end: Int, contentBytes: Int)? {
        Array(text.utf8).withUnsafeBufferPointer { bytes in
            JSONStringMap.read(in: bytes.baseAddress!, count: bytes.count, from: 0)
        }
    }

    @Test func aPlainObjectIsKeptAsItsCompactText() throws {
        let compact = try #require(Self.read(#"{"n":"1","title":"Hello there"}"#))
        #expect(compact.map.plainText == #"{"n":"1","title":"Hello there"}"#)
        #expect(compact.end == 31 && compact.contentBytes == 1 + 1 + 5 + 11)
        let spaced = try #require(Self.read(" {\n \"n\" : \"1\" ,\t\"title\":\"Hello there\" } ,"))
        #expect(spaced.map.plainText == #"{"n":"1","title":"Hello there"}"#, "a sender's spaces are left out")
        #expect(spaced.end == 39 && spaced.contentBytes == compact.contentBytes)
        #expect(spaced.map == compact.map)
        let empty = try #require(Self.read(" { } "))
        #expect(empty.map.plainText == "{}" && empty.map.isEmpty && empty.map.count == 0 && empty.end == 4)
    }

    @Test func aPlainMapReadsAsItsObjectDoes() throws {
        let text = #"{"a":"1","mobiler_category":"booking","":"","title":"T"}"#
        let plain = try #require(JSONStringMap(plainText: text))
        let tree = JSONStringMap(try JSON.parse(text: text).objectValue!)
        #expect(plain == tree && tree == plain)
        #expect(plain.object == tree.object && plain.object.compactText == text)
        #expect(plain.count == 4 && !plain.isEmpty)
        for map in [plain, tree] {
            #expect(map["a"] == "1" && map["mobiler_category"] == "booking" && map[""] == "" && map["title"] == "T")
            #expect(map["b"] == nil && map["titl"] == nil && map["title "] == nil)
            #expect(map.contains("") && map.contains("a") && !map.contains("b"))
            #expect(map.containsKey { $0.hasPrefix("mobiler_") } && !map.containsKey { $0.hasPrefix("google.") })
        }
        #expect(plain != JSONStringMap(plainText: #"{"a":"1"}"#)!)
        #expect(plain != JSONStringMap(JSONObject([("a", "1")])))
    }

    /// Each text holds something the plain form does not: it is left to the tree.
    @Test(arguments: [
        #"{"a":"\"q"}"#, #"{"a\\":"1"}"#, #"{"a":"\u00e9"}"#, "{\"a\":\"é\"}", "{\"a\":\"\u{7F}\"}",
        "{\"a\":\"tab\there\"}", #"{"a":1}"#, #"{"a":null}"#, #"{"a":{"b":"c"}}"#, #"{"a":["b"]}"#,
        #"{"a":"1","a":"2"}"#, #"{"a":"1",}"#, #"{"a" "1"}"#, #"{"a":"1""#, #"{"a":"1"#, #"{"a"}"#, #"{,}"#,
        #"["a"]"#, #""a""#, "", " ", "{",
    ])
    func whatIsNotPlainIsLeftToTheTree(text: String) {
        #expect(Self.read(text) == nil, "\(text.debugDescription)")
        #expect(JSONStringMap(plainText: text) == nil)
    }

    @Test func theTextFormIsOnlyACompactPlainText() {
        #expect(JSONStringMap(plainText: #"{"a":"1"}"#) != nil)
        for text in [#" {"a":"1"}"#, #"{"a":"1"} "#, #"{"a": "1"}"#, #"{"a":"1"}{}"#, #"{"a":"1"},"#] {
            #expect(JSONStringMap(plainText: text) == nil, "\(text.debugDescription)")
        }
    }

    @Test func moreMembersThanTheLimitAreLeftToTheTree() {
        func text(_ count: Int) -> String {
            "{" + (0..<count).map { #""k\#($0)":"v""# }.joined(separator: ",") + "}"
        }
        #expect(JSONStringMap(plainText: text(JSONStringMap.maxPlainMembers))?.count == JSONStringMap.maxPlainMembers)
        #expect(JSONStringMap(plainText: text(JSONStringMap.maxPlainMembers + 1)) == nil)
    }

    /// Random objects of string members, plain or not, written with random spaces: read
    /// exactly when every member is plain and no key repeats, and then the tree's members.
    @Test func randomObjectsAreReadExactlyWhenPlainAndAsTheTreeHasThem() throws {
        let pieces = ["", "a", "b", "title", "x y", "long value here", "q\"", "back\\", "é", "\u{1}", "~!@#$%^&*()"]
        let spaces = ["", "", " ", "\n\t"]
        var generator = SystemRandomNumberGenerator()
        var read = 0
        for _ in 0..<3_000 {
            let members = (0..<Int.random(in: 0...6, using: &generator)).map { _ in
                (pieces.randomElement(using: &generator)!, pieces.randomElement(using: &generator)!)
            }
            func space() -> String { spaces.randomElement(using: &generator)! }
            var text = space() + "{"
            for (index, (key, value)) in members.enumerated() {
                if index > 0 { text += space() + "," }
                text += space() + JSON.string(key).compactText + space() + ":" + space()
                text += JSON.string(value).compactText + space()
            }
            text += space() + "}" + space()
            let plain = members.allSatisfy { key, value in
                [key, value].allSatisfy { $0.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7F && $0 != 34 && $0 != 92 } }
            }
            let unique = Set(members.map(\.0)).count == members.count
            let result = Self.read(text)
            #expect((result != nil) == (plain && unique), "\(text.debugDescription)")
            guard let result else { continue }
            read += 1
            let tree = try JSON.parse(text: text).objectValue!
            #expect(result.map.object == tree && result.map.plainText == JSON.object(tree).compactText)
            #expect(result.contentBytes == members.reduce(0) { $0 + $1.0.utf8.count + $1.1.utf8.count })
            #expect(result.end == text.utf8.count - (text.utf8.reversed().prefix { $0 != 125 }.count))
            for (key, value) in members { #expect(result.map[key] == value) }
        }
        #expect(read > 300, "\(read) of 3,000 were plain")
    }
}
