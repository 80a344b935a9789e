import OrderedJSON
import PushPlugin
import Testing

/// What iOS reads of `aps` (DEL-2, PH-2, PH-5, PH-8), found in one pass: each answer is
/// what a lookup of its member by name gives.
@Suite struct APSTests {
    func aps(_ text: String) -> IOSNotification.APS { IOSNotification.APS(userInfo: object(text)) }

    @Test func alertSoundOrBadgeMakesAnAlertWhateverItsValue() {
        for member in [#""alert":"x""#, #""sound":"default""#, #""badge":3"#, #""alert":null"#, #""sound":{}"#] {
            let read = aps(#"{"aps":{"mutable-content":1,\#(member)}}"#)
            #expect(read.present && read.isAlert && !read.wakesApp, "\(member)")
        }
        let silent = aps(#"{"aps":{"content-available":1,"mutable-content":1,"thread-id":"t"}}"#)
        #expect(silent.present && !silent.isAlert && silent.wakesApp)
    }

    @Test func onlyTheNumberOneWakesTheApp() {
        #expect(aps(#"{"aps":{"content-available":1}}"#).wakesApp)
        for value in ["1.0", "0", #""1""#, "true", "null", "10", "-1"] {
            #expect(!aps(#"{"aps":{"content-available":\#(value)}}"#).wakesApp, "\(value)")
        }
    }

    @Test func withNoApsObjectNothingIsThere() {
        for text in [#"{"k":"v"}"#, #"{"aps":"x"}"#, #"{"aps":[1]}"#, #"{"APS":{"alert":"x"}}"#] {
            let read = aps(text)
            #expect(!read.present && !read.isAlert && !read.wakesApp && read.alert == nil, "\(text)")
        }
        #expect(aps(#"{"aps":{}}"#).present)
    }

    @Test func theMembersReadAreTheirValuesAndStringsOnlyForNames() {
        let read = aps(
            #"{"aps":{"category":"MSG","interruption-level":"passive","badge":7,"alert":{"title":"t"}},"category":"no"}"#
        )
        #expect(read.category == "MSG" && read.interruptionLevel == "passive")
        #expect(read.badge == .integer(7) && read.alert?["title"] == "t")
        let numbers = aps(#"{"aps":{"category":1,"interruption-level":true,"alert":"a"}}"#)
        #expect(numbers.category == nil && numbers.interruptionLevel == nil && numbers.alert == "a")
    }
}
