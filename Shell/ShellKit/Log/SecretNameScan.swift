/// Whether a body names a secret field, in one pass: a deterministic automaton
/// (Aho–Corasick) over the pieces of every secret field's name, case folded as it reads.
/// The lowercase copy and one `strstr` a piece that it replaced cost ~0.7k instructions a
/// push's body with a stream open, nine searches' calls most of it; the automaton costs a
/// table lookup a byte.
struct SecretNameScan: Sendable {
    /// The pieces, lowercase: every secret field's name (`api_key`, `"key"`,
    /// `access_token`, …) and a PEM private key hold one.
    static let pieces = ["pass", "secret", "private", "_key", "apikey", "\"key\"", "assertion", "_token", "auth"]

    static let shared = SecretNameScan(pieces.map { Array($0.utf8) })

    /// Each byte's class: a letter of some piece (either case), or 0 for any other.
    private let classOf: [UInt8]
    private let classCount: Int
    /// The next state, at `state * classCount + class`.
    private let next: [UInt8]
    /// Whether a piece ends at a state (or at one its failure links reach).
    private let found: [Bool]

    init(_ pieces: [[UInt8]]) {
        var classOf = [UInt8](repeating: 0, count: 256)
        var classCount = 1
        for byte in pieces.joined() where classOf[Int(byte)] == 0 {
            classOf[Int(byte)] = UInt8(classCount)
            if (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) { classOf[Int(byte) - 32] = UInt8(classCount) }
            classCount += 1
        }
        // The trie, then each state's failure link and missing moves, breadth first.
        var moves: [[Int?]] = [Array(repeating: nil, count: classCount)]
        var found = [false]
        for piece in pieces {
            var state = 0
            for byte in piece {
                let kind = Int(classOf[Int(byte)])
                if let to = moves[state][kind] {
                    state = to
                } else {
                    moves.append(Array(repeating: nil, count: classCount))
                    found.append(false)
                    moves[state][kind] = moves.count - 1
                    state = moves.count - 1
                }
            }
            found[state] = true
        }
        precondition(moves.count <= Int(UInt8.max), "the pieces need more states than a byte numbers")
        var next = [UInt8](repeating: 0, count: moves.count * classCount)
        var failure = [Int](repeating: 0, count: moves.count)
        var queue: [Int] = []
        for kind in 0..<classCount {
            if let to = moves[0][kind] {
                next[kind] = UInt8(to)
                queue.append(to)
            }
        }
        var head = 0
        while head < queue.count {
            let state = queue[head]
            head += 1
            found[state] = found[state] || found[failure[state]]
            for kind in 0..<classCount {
                let fallback = Int(next[failure[state] * classCount + kind])
                if let to = moves[state][kind] {
                    failure[to] = fallback
                    next[state * classCount + kind] = UInt8(to)
                    queue.append(to)
                } else {
                    next[state * classCount + kind] = UInt8(fallback)
                }
            }
        }
        (self.classOf, self.classCount, self.next, self.found) = (classOf, classCount, next, found)
    }

    /// Whether any piece appears in `bytes`, without regard to ASCII case.
    func appears(in bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        classOf.withUnsafeBufferPointer { classOf in
            next.withUnsafeBufferPointer { next in
                found.withUnsafeBufferPointer { found in
                    var state = 0
                    for byte in bytes {
                        state = Int(next[state &* classCount &+ Int(classOf[Int(byte)])])
                        if found[state] { return true }
                    }
                    return false
                }
            }
        }
    }
}
