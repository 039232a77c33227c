// The simulator's object tree against a real bluetoothd's, per version: realbluez/trees/
// <version>.json is what the rig of that version (realbluez/) exported for a connected,
// resolved peripheral: per object kind (adapter, device, service, characteristic,
// descriptor), each interface and its property names. The simulator's tree for blesim Probe,
// connected and resolved, must have the same interfaces of those BlueZ serves that the
// simulator models, each with the same property names, but for those that depend on the
// peripheral rather than on bluetoothd.

import Foundation
import SimulatorHarness
import Testing

@Suite("the simulator's tree against the real bluetoothd's, per version")
struct RigTreeTests {
    /// Per object kind: interface -> sorted property names.
    typealias Tree = [String: [String: [String]]]

    /// The interfaces the simulator serves; a real bluetoothd has more (Media1, ...:
    /// sim/README.md).
    static let modelled: Set<String> = [
        "org.bluez.Adapter1", "org.bluez.Device1", "org.bluez.GattService1", "org.bluez.GattCharacteristic1",
        "org.bluez.GattDescriptor1", "org.bluez.Battery1", "org.bluez.Bearer.LE1", "org.bluez.Bearer.BREDR1",
        "org.bluez.LEAdvertisingManager1", "org.bluez.GattManager1",
    ]

    /// Properties there or not by what the peripheral advertises or has, not by the version:
    /// its Appearance, Class (and the Icon and Modalias they give), TxPower, ManufacturerData,
    /// ServiceData, RSSI (while it advertises), AdvertisingData (AD types bluetoothd does not
    /// parse), Sets (a member of a coordinated set); a characteristic's acquire and notify
    /// state (by its flags), a descriptor's Value (once read).
    static let peripheralOwn: Set<String> = [
        "Appearance", "Class", "Icon", "Modalias", "TxPower", "ManufacturerData", "ServiceData", "RSSI", "AdvertisingData",
        "Sets", "WriteAcquired", "NotifyAcquired", "Notifying", "Value",
    ]

    static func rigTreeURL(_ version: String) -> URL {
        Simulator.defaultRepoRoot.appendingPathComponent("realbluez/trees/\(version).json")
    }

    /// The versions whose rig tree is in the repository.
    static let versionsWithRigTrees = Simulator.bluezVersions.filter {
        FileManager.default.fileExists(atPath: rigTreeURL($0).path)
    }

    static let kinds = ["adapter", "device", "service", "characteristic", "descriptor"]

    /// The object kinds of a dump (the rig's has more: bluetoothd's version and packages,
    /// the GATT database, introspection, each object).
    static func decode(_ data: Data) throws -> Tree {
        let top = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        var tree = Tree()
        for kind in kinds {
            tree[kind] = try #require(top[kind] as? [String: [String]], "\(kind) in the dump")
        }
        return tree
    }

    /// The tree as compared: modelled interfaces only, without the peripheral's own properties.
    static func comparable(_ tree: Tree) -> Tree {
        tree.mapValues { interfaces in
            interfaces.filter { modelled.contains($0.key) }.mapValues { $0.filter { !peripheralOwn.contains($0) }.sorted() }
        }
    }

    /// GetManagedObjects of the simulator, as the rig's dump: per kind, the union of the
    /// property names of each interface, over the adapter, `address` and its GATT objects.
    static let dumpScript = #"""
import json, os, re, sys, dbus, dbus.bus
bus = dbus.bus.BusConnection(os.environ["DBUS_SYSTEM_BUS_ADDRESS"])
om = dbus.Interface(bus.get_object("org.bluez", "/"), "org.freedesktop.DBus.ObjectManager")
device = "/dev_" + sys.argv[1].replace(":", "_")
kinds = [("descriptor", r"/desc[0-9a-f]{4}$"), ("characteristic", r"/char[0-9a-f]{4}$"),
         ("service", r"/service[0-9a-f]{4}$"), ("device", r"/dev(_[0-9A-F]{2}){6}$"), ("adapter", r"^/org/bluez/hci\d+$")]
out = {}
for path, ifaces in om.GetManagedObjects().items():
    path = str(path)
    if "/dev_" in path and device not in path:
        continue
    kind = next((k for k, rx in kinds if re.search(rx, path)), None)
    if kind is None:
        continue
    for iface, props in ifaces.items():
        names = set(out.setdefault(kind, {}).get(str(iface), [])) | {str(p) for p in props}
        out[kind][str(iface)] = sorted(names)
print(json.dumps(out))
"""#

    /// The simulator's tree for blesim Probe as the rig's peripheral is dumped: discovered
    /// (a scan heard it), then connected and resolved (by another client).
    static func simulatorTree(_ version: String) async throws -> Tree {
        try await Sim.with(bluez: version) { sim in
            let scan = await sim.blectl(["scan", "--timeout", "2"])
            #expect(scan.status == 0 && scan.stdout.contains(World.probe), "\(scan)")
            try await sim.setFault("preconnected", World.probe)
            let simulator = sim.simulator
            let dump = try await offThread { simulator.run("/usr/bin/python3", ["-c", Self.dumpScript, World.probe]) }
            #expect(dump.status == 0, "\(dump.stderr)")
            return try Self.decode(Data(dump.stdout.utf8))
        }
    }

    @Test("interfaces and property names per object kind match the rig's", .enabled(if: !versionsWithRigTrees.isEmpty),
          arguments: versionsWithRigTrees)
    func treeMatchesTheRig(version: String) async throws {
        let rig = try Self.decode(Data(contentsOf: Self.rigTreeURL(version)))
        let (expected, got) = (Self.comparable(rig), Self.comparable(try await Self.simulatorTree(version)))
        #expect(Set(got.keys) == Set(expected.keys), "object kinds")
        for kind in expected.keys.sorted() {
            #expect(got[kind] ?? [:] == expected[kind] ?? [:], "\(version) \(kind): simulator \(got[kind] ?? [:]), rig \(expected[kind] ?? [:])")
        }
    }

    @Test("the comparison sees the differences: 5.66's tree, 5.82's and 5.87's")
    func versionsDiffer() async throws {
        let old = Self.comparable(try await Self.simulatorTree("5.66"))
        let new = Self.comparable(try await Self.simulatorTree("5.82"))
        let latest = Self.comparable(try await Self.simulatorTree("5.87"))
        #expect(old["device"]?["org.bluez.Device1"]?.contains("AdvertisingFlags") == false)
        #expect(new["device"]?["org.bluez.Device1"]?.contains("AdvertisingFlags") == true)
        #expect(new["device"]?["org.bluez.Device1"]?.contains("CablePairing") == false && new["device"]?["org.bluez.Bearer.LE1"] == nil)
        #expect(latest["device"]?["org.bluez.Device1"]?.contains("CablePairing") == true && latest["device"]?["org.bluez.Bearer.LE1"] == [])
        #expect(old["adapter"]?["org.bluez.Adapter1"]?.contains("PowerState") == false)
        #expect(new["adapter"]?["org.bluez.Adapter1"]?.contains("PowerState") == true)
        #expect(old["service"]?["org.bluez.GattService1"] == ["Device", "Includes", "Primary", "UUID"])
        #expect(new["service"]?["org.bluez.GattService1"] == ["Device", "Handle", "Includes", "Primary", "UUID"])
        #expect(old["device"]?["org.bluez.Battery1"] == ["Percentage"] && new["device"]?["org.bluez.Battery1"] == ["Percentage", "Source"])
    }
}
