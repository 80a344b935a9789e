import Testing

@testable import SimulatedDevice

@Suite struct SentenceTests {
    @Test(arguments: [Sentence.stackRoom, 1, 8])
    func numbersAndTextReadAsStringInterpolationWritesThem(stackRoom: Int) {
        for number in [0, 7, -7, 10, 50, 1_234_567_890, Int.max, Int.min] {
            let text = Sentence.text(stackRoom: stackRoom) { sentence in
                sentence += "keeps "
                sentence += number
                sentence += " für één app ✓"
            }
            #expect(text == "keeps \(number) für één app ✓")
        }
    }

    /// A sentence longer than its stack room goes on in the heap with nothing lost, from
    /// whichever piece first does not fit, a number's digits included.
    @Test(arguments: [1, 7, 64, Sentence.stackRoom])
    func aSentenceLongerThanItsRoomKeepsEveryPiece(stackRoom: Int) {
        let text = Sentence.text(stackRoom: stackRoom) { long in
            for piece in 0..<300 {
                long += piece
                long += piece.isMultiple(of: 2) ? "," : ";"
            }
        }
        #expect(text == (0..<300).map { "\($0)\($0.isMultiple(of: 2) ? "," : ";")" }.joined())
    }
}
