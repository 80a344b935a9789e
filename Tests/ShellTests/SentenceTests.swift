import Testing

@testable import SimulatedDevice

@Suite struct SentenceTests {
    @Test func numbersAndTextReadAsStringInterpolationWritesThem() {
        for number in [0, 7, -7, 10, 50, 1_234_567_890, Int.max, Int.min] {
            var sentence = Sentence()
            sentence += "keeps "
            sentence += number
            sentence += " für één app ✓"
            #expect(sentence.text == "keeps \(number) für één app ✓")
        }
        var long = Sentence(capacity: 1)
        for piece in 0..<100 { long += piece }
        #expect(long.text == (0..<100).map(String.init).joined())
    }
}
