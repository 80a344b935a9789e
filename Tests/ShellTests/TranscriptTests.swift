import ShellKit
import Testing

@Suite struct TranscriptTests {
    let text = """
        # The example plugin counts.
        device {"platform":"web"}
        launch
        subscribe {"key":"n","plugin":"echo","stream":"count","input":"2"}
        < delivery n "1"
        < delivery n "2"
        < end n
        call {"plugin":"camera","method":"snap"}
        < reply {"ok":false}
        # done
        """

    @Test func plainTranscriptShowsRequestsDeliveriesAndReplies() throws {
        let run = ScenarioRunner.run(try Scenario(name: "count.cxs", text: text))
        #expect(run.passed)
        let transcript = Transcript.render(run, color: false)
        let lines = transcript.split(separator: "\n").map(String.init)
        #expect(lines.first == "═══ count.cxs")
        #expect(lines.contains("  # The example plugin counts."))
        #expect(lines.contains(#"› subscribe {"key":"n","plugin":"echo","stream":"count","input":"2"}"#))
        #expect(lines.contains("    ← n  1"))
        #expect(lines.contains("    ← n  (stream ended)"))
        #expect(lines.contains("    = refused  output=plugin 'camera' is not available (available: echo, push)"))
        #expect(lines.contains("  # done"))
        #expect(lines.last == "  ✓ as expected")
        #expect(!transcript.contains("\u{1B}["))
    }

    @Test func colourIsOnlyAddedWhenAsked() throws {
        let run = ScenarioRunner.run(try Scenario(name: "count.cxs", text: text))
        #expect(Transcript.render(run, color: true).contains("\u{1B}[32m  ✓ as expected\u{1B}[0m"))
    }

    @Test func aFailureShowsTheLineWhatWasExpectedAndWhatCame() throws {
        let failing = """
            device {"platform":"web"}
            launch
            subscribe {"key":"n","plugin":"echo","stream":"count","input":"1"}
            < delivery n "2"
            """
        let run = ScenarioRunner.run(try Scenario(name: "bad.cxs", text: failing))
        #expect(!run.passed)
        #expect(
            run.firstFailure?.failure == #"line 4: expected delivery n "2""# + "\n"
                + #"  got      {"delivery":"n","device":"d1","ok":true,"output":"1"}"#)
        let transcript = Transcript.render(run, color: false)
        #expect(transcript.contains("  ✗ line 4: expected delivery n \"2\""))
        #expect(transcript.hasSuffix("  ✗ failed"))
    }

    @Test func aScenarioSyntaxErrorNamesItsLine() {
        #expect(throws: Scenario.SyntaxError.self) { try Scenario(name: "x", text: "< reply {}") }
        do {
            _ = try Scenario(name: "x", text: "launch\n< deliver n 1")
            Issue.record("expected a syntax error")
        } catch {
            #expect(
                error.description
                    == "line 2: unknown expectation 'deliver'; use reply, delivery, end, report or nothing")
        }
    }
}
