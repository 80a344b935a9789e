import Testing

@testable import OrderedJSON

#if canImport(Glibc)
    import Glibc
#endif

/// Runs `body` on a new thread with a stack of `bytes`, as a C caller's thread may be.
/// A stack overflow crashes the test process, so this fails loudly, never silently.
func onThread(stackBytes bytes: Int, _ body: @escaping @Sendable () -> Void) {
    final class Box: @unchecked Sendable {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
    var attributes = pthread_attr_t()
    pthread_attr_init(&attributes)
    defer { pthread_attr_destroy(&attributes) }
    pthread_attr_setstacksize(&attributes, bytes)
    var thread = pthread_t()
    let box = Unmanaged.passRetained(Box(body)).toOpaque()
    let created = pthread_create(
        &thread, &attributes,
        { argument in
            let box = Unmanaged<Box>.fromOpaque(argument!).takeRetainedValue()
            box.body()
            return nil
        }, box)
    precondition(created == 0, "pthread_create failed: \(created)")
    pthread_join(thread, nil)
}

@Suite struct SmallStackTests {
    /// The smallest stack the C ABI promises to work on (cx.h). AddressSanitizer's
    /// redzones make every frame several times larger, so under it (`make sanitize`)
    /// the same walks get four times the room; the promise is about ordinary builds.
    static let promisedStack = (256 << 10) * (underAddressSanitizer ? 4 : 1)

    /// Whether this process runs under AddressSanitizer (its runtime is loaded).
    static let underAddressSanitizer = dlsym(nil, "__asan_init") != nil

    @Test func everyWalkAtTheDepthLimitFitsTheSmallestPromisedStack() {
        let limit = JSONLimits.defaultMaxDepth
        let arrays = String(repeating: "[", count: limit) + "1.50" + String(repeating: "]", count: limit)
        let objects = String(repeating: #"{"k":"#, count: limit) + "-0" + String(repeating: "}", count: limit)
        let results = ResultBox()
        onThread(stackBytes: Self.promisedStack) {
            for text in [arrays, objects] {
                guard let value = try? JSON.parse(text: text) else { return }
                let again = try? JSON.parse(text: value.compactText)
                var hasher = Hasher()
                value.hash(into: &hasher)
                _ = hasher.finalize()
                results.append(again == value && value.compactText == text)
            }
        }
        #expect(results.values == [true, true])
    }

    @Test func aDeeperInputIsRefusedOnASmallStackWithoutRecursing() {
        let deep = String(repeating: "[", count: 1_000_000)
        let results = ResultBox()
        onThread(stackBytes: (64 << 10) * (Self.underAddressSanitizer ? 4 : 1)) {
            do {
                _ = try JSON.parse(text: deep)
                results.append(false)
            } catch {
                results.append((error as? JSONError)?.kind == .tooDeep)
            }
        }
        #expect(results.values == [true])
    }
}

/// Results written on the test's thread and read after `pthread_join`, which orders them.
final class ResultBox: @unchecked Sendable {
    private(set) var values: [Bool] = []
    func append(_ value: Bool) { values.append(value) }
}
