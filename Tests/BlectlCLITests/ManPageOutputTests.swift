import BlueZKit
import Testing
@testable import BlectlCLI

/// The man page's OUTPUT describes every key of the records made from a ``RecordLayout`` (scan,
/// notify, info and devices, adapters), and
/// no key they lack: a field added to a record (a property added to BlueZKit's table, say)
/// fails here until OUTPUT says what it is. The prose is written by hand.
@Suite("man page OUTPUT against the records")
struct ManPageOutputTests {
    /// The keys an OUTPUT subsection describes: each `.TP` entry's `.B key`, or `.BR a ", " b`
    /// for several keys described together.
    static func documentedKeys(_ subsection: String) -> Set<String>? {
        let output = ManPageTests.page.components(separatedBy: "\n.SH OUTPUT\n").dropFirst().first?
            .components(separatedBy: "\n.SH ").first ?? ""
        guard let body = output.components(separatedBy: "\n.SS ").first(where: { $0.hasPrefix(subsection + "\n") }) else { return nil }
        let lines = body.split(separator: "\n", omittingEmptySubsequences: false)
        var keys = Set<String>()
        for (previous, line) in zip(lines, lines.dropFirst()) where previous == ".TP" {
            if line.hasPrefix(".B ") {
                keys.insert(String(line.dropFirst(3)))
            } else if line.hasPrefix(".BR ") {
                keys.formUnion(line.dropFirst(4).replacing("\", \"", with: " ").split(separator: " ").map(String.init))
            }
        }
        return keys
    }

    @Test("each record's keys, and only those, are described in OUTPUT", arguments: [
        ("scan", Set(ScanCommand.layout(adapter: "hci0").fields.map(\.key))),
        ("notify", Set(NotifyCommand.layout(address: BluetoothAddress("C0:FF:EE:00:00:01")!, service: .batteryService,
                                            characteristic: .batteryLevel).fields.map(\.key))),
        ("\"info, devices\"", Set(InfoCommand.layout.fields.map(\.key))),
        ("adapters", Set(AdaptersCommand.layout.fields.map(\.key))),
    ])
    func outputDescribesEveryKey(subsection: String, keys: Set<String>) throws {
        let documented = try #require(Self.documentedKeys(subsection), "OUTPUT has no .SS \(subsection)")
        #expect(keys.subtracting(documented).sorted() == [], "keys of the record not described under \(subsection)")
        #expect(documented.subtracting(keys).sorted() == [], "keys described under \(subsection) that the record lacks")
        #expect(!keys.isEmpty)
    }

    @Test("the key reader finds single and grouped entries")
    func readerFindsEntries() throws {
        let scan = try #require(Self.documentedKeys("scan"))
        #expect(scan.isSuperset(of: ["address", "rssi", "time"]))
        let info = try #require(Self.documentedKeys("\"info, devices\""))
        #expect(info.isSuperset(of: ["paired", "services_resolved", "uuids", "manufacturer_data"]))
        #expect(Self.documentedKeys("no such section") == nil)
    }
}
