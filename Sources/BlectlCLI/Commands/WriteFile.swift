import BlueZKit
#if canImport(Glibc)
import Glibc
#endif

/// The streaming form of `blectl write`: `write ADDRESS CHARACTERISTIC --without-response
/// --file PATH|-` sends a file or standard input as write-without-response packets of the
/// link's largest size, and prints one record when BlueZ has taken them all.
///
/// The packets go through the socket of AcquireWrite when BlueZ grants it: one datagram is
/// one ATT Write Command of at most MTU - 3 bytes, and the socket's fullness is the link's
/// back-pressure (a packet waits for POLLOUT on a Dispatch write source, never dropped, never
/// spinning). When AcquireWrite is refused, they go by WriteValue with type "command", one
/// call per packet, each waiting for its reply. Every packet is MTU - 3 bytes but the last.
///
/// `--timeout` bounds the set-up as for every command (finding the device, connecting,
/// resolving services, AcquireWrite), and then each wait for the link to take the next
/// packet, and the final wait for BlueZ to take the last ones; reading the input has no
/// limit (a slow producer on standard input is waited for). Ctrl-C stops at once: the socket
/// is closed, a connection blectl made is taken down, and blectl ends by the signal (130).
struct WriteFile: Sendable, Equatable {
    /// `--file`: the bytes to stream.
    static let fileOption = Option<InputSource>(
        "file", valueName: "path",
        help: "Stream this file (- for standard input) as write-without-response packets of the link's maximum size (MTU - 3 bytes, 512 at most), through AcquireWrite when BlueZ grants it, else WriteValue. Needs --without-response; takes the place of <value>.",
        parser: .inputSource
    )

    /// The characteristic written, and `--service` to choose it.
    var target: GATTTarget
    /// `--file`: the file, or standard input.
    var source: InputSource
    /// `--timeout`: see the type's documentation.
    var timeout: Duration

    /// The usage rules of `--file` among write's options (exit 64 when broken).
    /// - Parameters:
    ///   - file: `--file`, if given.
    ///   - hasValue: whether `<value>` was given.
    ///   - withoutResponse: whether `--without-response` was given.
    ///   - text: whether `--text` was given.
    /// - Throws: `UsageError` for `--file` with `<value>`, with `--text`, or without
    ///   `--without-response`, and for neither `<value>` nor `--file`.
    static func checkUsage(file: InputSource?, hasValue: Bool, withoutResponse: Bool, text: Bool = false,
                           subcommand: String = "write") throws(UsageError) {
        guard file != nil else {
            if !hasValue { throw UsageError("Missing expected argument '<value>' (or --file)", subcommand: subcommand) }
            return
        }
        if hasValue { throw UsageError("Give either <value> or '--file', not both", subcommand: subcommand) }
        if text { throw UsageError("'--text' describes <value>; it does not go with '--file'", subcommand: subcommand) }
        if !withoutResponse { throw UsageError("'--file' needs '--without-response' (the stream is written without response)", subcommand: subcommand) }
        // An input that cannot be read is bad input: said before anything goes on the bus.
        if case .standardInput? = file, StandardStreams.inputWasClosed {
            throw UsageError("Cannot read '--file -': standard input is closed", subcommand: subcommand)
        }
        if case .path(let path)? = file {
            let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)   // O_NONBLOCK: a FIFO does not wait for a writer
            guard fd >= 0 else {
                throw UsageError("Cannot read '--file' \(path.quotedForMessage): \(String(cString: strerror(errno)))", subcommand: subcommand)
            }
            var info = stat()
            let isDirectory = fstat(fd, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR
            _ = Glibc.close(fd)
            if isDirectory { throw UsageError("Cannot read '--file' \(path.quotedForMessage): it is a directory", subcommand: subcommand) }
        }
    }

    /// Opens the input, connects, resolves the characteristic, streams, prints the record
    /// (before the Disconnect), disconnects what it connected.
    /// - Throws: ``InputError`` (64: the input cannot be opened, before anything is
    ///   connected; 70: a read error), the errors of
    ///   ``CommandContext/withConnectedDevice(_:_:)`` and ``GATTTarget/resolve(on:timeout:)``,
    ///   ``BLEError/disconnected(_:)`` (4) when the link drops mid-stream,
    ///   ``BLEError/timedOut(_:)`` (124) when the link takes nothing for `timeout`,
    ///   `CancellationError`.
    func run(address: BluetoothAddress, context: CommandContext) async throws {
        let input = try FileInput.open(source)
        defer { input.close() }
        let printer = context.printer
        try await context.withConnectedDevice(address) { connected in
            let characteristic = try await target.resolve(on: connected, timeout: context.remaining)
            try await connected.withWritesWithoutResponse(characteristic, timeout: context.remaining) { writer in
                let transfer = try await Self.stream(input, to: writer, stallLimit: timeout)
                let record = Self.Record(address: address, characteristic: characteristic, transfer: transfer,
                                         mtu: writer.mtu, acquired: writer.isAcquired)
                switch printer.format {
                case .json: try await printer.results([record.json.serialized()])
                case .text: try await printer.results(record.text)
                }
            }
        }
    }

    /// What one stream sent.
    struct Transfer: Sendable, Equatable {
        var bytes = 0
        var packets = 0
        var duration: Duration = .zero
    }

    /// How much of the input is read at a time.
    static let chunkSize = 64 * 1024

    /// Sends the whole input as packets of `writer.maximumValueLength` bytes (the last one
    /// shorter), in order, then waits until BlueZ has taken them all.
    static func stream(_ input: FileInput, to writer: WithoutResponseWriter, stallLimit: Duration) async throws -> Transfer {
        let started = ContinuousClock.now
        let size = writer.maximumValueLength
        var transfer = Transfer()
        var pending: [UInt8] = []
        while true {
            let chunk = try await input.read(upTo: chunkSize)
            if chunk.isEmpty { break }
            pending.append(contentsOf: chunk)
            var start = 0
            while pending.count - start >= size {
                try await writer.write(Array(pending[start ..< start + size]), timeout: stallLimit)
                start += size
                transfer.packets += 1
                transfer.bytes += size
            }
            pending.removeFirst(start)
        }
        if !pending.isEmpty {
            try await writer.write(pending, timeout: stallLimit)
            transfer.packets += 1
            transfer.bytes += pending.count
        }
        try await writer.flush(timeout: stallLimit)
        transfer.duration = ContinuousClock.now - started
        return transfer
    }

    // MARK: - Records

    /// `{"address","service","characteristic","bytes","packets","mtu","acquired","seconds"}`.
    struct Record: Sendable {
        var address: BluetoothAddress
        var characteristic: GATTCharacteristic
        var transfer: Transfer
        var mtu: Int
        var acquired: Bool

        /// The duration in seconds, to the millisecond.
        var seconds: Double {
            let (whole, atto) = transfer.duration.components
            return (Double(whole) * 1000 + (Double(atto) / 1e15).rounded()) / 1000
        }

        var json: JSONValue {
            .object([
                ("address", .string(address.description)),
                ("service", .string(characteristic.service.shortString)),
                ("characteristic", .string(characteristic.uuid.shortString)),
                ("bytes", .int(transfer.bytes)),
                ("packets", .int(transfer.packets)),
                ("mtu", .int(mtu)),
                ("acquired", .bool(acquired)),
                ("seconds", .double(seconds)),
            ])
        }

        /// `key: value` lines, keys as in JSON; `acquired` says how the packets went.
        var text: [String] {
            Records.keyValueLines([
                ("address", address.description),
                ("service", Records.named(characteristic.service)),
                ("characteristic", Records.named(characteristic.uuid)),
                ("bytes", String(transfer.bytes)),
                ("packets", String(transfer.packets)),
                ("mtu", String(mtu)),
                ("acquired", acquired ? "yes (AcquireWrite)" : "no (WriteValue, type command)"),
                ("seconds", String(seconds)),
            ])
        }
    }
}
