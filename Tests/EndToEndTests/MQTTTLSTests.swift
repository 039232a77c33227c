// --mqtt with mqtts:// against a real TLS listener: a private mosquitto whose certificate is
// signed by a CA made for the test (OpenSSL's command line), blectl trusting that CA with
// --mqtt-cafile, mosquitto_sub reading over TLS too; and the same without the CA file (the
// system's CAs do not know it): the certificate refused, said on stderr.

import Foundation
import SimulatorHarness
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite("--mqtt over TLS")
struct MQTTTLSTests {
    /// A CA, a certificate for 127.0.0.1 it signed, and a mosquitto TLS listener using them.
    struct TLSBroker {
        let directory: URL
        let reservation: ReservedPort
        let process: RunningProcess
        var port: Int { reservation.port }
        var caFile: String { directory.appendingPathComponent("ca.pem").path }

        static func start() async throws -> TLSBroker {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("blectl-mqtts-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let file = { (name: String) in directory.appendingPathComponent(name).path }
            try "subjectAltName=IP:127.0.0.1\n".write(toFile: file("san.cnf"), atomically: true, encoding: .utf8)
            let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
            for arguments in [
                ["req", "-x509"] + ec + ["-keyout", file("ca.key"), "-out", file("ca.pem"), "-days", "2", "-subj", "/CN=blectl test CA"],
                ["req"] + ec + ["-keyout", file("server.key"), "-out", file("server.csr"), "-subj", "/CN=127.0.0.1"],
                ["x509", "-req", "-in", file("server.csr"), "-CA", file("ca.pem"), "-CAkey", file("ca.key"), "-CAcreateserial",
                 "-out", file("server.pem"), "-days", "2", "-extfile", file("san.cnf")],
            ] {
                let run = try await offThread { try runChild("/usr/bin/openssl", arguments, environment: [:], timeout: .seconds(30)) }
                guard run.status == 0 else { throw HarnessError.simulatorDidNotStart("openssl \(arguments[0]): \(run.stderr)") }
            }
            // mosquitto started as root reads its files as the mosquitto user.
            for name in ["ca.pem", "server.pem", "server.key"] { chmod(file(name), 0o644) }
            chmod(directory.path, 0o755)
            let reservation = try ReservedPort()
            let port = reservation.port
            try """
                listener \(port) 127.0.0.1
                allow_anonymous true
                persistence false
                cafile \(file("ca.pem"))
                certfile \(file("server.pem"))
                keyfile \(file("server.key"))
                log_dest stderr

                """.write(toFile: file("mosquitto.conf"), atomically: true, encoding: .utf8)
            let process = try launchChild(MQTTBroker.mosquitto, ["-c", file("mosquitto.conf")], environment: [:])
            guard await eventually(within: .seconds(20), { MQTTBroker.accepts(port: port) }) else {
                process.sendSignal(SIGKILL)
                throw HarnessError.simulatorDidNotStart("mosquitto (TLS) did not listen: \(process.currentStderr)")
            }
            return TLSBroker(directory: directory, reservation: reservation, process: process)
        }

        /// mosquitto_sub over TLS on `topic`, once subscribed (it prints `count` messages).
        func subscribe(_ topic: String) throws -> MQTTCollector {
            MQTTCollector(process: try launchChild(MQTTBroker.mosquittoSub, [
                "-h", "127.0.0.1", "-p", "\(port)", "--cafile", caFile, "-q", "1", "-t", topic, "-F", "%r %t %p",
            ], environment: [:]))
        }

        func stop() {
            process.sendSignal(SIGTERM)
            _ = process.wait(timeout: .seconds(10))
            try? FileManager.default.removeItem(at: directory)
        }
    }

    @Test("mqtts:// with --mqtt-cafile: every record over TLS on its topic, the status online then offline")
    func publishesOverTLS() async throws {
        let broker = try await TLSBroker.start()
        defer { broker.stop() }
        try await Sim.with { sim in
            let url = "mqtts://127.0.0.1:\(broker.port)/tls"
            let run = await sim.blectl(["scan", "--timeout", "3", "--mqtt", url, "--mqtt-cafile", broker.caFile, "--mqtt-gateway", "hall"])
            #expect(run.status == 0, "\(run)")
            #expect(run.stderr.contains(#"{"event":"mqtt","message":"connected to \#(url) as gateway hall"}"#), "\(run.stderr)")
            #expect(run.stderr.contains(#""event":"mqtt_summary","dropped":0,"unacknowledged":0"#), "\(run.stderr)")
            let lines = run.lines
            #expect(Set(lines.compactMap(MQTTTests.address)) == Set(World.known + World.fillers), "\(run)")
            // Published retained: what the broker holds reaches a subscriber that came late.
            let snapshot = try broker.subscribe("tls/#")
            defer { snapshot.stop() }
            #expect(await snapshot.wait { $0.count >= lines.count + 1 }, "\(snapshot.messages)")
            #expect(snapshot.messages.payloads(on: "tls/hall/status") == ["offline"])
            for line in lines {
                let address = try #require(MQTTTests.address(line))
                #expect(snapshot.messages.payloads(on: "tls/hall/\(address)/advertisement") == [line])
            }
            try await sim.expectClean()
        }
    }

    @Test("mqtts:// without the CA file: the broker's certificate refused (OpenSSL's reason on stderr), never connected, the scan as without --mqtt")
    func untrustedCertificateIsReported() async throws {
        let broker = try await TLSBroker.start()
        defer { broker.stop() }
        try await Sim.with { sim in
            let run = await sim.blectl(["scan", "--timeout", "3", "--mqtt", "mqtts://127.0.0.1:\(broker.port)/tls"])
            // Before, 64 (a usage error) and no scan: libmosquitto's first connect did the
            // handshake at once and its MOSQ_ERR_TLS was taken for a configuration error.
            #expect(run.status == 0, "\(run)")
            #expect(Set(run.lines.compactMap(MQTTTests.address)) == Set(World.known + World.fillers), "\(run)")
            let messages = run.stderr.split(separator: "\n").compactMap { J.parse(String($0)) }
                .filter { $0["event"] == "mqtt" }.compactMap { $0["message"]?.string }
            #expect(messages.contains { $0.contains("OpenSSL Error") && $0.contains("certificate verify failed") }, "\(run.stderr)")
            #expect(!messages.contains { $0.hasPrefix("connected") }, "\(run.stderr)")
            try await sim.expectClean()
        }
    }
}
