// `--mqtt`: blectl's records published to a real mosquitto broker, collected with mosquitto_sub.

import Foundation
import SimulatorHarness
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite("blectl --mqtt")
struct MQTTTests {
    /// Runs `body` with a broker, stopped afterwards whatever happens.
    static func withBroker<T: Sendable>(_ body: (MQTTBroker) async throws -> T) async throws -> T {
        let broker = try await MQTTBroker.start()
        defer { broker.stop() }
        return try await body(broker)
    }

    /// The address of a scan line.
    static func address(_ line: String) -> String? { J.parse(line)?["address"]?.string }

    @Test("scan: each device's record on its own topic, retained, the same line stdout has; status online then offline")
    func scanPublishesEachDevice() async throws {
        try await Self.withBroker { broker in
            try await Sim.with { sim in
                let collector = try await broker.collector("home/#")
                defer { collector.stop() }
                let run = await sim.blectl(["scan", "--timeout", "3", "--mqtt", broker.url(prefix: "home"), "--mqtt-gateway", "hall"])
                #expect(run.status == 0, "\(run)")
                let lines = run.lines
                #expect(Set(lines.compactMap(Self.address)) == Set(World.known + World.fillers), "\(run)")
                #expect(await collector.wait { $0.payloads(on: "home/hall/status") == ["online", "offline"] }, "\(collector.messages)")
                let messages = collector.messages
                for line in lines {
                    let address = try #require(Self.address(line))
                    #expect(messages.payloads(on: "home/hall/\(address)/advertisement") == [line])
                }
                let topics = Set(messages.map(\.topic)).subtracting(["blectl-test/subscribed"])
                #expect(topics == Set(lines.compactMap(Self.address).map { "home/hall/\($0)/advertisement" } + ["home/hall/status"]))
                // What a collector arriving later gets: the last state of each, retained.
                let snapshot = try await broker.retained("home/#", count: lines.count + 1)
                #expect(snapshot.allSatisfy { $0.retained })
                #expect(snapshot.payloads(on: "home/hall/status") == ["offline"])
                #expect(Set(snapshot.map(\.payload)) == Set(lines + ["offline"]))
                #expect(run.stderr.contains(#""event":"mqtt_summary","dropped":0,"unacknowledged":0"#), "\(run)")
                try await sim.expectClean()
            }
        }
    }

    @Test("notify: each value's record on ADDRESS/CHARACTERISTIC/value, in order, the last one retained")
    func notifyPublishesEachValue() async throws {
        try await Self.withBroker { broker in
            try await Sim.with(faults: ["notify_burst": "5", "notify_burst_char": "2a19"]) { sim in
                let collector = try await broker.collector("blectl/#")
                defer { collector.stop() }
                let run = await sim.blectl(["notify", World.gattBattery, "2a19", "--count", "5", "--timeout", "20",
                                            "--mqtt", "mqtt://127.0.0.1:\(broker.port)", "--mqtt-gateway", "desk"])
                #expect(run.status == 0, "\(run)")
                #expect(run.lines.count == 5, "\(run)")
                let topic = "blectl/desk/\(World.gattBattery)/2a19/value"
                #expect(await collector.wait { $0.payloads(on: "blectl/desk/status").last == "offline" }, "\(collector.messages)")
                #expect(collector.messages.payloads(on: topic) == run.lines)
                #expect(collector.messages.compactMap { $0.topic == topic ? $0.json?["seq"]?.int : nil } == [1, 2, 3, 4, 5])
                let retained = try await broker.retained(topic, count: 1)
                #expect(retained.map(\.payload) == [run.lines.last ?? ""])
                try await sim.expectClean()
            }
        }
    }

    @Test("scan --lost-after: the device's presence topic says online when it is printed, offline when lost, online when back")
    func presenceTopic() async throws {
        try await Self.withBroker { broker in
            try await Sim.with { sim in
                let collector = try await broker.collector("yard/#")
                defer { collector.stop() }
                let topic = "yard/shed/\(World.probe)/presence"
                let blectl = try await sim.launch(["scan", "--lost-after", "2", "--address", World.probe, "--timeout", "60",
                                                   "--mqtt", broker.url(prefix: "yard"), "--mqtt-gateway", "shed"])
                #expect(await collector.wait { $0.payloads(on: topic) == ["online"] }, "\(collector.messages)")
                try await sim.setDeviceFault(World.probe, "silent")
                #expect(await collector.wait { $0.payloads(on: topic) == ["online", "offline"] }, "\(collector.messages)")
                try await sim.setDeviceFault(World.probe, "silent", on: false)
                #expect(await collector.wait { $0.payloads(on: topic) == ["online", "offline", "online"] }, "\(collector.messages)")
                blectl.sendSignal(SIGINT)
                let result = try await blectl.finish()
                #expect(result.status == 130, "\(result.stderr)")
                // The lost line went to stdout only: the advertisement topic has the records.
                let records = collector.messages.payloads(on: "yard/shed/\(World.probe)/advertisement").compactMap(J.parse)
                #expect(records.count == 2 && records.allSatisfy { $0["event"] == nil }, "\(collector.messages)")
                #expect(try await broker.retained(topic, count: 1).map(\.payload) == ["online"])
                try await sim.expectClean()
            }
        }
    }

    @Test("SIGKILL: the broker publishes the last will, offline, retained")
    func lastWillOnKill() async throws {
        try await Self.withBroker { broker in
            try await Sim.with { sim in
                let collector = try await broker.collector("blectl/#")
                defer { collector.stop() }
                let blectl = try await sim.launch(["scan", "--timeout", "inf", "--mqtt", broker.url(prefix: "blectl"),
                                                   "--mqtt-gateway", "attic", "--mqtt-keepalive", "5"])
                #expect(await collector.wait { $0.payloads(on: "blectl/attic/status") == ["online"] }, "\(collector.messages)")
                #expect(await collector.wait { $0.contains { $0.topic.hasSuffix("/advertisement") } })
                blectl.sendSignal(SIGKILL)
                _ = try await blectl.finish()
                #expect(await collector.wait { $0.payloads(on: "blectl/attic/status") == ["online", "offline"] }, "\(collector.messages)")
                let retained = try await broker.retained("blectl/attic/status", count: 1)
                #expect(retained == [MQTTMessage(retained: true, topic: "blectl/attic/status", payload: "offline")])
            }
        }
    }

    @Test("a broker restarted mid-run: blectl reconnects by itself, online again, and publishes on")
    func brokerRestarted() async throws {
        try await Self.withBroker { broker in
            try await Sim.with { sim in
                let blectl = try await sim.launch(["scan", "--timeout", "inf", "--updates", "--mqtt", broker.url(prefix: "blectl"),
                                                   "--mqtt-gateway", "cellar"])
                var collector = try await broker.collector("blectl/#")
                #expect(await collector.wait { $0.payloads(on: "blectl/cellar/status") == ["online"] }, "\(collector.messages)")
                collector.stop()
                // The broker goes (and forgets every retained message), then comes back.
                try await broker.restart()
                collector = try await broker.collector("blectl/#")
                defer { collector.stop() }
                // blectl reconnects by itself: online again, and new records.
                #expect(await collector.wait { $0.payloads(on: "blectl/cellar/status") == ["online"] }, "\(collector.messages)")
                #expect(await collector.wait { $0.contains { $0.topic == "blectl/cellar/\(World.probe)/advertisement" } },
                        "\(collector.messages)")
                #expect(await blectl.signalAndWaitUntilTaken(SIGINT))
                let result = try await blectl.finish()
                #expect(result.status == 128 + SIGINT, "\(result.stderr)")
                #expect(await collector.wait { $0.payloads(on: "blectl/cellar/status") == ["online", "offline"] }, "\(collector.messages)")
                #expect(result.stderr.contains(#""dropped":0"#), "\(result.stderr)")
                try await sim.expectClean()
            }
        }
    }

    @Test("a broker that comes up after blectl started: blectl connects to it then, online, and publishes")
    func brokerUpLater() async throws {
        try await Self.withBroker { broker in
            broker.pause()
            try await Sim.with { sim in
                let blectl = try await sim.launch(["scan", "--timeout", "inf", "--updates", "--mqtt", broker.url(prefix: "blectl"),
                                                   "--mqtt-gateway", "porch"])
                #expect(await eventually(within: .seconds(30)) { blectl.currentStderr.contains("cannot reach") }, "\(blectl.currentStderr)")
                try await broker.restart()
                let collector = try await broker.collector("blectl/#")
                defer { collector.stop() }
                #expect(await collector.wait { $0.payloads(on: "blectl/porch/status").contains("online") }, "\(collector.messages)")
                #expect(await collector.wait { $0.contains { $0.topic == "blectl/porch/\(World.probe)/advertisement" } },
                        "\(collector.messages)")
                #expect(await blectl.signalAndWaitUntilTaken(SIGINT))
                let result = try await blectl.finish()
                #expect(result.status == 128 + SIGINT, "\(result.stderr)")
                try await sim.expectClean()
            }
        }
    }

    @Test("no broker at all: the scan runs and prints as without --mqtt; records beyond --mqtt-queue are dropped and counted")
    func noBroker() async throws {
        // A port nobody listens on: a broker's, once stopped.
        let broker = try await MQTTBroker.start()
        broker.stop()
        try await Sim.with { sim in
            let run = await sim.blectl(["scan", "--timeout", "2", "--mqtt", broker.url(prefix: "blectl"), "--mqtt-queue", "3"])
            #expect(run.status == 0, "\(run)")
            let devices = run.lines.compactMap(Self.address)
            #expect(Set(devices) == Set(World.known + World.fillers), "\(run)")
            #expect(run.stderr.contains("cannot reach mqtt://127.0.0.1:\(broker.port)/blectl: "), "\(run)")
            #expect(run.stderr.hasSuffix(#"{"event":"mqtt_summary","dropped":\#(devices.count - 3),"unacknowledged":3}"# + "\n"), "\(run)")
            try await sim.expectClean()
        }
    }

    @Test("mqtts with a CA file libmosquitto cannot load: 64, before anything is asked of bluetoothd")
    func unreadableCAFile() async throws {
        try await Sim.with { sim in
            let run = await sim.blectl(["scan", "--mqtt", "mqtts://127.0.0.1/x", "--mqtt-cafile", "/nonexistent/ca.pem"])
            #expect(run.status == 64, "\(run)")
            #expect(run.stdout == "")
            #expect(run.jsonError()?["message"]?.string?.hasPrefix("--mqtt: TLS with /nonexistent/ca.pem: ") == true, "\(run)")
            let calls = try await sim.calls()
            #expect(!calls.contains { $0.member.contains("Discovery") }, "\(calls)")
        }
    }

    @Test("mqtts to a plain listener: the failed TLS handshake said on stderr (OpenSSL's reason), not tried again; the scan as without --mqtt")
    func tlsHandshakeFailureIsReported() async throws {
        try await Self.withBroker { broker in
            try await Sim.with { sim in
                let run = await sim.blectl(["scan", "--timeout", "3", "--mqtt", "mqtts://127.0.0.1:\(broker.port)/x"])
                #expect(run.status == 0, "\(run)")
                #expect(Set(run.lines.compactMap(Self.address)) == Set(World.known + World.fillers), "\(run)")
                let events = run.stderr.split(separator: "\n").compactMap { J.parse(String($0)) }
                let messages = events.filter { $0["event"] == "mqtt" }.compactMap { $0["message"]?.string }
                // Before, nothing was said: libmosquitto ends its thread on a TLS error
                // without a disconnect callback.
                #expect(messages.contains { $0.hasPrefix("mqtts://127.0.0.1:\(broker.port)/x: OpenSSL Error") }, "\(run.stderr)")
                #expect(!messages.contains { $0.hasPrefix("connected") }, "\(run.stderr)")
                #expect(events.last?["event"] == "mqtt_summary", "\(run.stderr)")
                try await sim.expectClean()
            }
        }
    }

    @Test("a bad URL is a usage error, 64, before anything is asked of bluetoothd",
          arguments: [("http://host", "expected a URL starting with mqtt:// or mqtts://"),
                      ("mqtt://host:0", "expected a port from 1 to 65535 after the host"),
                      ("mqtt://host/a/+/b", "expected a topic prefix without the wildcards '+' and '#'")])
    func badURL(url: String, expected: String) async throws {
        try await Sim.with { sim in
            let run = await sim.blectl(["scan", "--mqtt", url])
            #expect(run.status == 64, "\(run)")
            #expect(run.stdout == "")
            #expect(run.stderr.contains("Invalid URL '\(url)' for '--mqtt': \(expected)"), "\(run)")
            let calls = try await sim.calls()
            #expect(!calls.contains { $0.member.contains("Discovery") }, "\(calls)")
        }
    }
}

@Suite("blectl --mqtt: three gateways into one broker")
struct MQTTGatewaysTests {
    @Test("every device under every gateway, each gateway's status; the one SIGKILLed leaves its will")
    func threeGateways() async throws {
        try await MQTTTests.withBroker { broker in
            try await Sim.with { first in
                try await Sim.with { second in
                    try await Sim.with { third in
                        let collector = try await broker.collector("site/#")
                        defer { collector.stop() }
                        let gateways = ["kitchen": first, "garage": second, "office": third]
                        var processes: [String: RunningProcess] = [:]
                        for (name, sim) in gateways {
                            processes[name] = try await sim.launch(["scan", "--timeout", "inf", "--mqtt", broker.url(prefix: "site"),
                                                                    "--mqtt-gateway", name])
                        }
                        let devices = World.known + World.fillers
                        let expected = Set(gateways.keys.flatMap { name in devices.map { "site/\(name)/\($0)/advertisement" } })
                        #expect(await collector.wait { messages in expected.isSubset(of: Set(messages.map(\.topic))) },
                                "\(Set(collector.messages.map(\.topic)).symmetricDifference(expected))")
                        for name in gateways.keys {
                            #expect(collector.messages.payloads(on: "site/\(name)/status") == ["online"])
                        }
                        // Each record names its address as its topic does.
                        for message in collector.messages where message.topic.hasSuffix("/advertisement") {
                            #expect(message.topic.split(separator: "/").map(String.init)[2] == message.json?["address"]?.string)
                        }
                        processes["garage"]?.sendSignal(SIGKILL)
                        _ = try await processes["garage"]?.finish()
                        #expect(await collector.wait { $0.payloads(on: "site/garage/status") == ["online", "offline"] })
                        #expect(collector.messages.payloads(on: "site/kitchen/status") == ["online"])
                        for name in ["kitchen", "office"] {
                            #expect(await processes[name]?.signalAndWaitUntilTaken(SIGTERM) == true)
                            let result = try await processes[name]?.finish()
                            #expect(result?.status == 128 + SIGTERM, "\(result?.stderr ?? "")")
                        }
                        let statuses = try await broker.retained("site/+/status", count: 3)
                        #expect(Set(statuses.map(\.topic)) == ["site/kitchen/status", "site/garage/status", "site/office/status"])
                        #expect(statuses.allSatisfy { $0.payload == "offline" && $0.retained })
                    }
                }
            }
        }
    }
}
