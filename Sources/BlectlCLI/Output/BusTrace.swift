import BlueZKit
import DBusKit

/// `-v`/`--verbose`: the D-Bus trace on stderr, one line per message, as the session's
/// connection sends and receives them (``SessionObserver``).
///
///     +0.000412 · connecting to unix:path=/var/run/dbus/system_bus_socket
///     +0.001105 · connected to unix:path=/var/run/dbus/system_bus_socket as :1.42
///     +0.004127 → call #5 org.bluez /org/bluez/hci0 org.bluez.Adapter1.StartDiscovery()
///     +0.004912 ← return #5 (0.8 ms)
///     +0.005120 ← signal :1.3 /org/bluez/hci0 org.freedesktop.DBus.Properties.PropertiesChanged("org.bluez.Adapter1", {Discovering: true}, [])
///     +0.006001 ← error #6 (1.1 ms) org.bluez.Error.InProgress "Operation already in progress"
///     +0.007000 ← signal :1.9 /org/bluez/hci0/dev_C0_FF_EE_00_00_01 org.freedesktop.DBus.Properties.PropertiesChanged(...) (dropped: sender :1.9 is not org.bluez's owner :1.3)
///
/// The time is seconds on the monotonic clock since blectl started; `→` is what blectl
/// sends, `←` what it receives; `#n` is the call's serial, which its reply repeats, with the
/// latency. Level 1 shows every call, reply and error, and the signals the session acted
/// on; level 2 adds every other signal received, with why it was dropped or ignored, and
/// shows values in full (level 1 cuts a message's values at ``level1ValueLimit``
/// characters). The man page documents the format.
final class BusTrace: SessionObserver {
    /// Characters of values shown per message at level 1 (GetManagedObjects is large).
    static let level1ValueLimit = 240

    let start: ContinuousClock.Instant
    let level: Int
    /// Set by ``finish()``; writing happens under this lock, so nothing is written after it.
    private let finished = Lock(false)

    init(level: Int, start: ContinuousClock.Instant) {
        self.level = level
        self.start = start
    }

    /// The first line, before anything is on the wire: the bus address being connected to,
    /// so that a bus that refuses or never answers is named before the error. The address is
    /// as the environment gave it, unchecked: control characters are shown as `?`, so that
    /// it stays one line.
    func connecting(to address: String) {
        emit(.now, "· connecting to \(Records.printable(address))")
    }

    func observe(_ event: BusEvent, at time: ContinuousClock.Instant) {
        switch event {
        case .connected(let address, let uniqueName):
            emit(time, "· connected to \(Records.printable(address)) as \(Records.printable(uniqueName))")
        case .call(let call, let serial, let expectsReply):
            emit(time, "→ call #\(serial) \(call.destination) \(call.path) \(call.interface).\(call.member)(\(values(call.arguments)))"
                 + (expectsReply ? "" : " (no reply wanted)"))
        case .callNotSent(let call, let error):
            emit(time, "✗ call \(call.destination) \(call.path) \(call.interface).\(call.member)(\(values(call.arguments))) not sent: \(error)")
        case .reply(let reply, let latency, let abandoned):
            let serial = reply.replySerial.map { "#\($0)" } ?? "#?"
            let timing = "(\(Self.milliseconds(latency))\(abandoned ? ", given up on: dropped" : ""))"
            if reply.kind == .error {
                emit(time, "← error \(serial) \(timing) \(reply.errorName ?? "?") \(quoted(reply.errorMessage))")
            } else {
                emit(time, "← return \(serial) \(timing)" + (reply.body.isEmpty ? "" : " \(values(reply.body))"))
            }
        case .signal(let signal, let routed):
            // Routed signals are shown with what the session made of them (below).
            guard !routed, level >= 2 else { return }
            emit(time, signalLine(signal) + " (dropped: matches none of blectl's rules)")
        case .emitted(let signal):
            emit(time, "→ signal \(signal.path) \(signal.interface).\(signal.member)(\(values(signal.arguments)))")
        case .incomingCall(let call):
            emit(time, "← call #\(call.serial) \(call.sender ?? "?") \(call.path?.rawValue ?? "?") "
                 + "\(call.interface ?? "?").\(call.member ?? "?")(\(values(call.body)))")
        case .answered(let call, let reply):
            switch reply {
            case .values(let body): emit(time, "→ return #\(call.serial)" + (body.isEmpty ? "" : " \(values(body))"))
            case .error(let name, let message): emit(time, "→ error #\(call.serial) \(name) \(quoted(message))")
            case .noReply: break
            }
        case .closed:
            emit(time, "· connection closed")
        }
    }

    func session(received signal: Message, _ fate: SignalFate, at time: ContinuousClock.Instant) {
        let why: String
        switch fate {
        case .applied:
            emit(time, signalLine(signal))
            return
        case .unchanged: why = "ignored: changes nothing blectl keeps"
        case .notFromBlueZ(let sender, let owner?): why = "dropped: sender \(sender ?? "?") is not org.bluez's owner \(owner)"
        case .notFromBlueZ(let sender, nil): why = "dropped: sender \(sender ?? "?"), and org.bluez has no owner"
        case .notFromBusDaemon(let sender): why = "dropped: sender \(sender ?? "?") is not the bus daemon"
        }
        guard level >= 2 else { return }
        emit(time, signalLine(signal) + " (\(why))")
    }

    // MARK: - Lines

    private func signalLine(_ signal: Message) -> String {
        "← signal \(signal.sender ?? "?") \(signal.path?.rawValue ?? "?") \(signal.interface ?? "?").\(signal.member ?? "?")(\(values(signal.body)))"
    }

    private func emit(_ time: ContinuousClock.Instant, _ text: String) {
        let line = "+" + Self.seconds(time - start) + " " + text + "\n"
        finished.withLock { finished in
            if !finished { Printer.write(line, to: .stderr) }
        }
    }

    /// Ends the trace: nothing is written once this returns (the command is over; its result
    /// or error comes next, last on stderr).
    func finish() {
        finished.withLock { $0 = true }
    }

    private func quoted(_ text: String) -> String { JSONValue.string(text).serialized() }

    /// The values in short form, comma-separated; at level 1, cut after ``level1ValueLimit``
    /// characters with `…`.
    private func values(_ values: [DBusValue]) -> String {
        var out = ""
        let limit = level >= 2 ? Int.max : Self.level1ValueLimit
        for (index, value) in values.enumerated() {
            if index > 0 { out += ", " }
            Self.shortForm(value, into: &out, limit: limit)
            if out.utf8.count > limit { break }
        }
        if out.utf8.count > limit {
            out = String(out.prefix(limit)) + "…"
        }
        return out
    }

    /// One value in short form: strings quoted (JSON escapes), byte arrays as hex
    /// (`0x0102ff`), arrays `[a, b]`, dictionaries `{key: value}` (string keys bare),
    /// structures `(a, b)`, variants as their value, object paths bare. Stops adding once
    /// `out` is past `limit`.
    static func shortForm(_ value: DBusValue, into out: inout String, limit: Int) {
        guard out.utf8.count <= limit else { return }
        switch value {
        case .byte(let v): out += String(v)
        case .boolean(let v): out += v ? "true" : "false"
        case .int16(let v): out += String(v)
        case .uint16(let v): out += String(v)
        case .int32(let v): out += String(v)
        case .uint32(let v): out += String(v)
        case .int64(let v): out += String(v)
        case .uint64(let v): out += String(v)
        case .double(let v): out += String(v)
        case .string(let v): out += JSONValue.string(v).serialized()
        case .objectPath(let v): out += v.rawValue
        case .signature(let v): out += "g" + JSONValue.string(v).serialized()
        case .unixFD(let v): out += "fd \(v.fileDescriptor.map(String.init) ?? "-")"
        case .bytes(let v): out += v.isEmpty ? "[]" : "0x" + v.hexString
        case .array(_, let elements): sequence(elements, "[", "]", into: &out, limit: limit)
        case .dictionary(_, _, let entries):
            out += "{"
            for (index, entry) in entries.enumerated() {
                if index > 0 { out += ", " }
                if case .string(let key) = entry.key, key.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != 0x22 && $0 != 0x3A }) {
                    out += key
                } else {
                    shortForm(entry.key, into: &out, limit: limit)
                }
                out += ": "
                shortForm(entry.value, into: &out, limit: limit)
                if out.utf8.count > limit { return }
            }
            out += "}"
        case .structure(let fields): sequence(fields, "(", ")", into: &out, limit: limit)
        case .variant(let inner): shortForm(inner, into: &out, limit: limit)
        }
    }

    /// `values` comma-separated between `open` and `close` (an array's elements, a
    /// structure's fields); stops once `out` is past `limit` (`utf8.count` of a native
    /// string is O(1), so the check per element costs nothing).
    private static func sequence(_ values: [DBusValue], _ open: String, _ close: String, into out: inout String, limit: Int) {
        out += open
        for (index, value) in values.enumerated() {
            if index > 0 { out += ", " }
            shortForm(value, into: &out, limit: limit)
            if out.utf8.count > limit { return }
        }
        out += close
    }

    /// `1.234567`: seconds with microseconds.
    static func seconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        let micros = max(0, attoseconds / 1_000_000_000_000)
        let fraction = String(micros)
        return "\(max(0, seconds)).\(String(repeating: "0", count: max(0, 6 - fraction.count)))\(fraction)"
    }

    /// `0.8 ms`, `5002.1 ms`: milliseconds with one decimal.
    static func milliseconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        let tenths = seconds * 10_000 + attoseconds / 100_000_000_000_000
        return "\(tenths / 10).\(tenths % 10) ms"
    }
}
