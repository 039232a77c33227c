import struct SimulatorHarness.CPUBoundTrait
import Testing
@testable import BlectlCLI
import BlueZKit
import DBusKit

/// The pieces of the `-v` trace and the progress line that do not need a bus: values in
/// short form, times, and the progress line's texts.
@Suite("trace and progress formatting", .cpuBound)
struct TraceFormatTests {
    static func short(_ value: DBusValue, limit: Int = .max) -> String {
        var out = ""
        BusTrace.shortForm(value, into: &out, limit: limit)
        return out
    }

    @Test("values in short form", arguments: [
        (DBusValue.string("le"), #""le""#),
        (.string("bad\u{1B}[31m\n"), #""bad\u001b[31m\n""#),
        (.bytes([0x01, 0x02, 0xff]), "0x0102ff"),
        (.bytes([]), "[]"),
        (.boolean(true), "true"),
        (.int16(-60), "-60"),
        (.uint16(0x05f1), "1521"),
        (.objectPath("/org/bluez/hci0"), "/org/bluez/hci0"),
        (.stringArray(["RSSI", "TxPower"]), #"["RSSI", "TxPower"]"#),
        (.stringVariantDictionary(["Transport": .string("le"), "DuplicateData": .boolean(false)]), #"{DuplicateData: false, Transport: "le"}"#),
        (.dictionary(keySignature: "q", valueSignature: "v", [.init(.uint16(1521), .variant(.bytes([1, 2])))]), "{1521: 0x0102}"),
        (.dictionary(keySignature: "s", valueSignature: "v", [.init(.string("a key"), .variant(.int32(1)))]), #"{"a key": 1}"#),
        (.structure([.string("x"), .uint16(247)]), #"("x", 247)"#),
        (.variant(.variant(.double(1.5))), "1.5"),
    ])
    func shortForm(value: DBusValue, expected: String) {
        #expect(Self.short(value) == expected)
    }

    @Test("a long value stops soon after the limit instead of rendering it all")
    func limit() {
        let big = DBusValue.array(elementSignature: "s", (0..<100_000).map { .string("item \($0)") })
        let text = Self.short(big, limit: 50)
        #expect(text.utf8.count < 70)
        #expect(text.hasPrefix(#"["item 0", "item 1", "#))
    }

    @Test("times: seconds with microseconds, latencies in milliseconds with a tenth, progress in seconds with a tenth")
    func times() {
        #expect(BusTrace.seconds(.microseconds(12_345)) == "0.012345")
        #expect(BusTrace.seconds(.seconds(3) + .microseconds(7)) == "3.000007")
        #expect(BusTrace.milliseconds(.microseconds(740)) == "0.7 ms")
        #expect(BusTrace.milliseconds(.milliseconds(5002) + .microseconds(150)) == "5002.1 ms")
        #expect(StatusLine.tenths(.milliseconds(3240)) == "3.2 s")
        #expect(StatusLine.tenths(.zero) == "0.0 s")
    }

    @Test("the progress line is cut to the terminal's width, less one column")
    func fitted() {
        #expect(StatusLine.fitted("connecting to C0:FF:EE:00:00:01 (1.2 s)", columns: 80) == "connecting to C0:FF:EE:00:00:01 (1.2 s)")
        let cut = StatusLine.fitted("connecting to C0:FF:EE:00:00:01 (1.2 s)", columns: 20)
        #expect(cut.count == 19)
        #expect(cut == "connecting to C0:F…")
    }

    @Test("what the progress line says for each operation")
    func phases() throws {
        let address = try #require(BluetoothAddress("C0:FF:EE:00:00:01"))
        let battery = BluetoothUUID(uuid16: 0x2A19), service = BluetoothUUID(uuid16: 0x180F)
        #expect(ProgressObserver.phase(of: BLEOperation(.deviceLookup, address: address)) == "looking for C0:FF:EE:00:00:01")
        #expect(ProgressObserver.phase(of: BLEOperation(.connect, address: address)) == "connecting to C0:FF:EE:00:00:01")
        #expect(ProgressObserver.phase(of: BLEOperation(.serviceResolution, address: address)) == "resolving the services of C0:FF:EE:00:00:01")
        #expect(ProgressObserver.phase(of: BLEOperation(.read, address: address, service: service, characteristic: battery)) == "reading 2a19")
        #expect(ProgressObserver.phase(of: BLEOperation(.read, address: address, characteristic: battery, descriptor: BluetoothUUID(uuid16: 0x2901)))
                == "reading descriptor 2901 of 2a19")
        #expect(ProgressObserver.phase(of: BLEOperation(.disconnect, address: address)) == "waiting for the disconnect of C0:FF:EE:00:00:01")
        // Discovery and adapter checks keep the phase shown (the scan, the device lookup).
        #expect(ProgressObserver.phase(of: BLEOperation(.discovery)) == nil)
        #expect(ProgressObserver.phase(of: BLEOperation(.adapter)) == nil)
    }
}
