// The pairing agent on a private bus where the test plays bluetoothd (FakeBlueZ): what it
// answers, to whom, and that it is registered and unregistered around its body.

import Testing
import DBusKit
import SimulatorHarness
@testable import BlueZKit

@Suite struct AgentTests {
    static let agentManager: ObjectPath = "/org/bluez"
    static let otherDevice: ObjectPath = "/org/bluez/hci0/dev_C0_FF_EE_00_00_02"

    /// FakeBlueZ's default world plus /org/bluez, whose methods (RegisterAgent, ...) get an
    /// empty return.
    static func start() async throws -> FakeBlueZ {
        var objects = FakeBlueZ.connectedDevice
        objects[agentManager] = [BlueZ.agentManagerInterface: [:]]
        return try await FakeBlueZ.start(objects: objects)
    }

    /// Calls a method of the agent at `path` of `session` from `caller`.
    static func ask(_ caller: BusConnection, _ session: Session, _ member: String, _ arguments: [DBusValue],
                    path: ObjectPath = "/org/blectl/agent", interface: String = BlueZ.agentInterface) async throws -> Message {
        try await caller.call(MethodCall(destination: session.connection.uniqueName, path: path, interface: interface,
                                         member: member, arguments: arguments), timeout: .seconds(10))
    }

    static func errorName(_ body: () async throws -> Message) async -> String? {
        do {
            _ = try await body()
            return nil
        } catch let error as BusError {
            return error.errorName
        } catch {
            return "\(error)"
        }
    }

    @Test func registersAnswersBluezAndUnregisters() async throws {
        let fake = try await Self.start()
        defer { fake.close() }
        let session = try await fake.session()
        defer { session.close() }
        let agent = Agent(passkey: Passkey(123_456), devices: [FakeBlueZ.device])
        #expect(agent.capability == .keyboardOnly)
        try await session.withAgent(agent, timeout: .seconds(10)) { agent in
            let register = try #require(fake.calls.withLock { $0.last })
            #expect(register.member == "RegisterAgent")
            #expect(register.interface == BlueZ.agentManagerInterface)
            #expect(register.body == [.objectPath("/org/blectl/agent"), .string("KeyboardOnly")])
            let reply = try await Self.ask(fake.connection, session, "RequestPasskey", [.objectPath(FakeBlueZ.device)])
            #expect(reply.body == [.uint32(123_456)])
            // Just Works the device started, for the device being paired: accepted.
            _ = try await Self.ask(fake.connection, session, "RequestAuthorization", [.objectPath(FakeBlueZ.device)])
            _ = try await Self.ask(fake.connection, session, "Cancel", [])
            // Another device (the agent may be the default one): refused.
            #expect(await Self.errorName { try await Self.ask(fake.connection, session, "RequestPasskey", [.objectPath(Self.otherDevice)]) }
                    == BlueZ.Error.rejected)
            #expect(await Self.errorName { try await Self.ask(fake.connection, session, "RequestAuthorization", [.objectPath(Self.otherDevice)]) }
                    == BlueZ.Error.rejected)
            // Nobody can compare numbers, and blectl authorizes no incoming service.
            #expect(await Self.errorName { try await Self.ask(fake.connection, session, "RequestConfirmation", [.objectPath(FakeBlueZ.device), .uint32(1)]) }
                    == BlueZ.Error.rejected)
            #expect(await Self.errorName { try await Self.ask(fake.connection, session, "AuthorizeService", [.objectPath(FakeBlueZ.device), .string("180f")]) }
                    == BlueZ.Error.rejected)
            #expect(await Self.errorName { try await Self.ask(fake.connection, session, "RequestPinCode", [.objectPath(FakeBlueZ.device)]) }
                    == BlueZ.Error.rejected)
            #expect(await Self.errorName { try await Self.ask(fake.connection, session, "Frobnicate", []) } == DBusErrorName.unknownMethod)
            #expect(await Self.errorName { try await Self.ask(fake.connection, session, "RequestPasskey", [.string("not a path")]) }
                    == DBusErrorName.unknownMethod)
            #expect(agent.requests.map(\.method) == ["RequestPasskey", "RequestAuthorization", "Cancel", "RequestPasskey", "RequestAuthorization",
                                                     "RequestConfirmation", "AuthorizeService", "RequestPinCode", "Frobnicate", "RequestPasskey"])
            #expect(agent.requests.map(\.accepted) == [true, true, true, false, false, false, false, false, false, false])
            #expect(agent.requests.allSatisfy { $0.sender == fake.connection.uniqueName })
        }
        let members = fake.calls.withLock { $0.map(\.member) }
        #expect(members.suffix(2) == ["RegisterAgent", "UnregisterAgent"])
        #expect(fake.calls.withLock { $0.last?.body } == [.objectPath("/org/blectl/agent")])
        // No longer exported.
        #expect(await Self.errorName { try await Self.ask(fake.connection, session, "RequestPasskey", [.objectPath(FakeBlueZ.device)]) }
                == DBusErrorName.unknownObject)
    }

    @Test("calls from anyone but org.bluez's owner are rejected, whatever the method")
    func impostorRejected() async throws {
        let fake = try await Self.start()
        defer { fake.close() }
        let session = try await fake.session()
        defer { session.close() }
        let impostor = try await BusConnection.connect(to: fake.bus.address)
        defer { impostor.close() }
        let agent = Agent(passkey: Passkey(123_456))
        try await session.withAgent(agent, timeout: .seconds(10)) { agent in
            for (member, arguments) in [("RequestPasskey", [DBusValue.objectPath(FakeBlueZ.device)]), ("Release", []), ("Cancel", []),
                                        ("RequestAuthorization", [.objectPath(FakeBlueZ.device)])] {
                let answer = await Self.errorName { try await Self.ask(impostor, session, member, arguments) }
                #expect(answer == BlueZ.Error.rejected, "\(member)")
            }
            #expect(!agent.isReleased)
            #expect(agent.requests.allSatisfy { !$0.accepted && $0.sender == impostor.uniqueName })
            // bluetoothd itself is still answered.
            try #expect(await Self.ask(fake.connection, session, "RequestPasskey", [.objectPath(FakeBlueZ.device)]).body == [.uint32(123_456)])
        }
    }

    @Test func withoutPasskeyNoInputNoOutputAndNoPasskey() async throws {
        let fake = try await Self.start()
        defer { fake.close() }
        let session = try await fake.session()
        defer { session.close() }
        let agent = Agent(path: "/org/blectl/agent2")
        #expect(agent.capability == .noInputNoOutput)
        try await session.withAgent(agent, timeout: .seconds(10)) { _ in
            #expect(fake.calls.withLock { $0.last?.body } == [.objectPath("/org/blectl/agent2"), .string("NoInputNoOutput")])
            #expect(await Self.errorName {
                try await Self.ask(fake.connection, session, "RequestPasskey", [.objectPath(FakeBlueZ.device)], path: "/org/blectl/agent2")
            } == BlueZ.Error.rejected)
            _ = try await Self.ask(fake.connection, session, "Release", [], path: "/org/blectl/agent2")
            #expect(agent.isReleased)
        }
    }

    @Test("a body that throws or is cancelled still unregisters the agent")
    func unregistersOnFailureAndCancellation() async throws {
        let fake = try await Self.start()
        defer { fake.close() }
        let session = try await fake.session()
        defer { session.close() }
        struct Boom: Error {}
        await #expect(throws: Boom.self) {
            try await session.withAgent(Agent(), timeout: .seconds(10)) { _ in throw Boom() }
        }
        #expect(fake.calls.withLock { $0.map(\.member).suffix(2) } == ["RegisterAgent", "UnregisterAgent"])
        let task = Task {
            try await session.withAgent(Agent(), timeout: .seconds(10)) { _ in try await Task.sleep(for: .seconds(30)) }
        }
        #expect(await eventually { fake.calls.withLock { $0.count } == 3 })
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        // Sent (and flushed) though the task is cancelled; not waited for.
        #expect(await eventually { fake.calls.withLock { $0.count } == 4 })
        #expect(fake.calls.withLock { $0.map(\.member) } == ["RegisterAgent", "UnregisterAgent", "RegisterAgent", "UnregisterAgent"])
    }

    @Test("RegisterAgent refused: the error names the agent operation, nothing stays exported")
    func registerRefused() async throws {
        var objects = FakeBlueZ.connectedDevice
        objects[Self.agentManager] = [BlueZ.agentManagerInterface: [:]]
        let fake = try await FakeBlueZ.start(objects: objects) { call in
            call.member == "RegisterAgent" ? .error(name: BlueZ.Error.alreadyExists, message: "Already Exists") : .values([])
        }
        defer { fake.close() }
        let session = try await fake.session()
        defer { session.close() }
        do {
            _ = try await session.withAgent(Agent(), timeout: .seconds(10)) { _ in Issue.record("body ran") }
            Issue.record("no error")
        } catch let error as BLEError {
            #expect(error == .failed(BLEOperation(.agent), dbusError: BlueZ.Error.alreadyExists, message: "Already Exists"))
        }
        #expect(fake.calls.withLock { $0.map(\.member) } == ["RegisterAgent"])
        #expect(await Self.errorName { try await Self.ask(fake.connection, session, "Cancel", []) } == DBusErrorName.unknownObject)
    }

    @Test("passkeys: 0 to 999999, shown with six digits", arguments: [
        (UInt32(0), "000000"), (42, "000042"), (123_456, "123456"), (999_999, "999999"),
    ])
    func passkeys(value: UInt32, shown: String) {
        #expect(Passkey(value)?.description == shown)
    }

    @Test func passkeyAboveSixDigitsIsNone() {
        #expect(Passkey(1_000_000) == nil)
        #expect(Passkey(.max) == nil)
    }
}
