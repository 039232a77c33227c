// The GATT toolbox's fixtures in the simulator (sim/README.md, fault toolbox_device) and
// helpers shared by ReadTests, WriteTests, RequestTests and DisconnectTests.

import SimulatorHarness
import Testing

extension World {
    /// C0:FF:EE:00:00:06 "blesim Toolbox", advertising only with the fault `toolbox_device`.
    static let toolbox = "C0:FF:EE:00:00:06"
    static let toolboxFaults = ["toolbox_device": "1"]
    static let toolboxService = "5a1e0100-6c2d-4b8e-9f3a-0c1d2e3f4a5b"
    /// read, write; "hello, toolbox"; descriptor 0x2901 "Greeting".
    static let toolboxText = "5a1e0101-6c2d-4b8e-9f3a-0c1d2e3f4a5b"
    /// read, write-without-response; empty at first.
    static let toolboxCommand = "5a1e0102-6c2d-4b8e-9f3a-0c1d2e3f4a5b"
    /// read, write; NotPermitted "Not paired" until the device is paired.
    static let toolboxSecure = "5a1e0103-6c2d-4b8e-9f3a-0c1d2e3f4a5b"
}

extension [SimCall] {
    /// The members of the GATT calls (ReadValue, WriteValue, StartNotify, StopNotify), in order.
    var gattMembers: [String] {
        filter { $0.interface == "org.bluez.GattCharacteristic1" || $0.interface == "org.bluez.GattDescriptor1" }.map(\.member)
    }

    /// The members called on org.bluez.Device1 (Connect, Disconnect, ...), in order.
    var deviceMembers: [String] { filter { $0.interface == "org.bluez.Device1" }.map(\.member) }
}

extension Sim {
    /// Expects that blectl sent nothing that reaches the device: no GATT call of `members`.
    func expectNothingSent(_ members: [String] = ["WriteValue", "ReadValue", "StartNotify"],
                           sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let sent = try await calls().gattMembers.filter(members.contains)
        #expect(sent == [], "sent \(sent)", sourceLocation: sourceLocation)
    }
}
