import Foundation
import Testing

/// Every lock in blectl's sources and in the test harness every test runs (SimulatorHarness)
/// is a pthread mutex (DBusKit's `Lock`, `NSLock`), never
/// `Synchronization.Mutex`: ThreadSanitizer does not understand Mutex's futex-based lock on
/// Linux and reports the accesses it guards as races, at random (`make test-tsan` failed so
/// in CI on the progress line's Mutex). A source check, so that a new Mutex fails here on
/// every run instead of under the sanitizer now and then.
@Suite struct NoFutexMutexTests {
    @Test func noSourceFileUsesSynchronizationMutex() throws {
        // <root>/Tests/DBusKitTests/NoFutexMutexTests.swift
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let sources = root.appendingPathComponent("Sources")
        let harness = root.appendingPathComponent("Tests/SimulatorHarness")
        let files = try [sources, harness].flatMap { directory in
            try #require(FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil))
                .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" }
        }
        #expect(files.count > 60, "the sources were not found at \(sources.path)")
        var offenders: [String] = []
        for file in files {
            let text = try String(contentsOf: file, encoding: .utf8)
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
            where (line.contains("Mutex(") || line.contains("Mutex<")) && !line.trimmingCharacters(in: .whitespaces).hasPrefix("//") {
                offenders.append("\(file.lastPathComponent):\(number + 1)")
            }
        }
        #expect(offenders == [], "use DBusKit's Lock (a pthread mutex ThreadSanitizer understands)")
    }
}
