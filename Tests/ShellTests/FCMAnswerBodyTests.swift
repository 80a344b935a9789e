import OrderedJSON
import Testing

@testable import ShellKit

/// FCM's answer to a message it sent is written as bytes (`FCMService.sentBody`): the
/// same text as the object `{"name":…}` serialized, for any name; and the name itself is
/// `projects/<project>/messages/<id>` for any project and id.
@Suite struct FCMAnswerBodyTests {
    @Test func theBodyIsTheObjectOfItsNameSerialized() throws {
        let names = [
            "projects/demo/messages/0:1700000000000000%abcdef", "", #"quote " and \ backslash"#,
            "control \u{01}\u{1F}\n\t", "non-ASCII é 🙂", String(repeating: "x", count: 5000),
        ]
        for name in names {
            let expected = JSON.object(JSONObject([("name", .string(name))])).compactBytes
            #expect(FCMService.sentBody(name: name) == expected, "\(name)")
            #expect(try JSON.parse(FCMService.sentBody(name: name))["name"]?.stringValue == name)
        }
    }

    @Test func theNameIsTheProjectAndTheMessageID() {
        let parts = ["", "demo", "cxshell", "0:1700000000000000%abcdefgh", "é 🙂", String(repeating: "p", count: 300)]
        for project in parts {
            for id in parts {
                #expect(FCMService.messageName(project: project, messageID: id) == "projects/\(project)/messages/\(id)")
            }
        }
    }
}
