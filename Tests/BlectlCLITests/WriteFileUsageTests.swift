import Testing
@testable import BlectlCLI
@testable import BlueZKit

/// `write --file`: what the command line means, and the usage rules (exit 64) that `write`
/// applies to `--file` and `<value>` (``WriteFile/checkUsage``).
@Suite("write --file: parsing and usage rules")
struct WriteFileUsageTests {
    static let echo = "C0:FF:EE:00:00:08"
    static let sink = "ec400002-6c2d-4b8e-9f3a-0c1d2e3f4a5b"

    static func expected(_ source: InputSource, service: BluetoothUUID? = nil, timeout: Duration = .seconds(20)) -> Subcommand {
        let target = GATTTarget(characteristic: uuid(sink), service: service)
        return Subcommand(WriteCommand(options: DeviceOptions(address: address(echo), timeout: timeout), target: target,
                                       source: .file(WriteFile(target: target, source: source, timeout: timeout)),
                                       type: .command))
    }

    @Test func aFileAndStandardInput() {
        // A path that can be read (an unreadable one is a usage error: WriteFileTests).
        #expect(invocation(["write", Self.echo, Self.sink, "--without-response", "--file", "/etc/passwd"])
                == .run(GlobalOptions(), Self.expected(.path("/etc/passwd"))))
        #expect(invocation(["write", Self.echo, Self.sink, "--file", "-", "--without-response"])
                == .run(GlobalOptions(), Self.expected(.standardInput)))
        #expect(invocation(["write", Self.echo, Self.sink, "--file=-", "--without-response", "--service", "ec400001-6c2d-4b8e-9f3a-0c1d2e3f4a5b", "--timeout", "2.5"])
                == .run(GlobalOptions(), Self.expected(.standardInput, service: uuid("ec400001-6c2d-4b8e-9f3a-0c1d2e3f4a5b"), timeout: .milliseconds(2500))))
    }

    @Test("usage errors", arguments: [
        (["write", echo, sink, "--file", "/tmp/x"], "'--file' needs '--without-response' (the stream is written without response)"),
        (["write", echo, sink, "--without-response"], "Missing expected argument '<value>' (or --file)"),
        (["write", echo, sink, "--without-response", "--file"], "Missing value for '--file'"),
        (["write", echo, sink, "--without-response", "--file="], "Invalid value '' for '--file': expected a file path, or - for standard input"),
        (["write", echo, sink, "0102", "--without-response", "--file", "-"], "Give either <value> or '--file', not both"),
        (["write", echo, "--without-response", "--file", "-"], "Missing expected argument '<characteristic>'"),
        (["write", echo, sink, "--without-response", "--file", "a", "--file", "b"], "Option '--file' cannot be repeated"),
        (["write", echo, sink, "--without-response", "--text", "--file", "-"], "'--text' describes <value>; it does not go with '--file'"),
        (["write", echo, sink], "Missing expected argument '<value>' (or --file)"),
    ])
    func usageErrors(arguments: [String], message: String) throws {
        let error = try #require(usageError(arguments))
        #expect(error.message == message)
        #expect(error.subcommand == "write")
    }

    /// The rules write applies to `--file` and `<value>`.
    @Test("checkUsage: --file and <value> exclude each other; --file needs --without-response, not --text")
    func checkUsage() {
        #expect(throws: Never.self) { try WriteFile.checkUsage(file: .standardInput, hasValue: false, withoutResponse: true) }
        #expect(throws: Never.self) { try WriteFile.checkUsage(file: nil, hasValue: true, withoutResponse: false) }
        #expect(throws: Never.self) { try WriteFile.checkUsage(file: nil, hasValue: true, withoutResponse: true, text: true) }
        #expect(throws: UsageError("Give either <value> or '--file', not both", subcommand: "write")) {
            try WriteFile.checkUsage(file: .path("x"), hasValue: true, withoutResponse: true)
        }
        #expect(throws: UsageError("'--text' describes <value>; it does not go with '--file'", subcommand: "write")) {
            try WriteFile.checkUsage(file: .path("x"), hasValue: false, withoutResponse: true, text: true)
        }
        #expect(throws: UsageError("'--file' needs '--without-response' (the stream is written without response)", subcommand: "write")) {
            try WriteFile.checkUsage(file: .standardInput, hasValue: false, withoutResponse: false)
        }
        #expect(throws: UsageError("Missing expected argument '<value>' (or --file)", subcommand: "write")) {
            try WriteFile.checkUsage(file: nil, hasValue: false, withoutResponse: true)
        }
    }

    @Test func helpNamesEveryOption() throws {
        let text = try #require(helpText(["help", "write"]))
        #expect(text == helpText(["write", "--help"]))
        for option in ["-s, --service <uuid>", "--without-response", "--file <path>", "-t, --timeout <seconds>", "--adapter <adapter>", "-f, --format <format>"] {
            #expect(text.contains("\n  \(option)"), "missing \(option)")
        }
        #expect(text.contains("<address> <characteristic>"))
    }

    @Test func theRecord() {
        let characteristic = GATTCharacteristic(path: "/org/bluez/hci0/dev_C0_FF_EE_00_00_08/service000f/char0010",
                                                uuid: uuid(Self.sink), service: uuid("ec400001-6c2d-4b8e-9f3a-0c1d2e3f4a5b"),
                                                flags: ["write-without-response"], descriptors: [])
        let record = WriteFile.Record(address: address(Self.echo), characteristic: characteristic,
                                      transfer: .init(bytes: 262_144, packets: 1_075, duration: .milliseconds(2_051) + .microseconds(400)),
                                      mtu: 247, acquired: true)
        #expect(record.json.serialized() == #"{"address":"C0:FF:EE:00:00:08","service":"ec400001-6c2d-4b8e-9f3a-0c1d2e3f4a5b","characteristic":"ec400002-6c2d-4b8e-9f3a-0c1d2e3f4a5b","bytes":262144,"packets":1075,"mtu":247,"acquired":true,"seconds":2.051}"#)
        #expect(record.text == [
            "address:        C0:FF:EE:00:00:08",
            "service:        ec400001-6c2d-4b8e-9f3a-0c1d2e3f4a5b",
            "characteristic: ec400002-6c2d-4b8e-9f3a-0c1d2e3f4a5b",
            "bytes:          262144",
            "packets:        1075",
            "mtu:            247",
            "acquired:       yes (AcquireWrite)",
            "seconds:        2.051",
        ])
    }
}
