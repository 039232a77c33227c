import Testing
@testable import BlectlCLI
import BlueZKit

@Suite("parseCommandLine: successful parses")
struct ParseCommandLineTests {
    // MARK: scan

    @Test func scanDefaults() {
        #expect(invocation(["scan"]) == .run(
            GlobalOptions(adapter: nil, format: .json),
            .scan(ScanOptions(timeout: .seconds(10), names: [], services: [], rssiMin: nil, updates: false))
        ))
    }

    @Test func scanWithEveryOption() {
        let arguments = [
            "scan", "--timeout", "2.5", "--name", "Sensor", "--name=Tag", "--service", "180f",
            "--service=0000180A-0000-1000-8000-00805F9B34FB", "--rssi-min", "-70", "--updates",
        ]
        #expect(invocation(arguments) == .run(
            GlobalOptions(),
            .scan(ScanOptions(
                timeout: .milliseconds(2500), names: ["Sensor", "Tag"],
                services: [.batteryService, .deviceInformation], rssiMin: -70, updates: true
            ))
        ))
    }

    @Test("--timeout value forms", arguments: [
        (["--timeout", "5"], Duration.seconds(5)),
        (["--timeout=5"], .seconds(5)),
        (["--timeout", "0"], .zero),
        (["--timeout", "0.1"], .milliseconds(100)),
        (["--timeout", ".5"], .milliseconds(500)),
        (["--timeout", "5."], .seconds(5)),
        (["--timeout", "007"], .seconds(7)),
        (["--timeout", "86400"], .seconds(86_400)),
        (["--timeout", "86400.000"], .seconds(86_400)),
        (["--timeout", "0.000000000000000001"], Duration(secondsComponent: 0, attosecondsComponent: 1)),
        (["--timeout", "1.0000000000000000019"], Duration(secondsComponent: 1, attosecondsComponent: 1)),
    ])
    func timeoutForms(arguments: [String], expected: Duration) {
        #expect(invocation(["scan"] + arguments) == .run(GlobalOptions(), .scan(ScanOptions(timeout: expected))))
    }

    static let rssiCases: [([String], Int16)] = [
        (["--rssi-min", "-127"], -127),
        (["--rssi-min=-127"], -127),
        (["--rssi-min", "20"], 20),
        (["--rssi-min", "0"], 0),
        (["--rssi-min", "007"], 7),
        (["--rssi-min", "-070"], -70),
    ]

    @Test("--rssi-min accepts -127...20, negative values as a separate word", arguments: rssiCases)
    func rssiForms(arguments: [String], expected: Int16) {
        #expect(invocation(["scan"] + arguments) == .run(GlobalOptions(), .scan(ScanOptions(rssiMin: expected))))
    }

    @Test func repeatableOptionsKeepOrderAndDuplicates() {
        let result = invocation(["scan", "--service", "180a", "--name", "b", "--service", "180f", "--name", "a", "--service", "180a"])
        #expect(result == .run(GlobalOptions(), .scan(ScanOptions(
            names: ["b", "a"], services: [.deviceInformation, .batteryService, .deviceInformation]
        ))))
    }

    @Test func nameValuesAreKeptVerbatim() {
        let result = invocation(["scan", "--name", "My Sensor ☃", "--name=a=b", "--name=-dash"])
        #expect(result == .run(GlobalOptions(), .scan(ScanOptions(names: ["My Sensor ☃", "a=b", "-dash"]))))
    }

    @Test func optionsInAnyOrder() {
        let a = invocation(["scan", "--updates", "--timeout", "3", "--name", "x"])
        let b = invocation(["scan", "--name", "x", "--updates", "--timeout", "3"])
        #expect(a == b)
        #expect(a == .run(GlobalOptions(), .scan(ScanOptions(timeout: .seconds(3), names: ["x"], updates: true))))
    }

    // MARK: device subcommands

    @Test func connectDefaults() {
        #expect(invocation(["connect", "c0:ff:ee:00:00:01"]) == .run(
            GlobalOptions(), .connect(DeviceOptions(address: address(sampleAddress), timeout: .seconds(20)))
        ))
    }

    @Test func connectWithTimeoutBeforeOrAfterAddress() {
        let expected = Invocation.run(GlobalOptions(), .connect(DeviceOptions(address: address(sampleAddress), timeout: .seconds(3))))
        #expect(invocation(["connect", sampleAddress, "--timeout", "3"]) == expected)
        #expect(invocation(["connect", "--timeout", "3", sampleAddress]) == expected)
        #expect(invocation(["connect", "--timeout=3", sampleAddress]) == expected)
    }

    @Test("get-version and its alias", arguments: ["get-version", "version"])
    func getVersion(name: String) {
        #expect(invocation([name, sampleAddress]) == .run(
            GlobalOptions(), .getVersion(DeviceOptions(address: address(sampleAddress), timeout: .seconds(20)), nil)
        ))
    }

    @Test("get-battery and its alias", arguments: ["get-battery", "battery"])
    func getBattery(name: String) {
        #expect(invocation([name, sampleAddress, "--timeout", "1.5"]) == .run(
            GlobalOptions(), .getBattery(DeviceOptions(address: address(sampleAddress), timeout: .milliseconds(1500)), nil)
        ))
    }

    @Test("vendor protocol options, all three", arguments: ["get-version", "version", "get-battery", "battery"])
    func vendorProtocol(name: String) {
        let vendorService = "6e400001-b5a3-f393-e0a9-e50e24dcca9e"
        let arguments = [
            name, "--vendor-notify", "6E400003-B5A3-F393-E0A9-E50E24DCCA9E", sampleAddress,
            "--vendor-service=\(vendorService)", "--vendor-write", "6e400002-b5a3-f393-e0a9-e50e24dcca9e",
        ]
        let device = DeviceOptions(address: address(sampleAddress), timeout: .seconds(20))
        let vendor = VendorProtocolOptions(
            service: uuid(vendorService),
            writeCharacteristic: uuid("6e400002-b5a3-f393-e0a9-e50e24dcca9e"),
            notifyCharacteristic: uuid("6e400003-b5a3-f393-e0a9-e50e24dcca9e")
        )
        let expected: Subcommand = name.contains("version") ? .getVersion(device, vendor) : .getBattery(device, vendor)
        #expect(invocation(arguments) == .run(GlobalOptions(), expected))
    }

    // MARK: GATT toolbox

    static let probe = DeviceOptions(address: address(sampleAddress))
    static let vendorWrite = "5a1e0002-6c2d-4b8e-9f3a-0c1d2e3f4a5b"
    static let vendorNotify = "5a1e0003-6c2d-4b8e-9f3a-0c1d2e3f4a5b"

    @Test func readDefaultsAndEveryOption() {
        #expect(invocation(["read", sampleAddress, "0x2A19"]) == .run(
            GlobalOptions(), .read(Self.probe, GATTTarget(characteristic: .batteryLevel))
        ))
        #expect(invocation(["read", "--offset=7", sampleAddress, "2a19", "--service", "180f", "--descriptor", "2901", "--timeout", "4"]) == .run(
            GlobalOptions(),
            .read(DeviceOptions(address: address(sampleAddress), timeout: .seconds(4)),
                  GATTTarget(characteristic: .batteryLevel, service: .batteryService), descriptor: uuid("2901"), offset: 7)
        ))
        #expect(invocation(["read", sampleAddress, "2a19", "--offset", "65535"]) == .run(
            GlobalOptions(), .read(Self.probe, GATTTarget(characteristic: .batteryLevel), offset: 65535)
        ))
    }

    @Test("write: hex in every spelling, or text with --text", arguments: [
        (["0102ff"], [UInt8]([1, 2, 0xFF])), (["01:02:FF"], [1, 2, 0xFF]), (["0x0102ff"], [1, 2, 0xFF]),
        (["--text", "hi ☃"], Array("hi ☃".utf8)), (["0102", "--text"], Array("0102".utf8)), (["--text", "--", "-x"], Array("-x".utf8)),
    ])
    func writeValues(arguments: [String], bytes: [UInt8]) {
        #expect(invocation(["write", sampleAddress, "2a19"] + arguments) == .run(
            GlobalOptions(), .write(Self.probe, GATTTarget(characteristic: .batteryLevel), bytes)
        ))
    }

    @Test func writeWithoutResponseAndService() {
        #expect(invocation(["write", sampleAddress, "2a19", "00", "--without-response", "--service=180f"]) == .run(
            GlobalOptions(), .write(Self.probe, GATTTarget(characteristic: .batteryLevel, service: .batteryService), [0], type: .command)
        ))
    }

    @Test func requestDefaultsAndEveryOption() {
        #expect(invocation(["request", sampleAddress, "--write", Self.vendorWrite, "--notify", Self.vendorNotify, "01"]) == .run(
            GlobalOptions(),
            .request(Self.probe, write: GATTTarget(characteristic: uuid(Self.vendorWrite)),
                     notify: GATTTarget(characteristic: uuid(Self.vendorNotify)), [1])
        ))
        let service = "5a1e0001-6c2d-4b8e-9f3a-0c1d2e3f4a5b"
        #expect(invocation(["request", sampleAddress, "--notify=\(Self.vendorNotify)", "01:02", "--write", Self.vendorWrite,
                            "--service", service, "--response-prefix", "0x81", "--count", "3"]) == .run(
            GlobalOptions(),
            .request(Self.probe, write: GATTTarget(characteristic: uuid(Self.vendorWrite), service: uuid(service)),
                     notify: GATTTarget(characteristic: uuid(Self.vendorNotify), service: uuid(service)), [1, 2], prefix: [0x81], count: 3)
        ))
        #expect(invocation(["request", sampleAddress, "--write", "2a19", "--notify", "2a19", "--text", "AT"]) == .run(
            GlobalOptions(),
            .request(Self.probe, write: GATTTarget(characteristic: .batteryLevel), notify: GATTTarget(characteristic: .batteryLevel),
                     Array("AT".utf8))
        ))
    }

    @Test func disconnectDefaultsAndTimeout() {
        #expect(invocation(["disconnect", "c0:ff:ee:00:00:01"]) == .run(GlobalOptions(), .disconnect(Self.probe)))
        #expect(invocation(["disconnect", sampleAddress, "--timeout", "0.5"]) == .run(
            GlobalOptions(), .disconnect(DeviceOptions(address: address(sampleAddress), timeout: .milliseconds(500)))
        ))
    }

    // MARK: info, devices, adapters

    @Test func infoDefaultsAndTimeout() {
        #expect(invocation(["info", "c0:ff:ee:00:00:01"]) == .run(GlobalOptions(), .info(address(sampleAddress), timeout: .seconds(10))))
        #expect(invocation(["info", "--timeout", "0.25", sampleAddress]) == .run(GlobalOptions(), .info(address(sampleAddress), timeout: .milliseconds(250))))
        #expect(invocation(["--adapter", "hci1", "info", sampleAddress, "--format=text"]) == .run(
            GlobalOptions(adapter: "hci1", format: .text), .info(address(sampleAddress))
        ))
    }

    @Test("devices filters, alone and together", arguments: [
        ([], false, false), (["--connected"], true, false), (["--paired"], false, true),
        (["--paired", "--connected"], true, true), (["--connected", "--timeout", "2", "--paired"], true, true),
    ])
    func devicesFilters(arguments: [String], connected: Bool, paired: Bool) {
        let timeout: Duration = arguments.contains("--timeout") ? .seconds(2) : .seconds(10)
        #expect(invocation(["devices"] + arguments) == .run(GlobalOptions(), .devices(timeout: timeout, connected: connected, paired: paired)))
    }

    @Test func devicesFilterBoth() {
        let both = DevicesCommand(onlyConnected: true, onlyPaired: true)
        let device = { (connected: Bool?, paired: Bool?) -> DeviceInfo in
            var info = DeviceInfo(path: "/org/bluez/hci0/dev_C0_FF_EE_00_00_01", device: [:])!
            info.properties.connected = connected
            info.properties.paired = paired
            return info
        }
        #expect(both.includes(device(true, true)))
        #expect(!both.includes(device(true, false)))
        #expect(!both.includes(device(false, true)))
        #expect(!both.includes(device(true, nil)))     // unknown is not paired
        #expect(DevicesCommand(onlyConnected: true).includes(device(true, false)))
        #expect(DevicesCommand(onlyPaired: true).includes(device(false, true)))
        #expect(DevicesCommand().includes(device(nil, nil)))
    }

    @Test func adaptersDefaults() {
        #expect(invocation(["adapters"]) == .run(GlobalOptions(), .adapters()))
        #expect(invocation(["adapters", "--timeout", "3", "--adapter", "hci1"]) == .run(GlobalOptions(adapter: "hci1"), .adapters(timeout: .seconds(3))))
    }

    @Test func adapterRequirements() {
        #expect(ScanCommand.adapterRequirement == .powered)
        #expect(ConnectCommand.adapterRequirement == .powered)
        #expect(GetVersionCommand.adapterRequirement == .powered)
        #expect(GetBatteryCommand.adapterRequirement == .powered)
        #expect(InfoCommand.adapterRequirement == .present)
        #expect(DevicesCommand.adapterRequirement == .present)
        #expect(AdaptersCommand.adapterRequirement == .none)
    }

    // MARK: pair and unpair

    @Test func pairDefaultsAndOptions() {
        let device = DeviceOptions(address: address(sampleAddress), timeout: .seconds(20))
        #expect(invocation(["pair", sampleAddress]) == .run(GlobalOptions(), .pair(device)))
        #expect(invocation(["pair", "--passkey", "000042", "--trust", sampleAddress, "--timeout=5"]) == .run(
            GlobalOptions(), .pair(DeviceOptions(address: address(sampleAddress), timeout: .seconds(5)), trust: true, passkey: Passkey(42))
        ))
        #expect(invocation(["pair", sampleAddress, "--passkey=999999"]) == .run(GlobalOptions(), .pair(device, passkey: Passkey(999_999))))
        #expect(invocation(["pair", sampleAddress, "--passkey", "0"]) == .run(GlobalOptions(), .pair(device, passkey: Passkey(0))))
    }

    @Test func unpair() {
        #expect(invocation(["--format", "text", "unpair", sampleAddress, "--timeout", "2"]) == .run(
            GlobalOptions(format: .text), .unpair(DeviceOptions(address: address(sampleAddress), timeout: .seconds(2)))
        ))
    }

    // MARK: global options

    @Test("global options before and after the subcommand", arguments: [
        ["--adapter", "hci1", "--format", "text", "scan"],
        ["scan", "--adapter", "hci1", "--format", "text"],
        ["--adapter=hci1", "scan", "--format=text"],
        ["--format", "text", "scan", "--adapter", "hci1"],
    ])
    func globalOptionsAnywhere(arguments: [String]) {
        #expect(invocation(arguments) == .run(GlobalOptions(adapter: "hci1", format: .text), .scan(ScanOptions())))
    }

    @Test func globalOptionsWithDeviceSubcommand() {
        #expect(invocation(["--adapter", "hci12", "battery", sampleAddress, "--format", "json"]) == .run(
            GlobalOptions(adapter: "hci12", format: .json),
            .getBattery(DeviceOptions(address: address(sampleAddress)), nil)
        ))
    }

    @Test("--format values", arguments: [("json", OutputFormat.json), ("text", .text)])
    func formats(value: String, format: OutputFormat) {
        #expect(invocation(["scan", "--format", value]) == .run(GlobalOptions(format: format), .scan(ScanOptions())))
    }

    // MARK: --

    @Test func doubleDashEndsOptions() {
        let expected = Invocation.run(GlobalOptions(), .connect(DeviceOptions(address: address(sampleAddress))))
        #expect(invocation(["connect", "--", sampleAddress]) == expected)
        #expect(invocation(["--", "connect", sampleAddress]) == expected)
        #expect(invocation(["connect", "--timeout", "20", "--", sampleAddress]) == expected)
    }

    @Test func helpAfterDoubleDashIsAnArgument() {
        #expect(usageError(["connect", "--", "--help"])?.message == "Invalid address '--help': expected six hex pairs like C0:FF:EE:00:00:01")
        #expect(usageError(["scan", "--", "-h"])?.message == "Unexpected argument '-h'")
    }

    // MARK: version and help

    @Test("--version", arguments: [["--version"], ["--version", "scan"], ["--format", "text", "--version"]])
    func version(arguments: [String]) {
        #expect(invocation(arguments) == .version)
    }

    @Test("-h and --help anywhere before --", arguments: [
        (["-h"], "blectl"),
        (["--help"], "blectl"),
        (["--help", "scan"], "blectl scan"),
        (["scan", "-h"], "blectl scan"),
        (["scan", "--timeout", "5", "--help"], "blectl scan"),
        (["connect", "--help", sampleAddress], "blectl connect"),
        (["version", "-h"], "blectl get-version"),
        (["battery", sampleAddress, "--help"], "blectl get-battery"),
        (["help"], "blectl"),
        (["help", "scan"], "blectl scan"),
        (["help", "version"], "blectl get-version"),
        (["help", "get-battery"], "blectl get-battery"),
        (["help", "help"], "blectl help"),
        (["help", "--help"], "blectl help"),
    ])
    func help(arguments: [String], command: String) throws {
        let text = try #require(helpText(arguments))
        #expect(text.contains("USAGE: \(command) ") || text.contains("USAGE: \(command)\n"))
    }

    @Test("help wins over errors on the same line", arguments: [
        ["scan", "--frobnicate", "--help"],
        ["scan", "--timeout", "--help"],
        ["scan", "--timeout", "xyz", "-h"],
        ["connect", "-h"],
        ["scan", "foo", "--help"],
        ["get-version", sampleAddress, "--vendor-service", "180f", "-h"],
    ])
    func helpWinsOverErrors(arguments: [String]) throws {
        let text = try #require(helpText(arguments))
        #expect(text.hasPrefix("OVERVIEW: "))
    }
}
