// Several devices in one command (`get-battery A B ...`, `--from FILE|-`, `--parallel`,
// `--overall-timeout`): one line per device on stdout, the exit status the failures share or
// 6, streaming input, and a run ended by its overall limit or a signal leaving nothing behind.

import Foundation
import SimulatorHarness
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite("several devices")
struct SeveralDevicesTests {
    /// The lines of `run`, each parsed, by their `address` (a null address under "").
    static func byAddress(_ run: Run, sourceLocation: SourceLocation = #_sourceLocation) -> [String: J] {
        var lines: [String: J] = [:]
        for object in run.jsonLines(sourceLocation: sourceLocation) {
            let key: String = if case .string(let address)? = object["address"] { address } else { "" }
            #expect(lines[key] == nil, "two lines for \(key): \(run)", sourceLocation: sourceLocation)
            lines[key] = object
        }
        return lines
    }

    /// The error object of a device's line (`{"address": ..., "error": {...}}`).
    static func error(of line: J?, sourceLocation: SourceLocation = #_sourceLocation) -> J? {
        guard let line, line.keys == ["address", "error"] else {
            Issue.record("not an error line: \(String(describing: line))", sourceLocation: sourceLocation)
            return nil
        }
        return line["error"]
    }

    @Test("several addresses, one absent: one line each, exit 2, the others not waiting behind the absent one")
    func oneAbsent() async throws {
        try await Sim.with { sim in
            // The absent device first, in one of two slots: the three others go through the
            // other slot while it is still being looked for.
            let process = try await sim.launch(["get-battery", World.missing, World.probe, World.gattBattery, World.battery1,
                                                "--parallel", "2", "--timeout", "12"])
            for address in [World.probe, World.gattBattery, World.battery1] {
                #expect(await process.stdoutContains(#""address":"\#(address)","percentage""#), "no line for \(address)")
            }
            #expect(process.poll() == nil, "the run ended before the absent device's own --timeout")
            #expect(!process.currentStdout.contains(World.missing))
            let result = try await process.finish(timeout: .seconds(30))
            let run = Run(arguments: [], status: result.status, stdout: result.stdout, stderr: result.stderr)
            #expect(run.status == 2, "\(run)")
            let lines = Self.byAddress(run)
            #expect(lines.count == 4)
            #expect(lines[World.probe] == ["address": .string(World.probe), "percentage": 87, "source": "battery1"])
            #expect(lines[World.gattBattery] == ["address": .string(World.gattBattery), "percentage": 55, "source": "gatt"])
            #expect(lines[World.battery1] == ["address": .string(World.battery1), "percentage": 42, "source": "battery1"])
            let error = try #require(Self.error(of: lines[World.missing]))
            #expect(error.keys == Set(World.errorKeys))
            let missingLine = try #require(run.lines.first { $0.contains(#""address":"\#(World.missing)","error""#) })
            #expect(topLevelKeys(missingLine) == ["address", "error"])
            #expect(error["code"] == "device_not_found")
            #expect(error["exit_status"] == 2)
            #expect(error["address"] == .string(World.missing))
            #expect(error["operation"] == "device_lookup")
            #expect(run.lines.last?.contains(World.missing) == true, "the absent device's line is not the last: \(run)")
            let summary = try #require(run.jsonError())
            #expect(summary["code"] == "device_not_found")
            #expect(summary["message"] == "1 of 4 devices failed (1 device_not_found)")
            try await sim.expectClean()
        }
    }

    @Test("failures that differ: exit 6; text: one line per device")
    func differentFailures() async throws {
        try await Sim.with { sim in
            let run = await sim.blectl(["get-battery", World.plain, World.missing, World.gattBattery, "--timeout", "3", "--format", "text"])
            #expect(run.status == 6, "\(run)")
            #expect(run.lines.count == 3, "\(run)")
            #expect(run.lines.contains("C0:FF:EE:00:00:04  55%  (gatt)"))
            #expect(run.lines.contains("C0:FF:EE:00:00:99  error: device C0:FF:EE:00:00:99 not found"))
            #expect(run.lines.contains { $0.hasPrefix("C0:FF:EE:00:00:05  error: not supported by the device: ") }, "\(run)")
            #expect(run.stderr == "blectl: error: 2 of 3 devices failed (1 not_supported, 1 device_not_found)\n"
                    || run.stderr == "blectl: error: 2 of 3 devices failed (1 device_not_found, 1 not_supported)\n", "\(run)")
            try await sim.expectClean()
        }
    }

    @Test("one address is the one-device form: the error on stderr, nothing on stdout")
    func oneDeviceFormUnchanged() async throws {
        try await Sim.with { sim in
            let run = await sim.blectl(["get-battery", World.missing, "--timeout", "1"])
            #expect(run.status == 2)
            #expect(run.stdout == "")
            let error = try #require(run.jsonError())
            #expect(error["code"] == "device_not_found")
            let two = await sim.blectl(["get-battery", World.missing, World.missing, "--timeout", "1"])
            #expect(two.status == 2, "\(two)")
            let lines = Self.byAddress(two)
            #expect(lines.count == 1, "an address given twice is one device: \(two)")
            #expect(Self.error(of: lines[World.missing])?["code"] == "device_not_found")
        }
    }

    @Test("read, get-version, info and disconnect over several devices")
    func otherCommands() async throws {
        try await Sim.with { sim in
            let read = await sim.blectl(["read", World.probe, World.gattBattery, "2a19"])
            #expect(read.status == 0, "\(read)")
            let values = Self.byAddress(read)
            #expect(values[World.probe]?["value"] == "57")
            #expect(values[World.gattBattery]?["value"] == "37")
            let version = await sim.blectl(["get-version", World.probe, World.plain])
            #expect(version.status == 3, "\(version)")
            #expect(Self.byAddress(version)[World.probe]?["firmware_revision"] == "1.4.2")
            let info = await sim.blectl(["info", World.probe, World.gattBattery, "--timeout", "5"])
            #expect(info.status == 0, "\(info)")
            #expect(Self.byAddress(info)[World.gattBattery]?["name"] == "blesim GattBattery")
            let disconnect = await sim.blectl(["disconnect", World.probe, World.missing])
            #expect(disconnect.status == 0, "\(disconnect)")
            // probe's link may still be in BlueZ's disconnect timer after the commands before.
            let disconnected = Self.byAddress(disconnect)
            #expect(disconnected.count == 2)
            #expect(disconnected[World.probe]?.keys == ["address", "was_connected"])
            #expect(disconnected[World.missing] == ["address": .string(World.missing), "was_connected": false])
            try await sim.expectClean()
        }
    }

    @Test("--from FILE: plain lines and JSON Lines, blank lines skipped, a bad line gets its 64 line and the run goes on")
    func fromFile() async throws {
        try await Sim.with { sim in
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("blectl-from-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: file) }
            let text = "\(World.probe)\n\n{\"address\":\"\(World.gattBattery)\",\"name\":\"blesim GattBattery\",\"rssi\":-60}\n"
                + "not an address\n  \(World.probe)  \n{\"address\":\"\(World.battery1)\"}"
            try text.write(to: file, atomically: true, encoding: .utf8)
            let run = await sim.blectl(["get-battery", "--from", file.path])
            #expect(run.status == 64, "\(run)")
            let lines = Self.byAddress(run)
            #expect(lines.count == 4, "\(run)")
            #expect(lines[World.probe]?["percentage"] == 87)
            #expect(lines[World.gattBattery]?["percentage"] == 55)
            #expect(lines[World.battery1]?["percentage"] == 42)
            let bad = try #require(Self.error(of: lines[""]))
            #expect(lines[""]?["address"] == .null)
            #expect(bad["code"] == "usage")
            #expect(bad["exit_status"] == 64)
            #expect(bad["message"] == .string("line 4 of '\(file.path)' is neither an address like C0:FF:EE:00:00:01 nor a JSON object with an \"address\": not an address"))
            try await sim.expectClean()
        }
    }

    @Test("--from -: each line is probed as soon as it arrives, before the input ends")
    func fromStandardInputStreams() async throws {
        try await Sim.with { sim in
            let simulator = sim.simulator
            let process = try await offThread {
                try simulator.launch(BlectlBinary.path, ["get-battery", "--from", "-"], stdinPipe: true)
            }
            process.writeStdin("{\"address\":\"\(World.probe)\",\"name\":\"blesim Probe\"}\n")
            #expect(await process.stdoutContains(#""address":"C0:FF:EE:00:00:01","percentage":87"#), "the first line was not probed while the input stayed open")
            process.writeStdin("\n???\n")
            #expect(await process.stdoutContains(#""exit_status":64"#), "no line for the bad input line")
            process.writeStdin("\(World.gattBattery)\n")
            #expect(await process.stdoutContains(#""address":"C0:FF:EE:00:00:04","percentage":55"#))
            #expect(process.poll() == nil, "ended before its input did")
            process.closeStdin()
            let result = try await process.finish()
            let run = Run(arguments: [], status: result.status, stdout: result.stdout, stderr: result.stderr)
            #expect(run.status == 64, "\(run)")
            #expect(run.lines.count == 3, "\(run)")
            try await sim.expectClean()
        }
    }

    @Test("scan piped into get-battery --from -")
    func scanIntoGetBattery() async throws {
        try await Sim.with { sim in
            let blectl = BlectlBinary.path
            let script = "'\(blectl)' scan --service 180f --count 2 --timeout 30 | '\(blectl)' get-battery --from -"
            let simulator = sim.simulator
            let r = try await offThread { simulator.run("/bin/sh", ["-c", script]) }
            let run = Run(arguments: ["sh", "-c", script], status: r.status, stdout: r.stdout, stderr: r.stderr)
            #expect(run.status == 0, "\(run)")
            #expect(run.stderr == "")
            #expect(Self.byAddress(run) == [
                World.probe: ["address": .string(World.probe), "percentage": 87, "source": "battery1"],
                World.gattBattery: ["address": .string(World.gattBattery), "percentage": 55, "source": "gatt"],
            ])
            try await sim.expectClean()
        }
    }

    @Test("--overall-timeout: a timed_out line for every device still pending, started or waiting; 124")
    func overallLimit() async throws {
        try await Sim.with { sim in
            let absent = ["C0:FF:EE:00:00:97", "C0:FF:EE:00:00:98", "C0:FF:EE:00:00:99"]
            let started = ContinuousClock.now
            let run = await sim.blectl(["get-battery", World.probe] + absent + ["--parallel", "2", "--timeout", "60", "--overall-timeout", "6"])
            #expect(ContinuousClock.now - started < .seconds(40), "the overall limit did not end the run")
            #expect(run.status == 124, "\(run)")
            let lines = Self.byAddress(run)
            #expect(lines.count == 4, "\(run)")
            #expect(lines[World.probe]?["percentage"] == 87)
            for address in absent {
                let error = try #require(Self.error(of: lines[address]), "no line for \(address)")
                #expect(error["code"] == "timed_out")
                #expect(error["exit_status"] == 124)
                #expect(error["address"] == .string(address))
                #expect(error["message"] == .string("timed out: \(address) was not done when --overall-timeout 6 s ended the run"))
            }
            try await sim.expectClean()
        }
    }

    @Test("SIGINT mid-run: 130, the lines printed whole, every device in progress cleaned up")
    func interrupted() async throws {
        // probe's level comes from Battery1, gattBattery's from a read that is never answered.
        try await Sim.with(faults: ["read_never_answers": "1"]) { sim in
            let process = try await sim.launch(["get-battery", World.probe, World.gattBattery, World.missing,
                                                "--parallel", "3", "--timeout", "60"])
            #expect(await process.stdoutContains(#""address":"C0:FF:EE:00:00:01","percentage":87"#), "probe's line never came")
            try #expect(await sim.waitForState { !$0.pendingGATT.isEmpty && !$0.discoverySessions.isEmpty },
                        "no read pending and no discovery at once")
            process.sendSignal(SIGINT)
            let result = try await process.finish()
            try await SignalTests.expectInterrupted(result, by: SIGINT, sim: sim)
            #expect(result.stdout == #"{"address":"C0:FF:EE:00:00:01","percentage":87,"source":"battery1"}"# + "\n")
            let state = try await sim.state()
            #expect(state.connections.isEmpty)
            #expect(!state.discovering)
        }
    }
}
