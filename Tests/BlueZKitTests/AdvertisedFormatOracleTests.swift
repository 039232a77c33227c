import Foundation
import SimulatorHarness
import Testing
@testable import BlueZKit

/// Conformance: the same frames, fixed and randomly generated (seeded), decoded by BlueZKit
/// and by the decoders Home Assistant uses (PyPI bthome-ble and ibeacon-ble, through
/// Oracles/decode-beacons.py in the venv `make oracles` fills), every field compared; encrypted
/// BTHome frames encrypted there (cryptography's AESCCM) and decrypted by both with the bind key.
@Suite("Advertised formats against bthome-ble and ibeacon-ble")
struct AdvertisedFormatOracleTests {
    @Test func bthomeFramesDecodeAsBthomeBleDecodesThem() async throws {
        var generator = SplitMix64(seed: 0x5EED_B7E0)
        let fixed = ["4002c40903bf13", "4400090164530368c3a9", "40023301453301", "400a1027005814", "4058ec",
                     "40f00100f1000102043a01", "403c0205", "403b220201ff", "40500000000054000f01", "4006d2040748f1"]
        let frames = fixed.map(bytes) + (0..<400).map { _ in Self.randomBTHome(&generator) }
        let answers = try await Self.oracle(frames.map { "bthome " + hex($0) })
        for (frame, answer) in zip(frames, answers) {
            let packet = try #require(BTHome.decode(serviceData: frame).frame, "\(hex(frame)) undecodable")
            Self.expectSame(packet, answer, frame: frame)
        }
    }

    /// Random frames as in ``bthomeFramesDecodeAsBthomeBleDecodesThem``, each encrypted in
    /// Python (cryptography's AESCCM) with a random key, address and counter, then decoded by
    /// bthome-ble with the bind key and by BlueZKit; every tenth decrypted with a wrong key,
    /// which neither decodes anything of.
    @Test func encryptedBTHomeFramesDecodeAsBthomeBleDecodesThem() async throws {
        var generator = SplitMix64(seed: 0xB1D_CC4)
        func random(_ n: Int) -> [UInt8] { (0..<n).map { _ in UInt8(truncatingIfNeeded: generator.next()) } }
        struct Case { let plain, key, decryptKey, counter: [UInt8]; let address: BluetoothAddress }
        let cases = (0..<300).map { i in
            let plain = Self.randomBTHome(&generator), key = random(16), counter = random(4)
            let address = BluetoothAddress(random(6).map { ($0 < 0x10 ? "0" : "") + String($0, radix: 16) }.joined(separator: ":"))!
            var decryptKey = key
            if i % 10 == 9 { decryptKey[Int(generator.next() % 16)] ^= UInt8(1 + generator.next() % 255) }
            return Case(plain: plain, key: key, decryptKey: decryptKey, counter: counter, address: address)
        }
        let answers = try await Self.oracle(cases.map { c in
            "bthome-encrypt \(hex(c.key)) \(hex(c.decryptKey)) \(c.address) \(hex(c.counter)) \(hex(c.plain))"
        })
        for (c, answer) in zip(cases, answers) {
            let frame = bytes(try #require(answer["frame"] as? String))
            #expect(frame.count == c.plain.count + 8 && frame[0] == c.plain[0] | 1 && Array(frame[frame.count - 8..<frame.count - 4]) == c.counter)
            let decoded = BTHome.decode(serviceData: frame, address: c.address, bindKey: BTHomeBindKey(bytes: c.decryptKey)!)
            guard c.key == c.decryptKey else {
                #expect(answer["decrypted"] as? Bool == false, "\(hex(frame))")
                #expect(decoded == .undecodable("MIC check failed: wrong bind key?"))
                continue
            }
            #expect(answer["decrypted"] as? Bool == true, "\(hex(frame))")
            let packet = try #require(decoded.frame, "\(hex(frame)): \(decoded)")
            #expect(packet.encrypted)
            #expect(packet.counter == c.counter.reversed().reduce(0) { $0 << 8 | UInt32($1) })
            // The same objects as the frame in the clear.
            #expect(packet.objects == BTHome.decode(serviceData: c.plain).frame?.objects)
            let theirs = answer.mutableCopy() as! NSMutableDictionary
            theirs.removeObjects(forKeys: ["frame", "decrypted"])
            Self.expectSame(packet, theirs, frame: frame)
        }
    }

    /// Expects bthome-ble's `answer` to be the packet's ``oracleShape(_:)``.
    static func expectSame(_ packet: BTHome, _ answer: NSDictionary, frame: [UInt8]) {
        let (shape, rounded) = Self.oracleShape(packet)
        let ours = shape.mutableCopy() as! NSMutableDictionary, theirs = answer.mutableCopy() as! NSMutableDictionary
        var ourSensors = ours["sensors"] as? [String: Any] ?? [:], theirSensors = theirs["sensors"] as? [String: Any] ?? [:]
        theirSensors["signal_strength"] = nil  // added from the RSSI
        // bthome-ble rounds a value to the places of its factor's leading digit: a factor of
        // 0.35 (0x58) to 0.1, where BlueZKit keeps the exact product (-28.35, not -28.3).
        for key in rounded {
            let a = ourSensors.removeValue(forKey: key) as? Double, b = theirSensors.removeValue(forKey: key) as? Double
            #expect(a != nil && b != nil && abs(a! - b!) <= 0.05 + 1e-9, "\(key) in \(hex(frame)): \(String(describing: a)) against \(String(describing: b))")
        }
        ours["sensors"] = ourSensors as NSDictionary
        theirs["sensors"] = theirSensors as NSDictionary
        #expect(ours == theirs, "frame \(hex(frame))")
    }

    @Test func iBeaconFramesDecodeAsIbeaconBleDecodesThem() async throws {
        var generator = SplitMix64(seed: 0x1BEA_C0)
        let frames = [bytes("0215e2c56db5dffb48d2b060d0f5a71096e000010002c5")] + (0..<200).map { i in
            [0x02, 0x15] + (0..<(21 + i % 3)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
        }
        let answers = try await Self.oracle(frames.map { "ibeacon " + hex($0) })
        for (frame, answer) in zip(frames, answers) {
            let beacon = try #require(IBeacon.decode(manufacturerData: frame)?.frame)
            #expect(answer as NSDictionary == [
                "uuid": beacon.proximityUUID.description, "major": Int(beacon.major), "minor": Int(beacon.minor),
                "power": Int(beacon.measuredPower),
            ] as NSDictionary, "frame \(hex(frame))")
        }
        // What bthome-ble and ibeacon-ble decode nothing of, BlueZKit does not decode either.
        let short = [bytes("0215e2c56db5"), bytes("0115e2c56db5dffb48d2b060d0f5a71096e000010002c5")]
        for (frame, answer) in zip(short, try await Self.oracle(short.map { "ibeacon " + hex($0) })) {
            #expect(answer as NSDictionary == ["none": true] as NSDictionary)
            #expect(IBeacon.decode(manufacturerData: frame)?.frame == nil)
        }
    }

    // MARK: - Frames

    /// A random unencrypted BTHome v2 frame: 1 to 6 objects of ids drawn from the whole
    /// table, in increasing order, each with random data of its encoding.
    static func randomBTHome(_ g: inout SplitMix64) -> [UInt8] {
        let count = 1 + Int(g.next() % 6)
        let types = (0..<count).map { _ in BTHome.objectTypes[Int(g.next() % UInt64(BTHome.objectTypes.count))] }
            .sorted { $0.id < $1.id }
        var frame: [UInt8] = [g.next() % 2 == 0 ? 0x40 : 0x44]
        func random(_ n: Int) -> [UInt8] { (0..<n).map { _ in UInt8(truncatingIfNeeded: g.next()) } }
        func pick(_ table: [UInt8: String?]) -> UInt8 { table.keys.sorted()[Int(g.next() % UInt64(table.count))] }
        for type in types {
            frame.append(type.id)
            switch type.encoding {
            case .unsigned(let length, _), .signed(let length, _): frame += random(length)
            case .binary: frame.append(UInt8(g.next() % 2))
            case .timestamp: frame += random(4)
            case .firmwareVersion(let length): frame += random(length)
            case .buttonEvent: frame.append(pick(BTHome.buttonEvents))
            case .dimmerEvent: frame += [pick(BTHome.dimmerEvents)] + random(1)
            case .command:
                let arguments = random(Int(g.next() % 4))
                frame += [UInt8(arguments.count), pick(BTHome.commandEvents)] + arguments
            case .text:
                let text = (0..<(1 + g.next() % 8)).map { _ in ["a", "Z", "7", " ", "é", "°", "€"][Int(g.next() % 7)] }.joined()
                frame += [UInt8(text.utf8.count)] + Array(text.utf8)
            case .raw:
                let data = random(1 + Int(g.next() % 8))
                frame += [UInt8(data.count)] + data
            }
        }
        return frame
    }

    // MARK: - What bthome-ble reports

    /// The packet as bthome-ble reports it: sensors, binary sensors and events keyed by name,
    /// with `_1`, `_2` after a quantity (name and unit) that comes more than once; the
    /// device's firmware version and type id; whether it is trigger-based.
    /// Also returns the keys of values whose factor is not a power of ten, which bthome-ble rounds.
    static func oracleShape(_ packet: BTHome) -> (NSDictionary, Set<String>) {
        // Empty text and raw objects are skipped by bthome-ble, and so not counted.
        let objects = packet.objects.filter { object in
            switch object.value {
            case .text(let text): !text.isEmpty
            case .bytes(let data): !data.isEmpty || object.name == "command"
            default: true
            }
        }
        func kind(_ object: BTHome.Object) -> String? {
            switch object.value {
            case .version: nil
            case .integer where object.name == "device_type_id": nil
            case .bool: "binary|" + object.name
            case .event: "event|" + object.name
            default: "sensor|" + object.name + "|" + (object.unit ?? "")
            }
        }
        var seen: [String: Int] = [:]
        for object in objects { if let kind = kind(object) { seen[kind, default: 0] += 1 } }
        var counters: [String: Int] = [:]
        let sensors = NSMutableDictionary(), binary = NSMutableDictionary(), events = NSMutableDictionary()
        var firmware: Any = NSNull(), deviceType: Any = NSNull()
        var rounded: Set<String> = []
        for object in objects {
            guard let kind = kind(object) else {
                if case .version(let version) = object.value { firmware = version }
                if case .integer(let id) = object.value { deviceType = id }
                continue
            }
            var key = object.name
            if seen[kind]! > 1 {
                counters[kind, default: 0] += 1
                key += "_\(counters[kind]!)"
            }
            switch object.value {
            case .integer(let i): sensors[key] = i
            case .number(let d):
                sensors[key] = d
                if case .signed(_, let factor)? = BTHome.types[Int(object.id)]?.encoding, factor.mantissa != 1 { rounded.insert(key) }
                if case .unsigned(_, let factor)? = BTHome.types[Int(object.id)]?.encoding, factor.mantissa != 1 { rounded.insert(key) }
            case .bool(let b): binary[key] = b
            case .text(let t): sensors[key] = t
            case .bytes(let b): sensors[key] = hex(b)
            case .timestamp(let t): sensors[key] = Int(t)
            case .event(let name, let steps, let arguments):
                guard let name else { continue }
                let properties: Any = if let steps { ["steps": steps] as NSDictionary }
                    else if let arguments { ["args": hex(arguments)] as NSDictionary } else { NSNull() }
                events[key] = [name, properties] as NSArray
            case .version: break
            }
        }
        return (["sensors": sensors, "binary": binary, "events": events, "firmware": firmware,
                 "device_type_id": deviceType, "trigger_based": packet.triggerBased], rounded)
    }

    // MARK: - The oracle

    /// The venv's python: BLECTL_ORACLE_PYTHON (make test sets it), else the repository's .venv.
    static var python: String {
        if let path = ProcessInfo.processInfo.environment["BLECTL_ORACLE_PYTHON"], !path.isEmpty { return path }
        return root.appendingPathComponent(".venv/bin/python").path
    }

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Runs Oracles/`script` (decode-beacons.py unless given) on the lines, one JSON object
    /// back per line. The interpreter is waited for on a thread of its own, not on the
    /// cooperative pool (its start-up, bluetooth-sig's import, takes seconds on a loaded machine).
    static func oracle(_ lines: [String], script: String = "decode-beacons.py") async throws -> [NSDictionary] {
        guard FileManager.default.isExecutableFile(atPath: python) else {
            Issue.record("no python at \(python): run `make oracles` (bthome-ble, ibeacon-ble and bluetooth-sig in the venv)")
            return []
        }
        let scriptPath = root.appendingPathComponent("Tests/BlueZKitTests/Oracles/" + script).path
        let (status, data, errorText) = try await offThread { try runOracle(scriptPath, lines) }
        try #require(status == 0, "\(script) failed: \(errorText)")
        let answers = String(decoding: data, as: UTF8.self).split(separator: "\n").map { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? NSDictionary ?? [:]
        }
        try #require(answers.count == lines.count, "\(answers.count) answers to \(lines.count) lines: \(errorText)")
        return answers
    }

    /// The oracle's exit status, stdout and stderr for `lines` on its stdin (blocking).
    private static func runOracle(_ scriptPath: String, _ lines: [String]) throws -> (Int32, Data, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [scriptPath]
        let input = Pipe(), output = Pipe(), errors = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        // The lines (some 30 KB) fit in the pipe, so they are all written before the answers are read.
        input.fileHandleForWriting.write(Data((lines.joined(separator: "\n") + "\n").utf8))
        try input.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        let errorText = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, data, errorText)
    }
}

func hex(_ bytes: [UInt8]) -> String {
    bytes.map { ($0 < 0x10 ? "0" : "") + String($0, radix: 16) }.joined()
}
