import Foundation
import Testing
@testable import DBusKit
import SimulatorHarness

/// A call sent after `export` returns is answered by the exported handler, even when the
/// exporting connection's queue read that call in a turn enqueued before the export (its
/// read source fired for NameAcquired at start-up and ran late, on a busy machine): the
/// export must not wait for the queue. Two loops run at once, so that the queues are late.
@Suite struct ExportOrderTests {
    @Test(arguments: [1, 2])
    func aCallAfterExportFindsTheObject(loop: Int) async throws {
        let bus = try await PrivateBus.start()
        var unknown: [String] = []
        for _ in 0..<120 {
            let a = try await BusConnection.connect(to: bus.address)
            let b = try await BusConnection.connect(to: bus.address)
            b.export("/org/blectl/Export") { _ in .values([.string("here")]) }
            do {
                let reply = try await a.call(MethodCall(destination: b.uniqueName, path: "/org/blectl/Export",
                                                        interface: "org.blectl.Export", member: "Ping"), timeout: .seconds(10))
                #expect(reply.body == [.string("here")])
            } catch {
                unknown.append("\(error)")
            }
            a.close()
            b.close()
        }
        #expect(unknown == [])
    }
}
