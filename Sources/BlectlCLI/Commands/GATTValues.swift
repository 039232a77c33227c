import BlueZKit
import DBusKit

/// The values `connect --values` reads into the GATT tree it prints: every readable
/// characteristic's (``GATTCharacteristic/isReadable``) and every descriptor's, each read
/// once, in the tree's order (by handle), with ReadValue as `read` does it.
///
/// A read that fails for the attribute alone (the device refuses it, wants pairing, answers
/// with an ATT error) is kept as that attribute's failure and the reading goes on; one that
/// means the command cannot go on (the link lost, the deadline passed, Bluetooth gone, an
/// interruption) is thrown, so no tree is printed half read as if it were whole.
struct GATTValues: Sendable, Equatable {
    /// What one read gave.
    enum Outcome: Sendable, Equatable {
        /// The value's bytes (possibly none).
        case value([UInt8])
        /// Why it could not be read: the error's sentence without the attribute's place,
        /// which the record shows already ("read not permitted: org.bluez.Error.NotPermitted:
        /// Not paired (…)").
        case failed(String)
    }

    /// The outcome of each attribute read, by its object path; an attribute not read (a
    /// characteristic that cannot be) has none.
    private(set) var outcomes: [ObjectPath: Outcome] = [:]

    init(_ outcomes: [ObjectPath: Outcome] = [:]) {
        self.outcomes = outcomes
    }

    subscript(_ path: ObjectPath) -> Outcome? { outcomes[path] }

    /// Reads the values of `services` on `connected`, each read within what is left of
    /// `context`'s deadline (`--timeout`).
    /// - Throws: what ends the command (``failsTheCommand(_:)``): ``BLEError/disconnected(_:reason:)``,
    ///   ``BLEError/timedOut(_:)``, ``BLEError/unavailable(_:during:dbusError:)``,
    ///   `CancellationError`, ...
    static func read(_ services: [GATTService], on connected: ConnectedDevice, context: CommandContext) async throws -> GATTValues {
        var values = GATTValues()
        for characteristic in services.flatMap(\.characteristics) {
            if characteristic.isReadable {
                values.outcomes[characteristic.path] = try await outcome {
                    try await connected.read(characteristic, timeout: context.remaining)
                }
            }
            for descriptor in characteristic.descriptors {
                values.outcomes[descriptor.path] = try await outcome {
                    try await connected.read(descriptor, timeout: context.remaining)
                }
            }
        }
        return values
    }

    /// The value `read` returns, or the failure it throws when that is the attribute's alone.
    private static func outcome(_ read: () async throws -> [UInt8]) async throws -> Outcome {
        do {
            return .value(try await read())
        } catch let error as BLEError where !failsTheCommand(error) {
            return .failed(sentence(error))
        }
    }

    /// The error's sentence without the place of its operation, which the tree shows:
    /// "read not permitted: org.bluez.Error.NotPermitted: Not paired (…)", not "read of
    /// characteristic … in service … on … not permitted: …".
    static func sentence(_ error: BLEError) -> String {
        guard let place = error.operation?.place, !place.isEmpty else { return error.description }
        return error.description.replacing(place, with: "", maxReplacements: 1)
    }

    /// Whether a read's failure ends the command rather than leaving the attribute without
    /// its value: what says the link, the time or Bluetooth itself is gone does; what the
    /// device or BlueZ answered about this one attribute does not.
    static func failsTheCommand(_ error: BLEError) -> Bool {
        switch error {
        case .notSupported, .notPermitted, .failed, .busy, .protocolError, .deviceProtocolError, .authenticationFailed:
            false
        case .disconnected, .timedOut, .unavailable, .permissionDenied, .deviceNotFound, .serviceReadOnly, .outcomeUnknown,
             .advertisementRejected, .released:
            true
        }
    }

    // MARK: - Records

    /// A read's members in the tree's JSON: `value` (lowercase hex), or `value` null and
    /// `value_error` (the sentence); none for an attribute not read.
    static func members(_ outcome: Outcome?) -> [(String, JSONValue)] {
        switch outcome {
        case nil: []
        case .value(let bytes)?: [("value", .string(bytes.hexString))]
        case .failed(let why)?: [("value", .null), ("value_error", .string(why))]
        }
    }

    /// A read's words after its line in the text tree: `  value: 57` (`(empty)` for no
    /// bytes), `  value_error: sentence`; empty for an attribute not read.
    static func text(_ outcome: Outcome?) -> String {
        switch outcome {
        case nil: ""
        case .value(let bytes)?: "  value: " + Records.hexForPeople(bytes)
        case .failed(let why)?: "  value_error: " + Records.printable(why)
        }
    }
}
