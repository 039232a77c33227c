@testable import BlectlCLI
import Testing

@Suite("Tab completion's limit for bluetoothd")
struct CompletionLimitTests {
    @Test("unset: half a second")
    func unset() {
        #expect(CompletionValues.limit(nil) == .milliseconds(500))
    }

    @Test("BLECTL_COMPLETION_TIMEOUT in seconds, as --timeout takes them")
    func set() {
        #expect(CompletionValues.limit("30") == .seconds(30))
        #expect(CompletionValues.limit("0.25") == .milliseconds(250))
        #expect(CompletionValues.limit("0") == .zero)
    }

    @Test("a value --timeout refuses is ignored: half a second", arguments: ["", "abc", "-1", "inf", "1e3", " 2", "86401"])
    func refused(_ value: String) {
        #expect(CompletionValues.limit(value) == .milliseconds(500))
    }
}
