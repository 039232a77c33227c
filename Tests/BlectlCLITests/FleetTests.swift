import Testing
@testable import BlectlCLI
import BlueZKit

@Suite("several devices: arguments, --from lines, the run's status")
struct FleetTests {
    static let second = "C0:FF:EE:00:00:04"

    @Test("several addresses, in order")
    func severalAddresses() {
        #expect(invocation(["get-battery", sampleAddress, Self.second, "--parallel", "2"]) == .run(
            GlobalOptions(), .getBattery([address(sampleAddress), address(Self.second)], fleet: FleetOptions(parallel: 2))
        ))
    }

    @Test("--from without an address; with one, both")
    func fromInsteadOfAddresses() {
        #expect(invocation(["battery", "--from", "-", "--overall-timeout", "30"]) == .run(
            GlobalOptions(), .getBattery([], fleet: FleetOptions(from: .standardInput, overallTimeout: .seconds(30)))
        ))
        #expect(invocation(["get-battery", sampleAddress, "--from", "list.txt"]) == .run(
            GlobalOptions(), .getBattery([address(sampleAddress)], fleet: FleetOptions(from: .path("list.txt")))
        ))
    }

    @Test("read: the addresses before the characteristic, or none with --from")
    func readTakesTheLastWordAsTheCharacteristic() throws {
        guard case .run(_, let subcommand)? = invocation(["read", sampleAddress, Self.second, "2a19"]),
              let read = subcommand.command as? ReadCommand else { Issue.record("not a read"); return }
        #expect(read.addresses == [address(sampleAddress), address(Self.second)])
        #expect(read.target.characteristic == uuid("2a19"))
        guard case .run(_, let fromFile)? = invocation(["read", "--from", "-", "2a19"]),
              let alone = fromFile.command as? ReadCommand else { Issue.record("not a read"); return }
        #expect(alone.addresses == [])
        #expect(alone.fleet.from == .standardInput)
        #expect(alone.target.characteristic == uuid("2a19"))
    }

    @Test("usage errors", arguments: [
        (["get-battery", sampleAddress, "zz"], "Unexpected argument 'zz'"),
        (["get-battery", "zz", sampleAddress], "Invalid address 'zz': expected six hex pairs like C0:FF:EE:00:00:01"),
        (["read", sampleAddress], "Missing expected argument '<characteristic>'"),
        (["read", "--from", "-"], "Missing expected argument '<characteristic>'"),
        (["read"], "Missing expected argument '<address>'"),
        (["info", "--parallel", "2"], "Missing expected argument '<address>'"),
        (["get-version", sampleAddress, "--parallel", "0"], "Invalid value '0' for '--parallel': expected a whole number from 1 to 64"),
        (["get-version", sampleAddress, "--overall-timeout", "0"],
         "Invalid value '0' for '--overall-timeout': expected a number of seconds (decimals allowed), more than 0"),
        (["connect", sampleAddress, "--from", "-"], "Unknown option '--from'"),
        // write and connect stay one-device.
        (["write", sampleAddress, Self.second, "2a19", "01"], "Unexpected argument '01'"),
    ])
    func usage(_ arguments: [String], _ message: String) {
        #expect(usageError(arguments)?.message == message)
    }

    @Test("one address without --from is the one-device form")
    func oneDeviceForm() {
        var probe = GetBatteryCommand()
        probe.addresses = [address(sampleAddress)]
        #expect(probe.isOneDevice)
        #expect(probe.deviceAddress == address(sampleAddress))
        probe.fleet.from = .standardInput
        #expect(!probe.isOneDevice)
        #expect(probe.deviceAddress == nil)
        probe.fleet.from = nil
        probe.addresses.append(address(Self.second))
        #expect(!probe.isOneDevice)
    }

    // MARK: - --from lines

    static func entry(_ line: String) -> AddressLines.Entry? {
        AddressLines.entry(Array(line.utf8)[...], number: 3, source: .standardInput)
    }

    @Test("a line's address", arguments: [
        "C0:FF:EE:00:00:01", "c0:ff:ee:00:00:01", "  C0:FF:EE:00:00:01\r", "\tC0:FF:EE:00:00:01 ",
        #"{"address":"C0:FF:EE:00:00:01","name":"blesim Probe","rssi":-55,"uuids":["180f"],"manufacturer_data":{"05f1":"0102"},"x":[true,null,1.5e3,{}]}"#,
        #"{ "name" : "a \"quoted\" name" , "address" : "C0:FF:EE:00:00:01" }"#,
    ])
    func lineAddress(line: String) {
        #expect(Self.entry(line) == .address(address(sampleAddress)))
    }

    @Test("blank lines are skipped", arguments: ["", "   ", "\t\r"])
    func blank(line: String) {
        #expect(Self.entry(line) == nil)
    }

    @Test("a line without an address is unusable", arguments: [
        "garbage", "C0:FF:EE:00:00", "C0:FF:EE:00:00:01 extra", #"{"name":"x"}"#, #"{"address":"zz"}"#, #"{"address":1}"#,
        #"{"address":"C0:FF:EE:00:00:01""#, #"{"address":"C0:FF:EE:00:00:01"} trailing"#, "[\"C0:FF:EE:00:00:01\"]",
        #"{"address":"C0:FF:EE:00:00:01","x":tru}"#,
    ])
    func unusable(line: String) {
        guard case .unusable(let unusable)? = Self.entry(line) else {
            Issue.record("\(line) gave \(String(describing: Self.entry(line)))")
            return
        }
        #expect(unusable.number == 3)
        #expect(unusable.status == .usage)
        #expect(unusable.description.hasPrefix("line 3 of standard input is neither an address like C0:FF:EE:00:00:01 nor a JSON object with an \"address\": "))
    }

    // MARK: - The run's status and lines

    static let notFound = FleetFailure.Device(BLEError.deviceNotFound(address(sampleAddress)), status: .deviceNotFound)
    static let timedOut = FleetFailure.Device(BLEError.timedOut(BLEOperation(.connect)), status: .timedOut)
    static let aborted = FleetFailure.Device(BLEError.failed(BLEOperation(.connect), dbusError: "org.bluez.Error.Failed",
                                                             message: "le-connection-abort-by-remote"), status: .bluezFailed)

    @Test("the run's status: the one the failures share, else 6")
    func status() {
        #expect(FleetFailure(failed: [Self.notFound, Self.notFound], devices: 3, unusableLines: 0).status == .deviceNotFound)
        #expect(FleetFailure(failed: [Self.timedOut], devices: 3, unusableLines: 0).status == .timedOut)
        #expect(FleetFailure(failed: [Self.notFound, Self.timedOut], devices: 3, unusableLines: 0).status == .devicesFailedDifferently)
        #expect(FleetFailure(failed: [], devices: 3, unusableLines: 2).status == .usage)
        #expect(FleetFailure(failed: [Self.notFound], devices: 3, unusableLines: 1).status == .devicesFailedDifferently)
        #expect(ExitStatus.devicesFailedDifferently.rawValue == 6)
        #expect(ExitStatus.devicesFailedDifferently.code == "devices_failed")
        #expect(FleetFailure(failed: [Self.notFound, Self.timedOut, Self.notFound], devices: 5, unusableLines: 1).description
                == "3 of 5 devices failed (2 device_not_found, 1 timed_out); 1 line of --from had no address")
    }

    @Test("the summary counts the codes of the devices' error objects, and is retryable when each failure is")
    func summary() {
        // A connection aborted: status 1, code connection_aborted, as in the device's line.
        #expect(FleetFailure(failed: [Self.aborted, Self.notFound], devices: 20, unusableLines: 0).description
                == "2 of 20 devices failed (1 connection_aborted, 1 device_not_found)")
        #expect(FleetFailure(failed: [Self.notFound], devices: 1, unusableLines: 0).description == "1 of 1 device failed (1 device_not_found)")
        #expect(FleetFailure(failed: [Self.aborted, Self.notFound], devices: 3, unusableLines: 0).isRetryable)
        #expect(RetryPolicy.isRetryable(FleetFailure(failed: [Self.notFound, Self.notFound], devices: 3, unusableLines: 0)))
        #expect(!RetryPolicy.isRetryable(FleetFailure(failed: [Self.notFound, Self.timedOut], devices: 3, unusableLines: 0)))
        #expect(!RetryPolicy.isRetryable(FleetFailure(failed: [Self.notFound], devices: 3, unusableLines: 1)))
    }

    @Test("a text result on one line")
    func textLine() {
        let lines = Records.keyValueLines([("address", sampleAddress), ("source", "device_information"), ("firmware_revision", "1.4.2"),
                                           ("model_number", "-")])
        #expect(FleetRun<GetVersionCommand>.oneLine(lines, address: address(sampleAddress))
                == "C0:FF:EE:00:00:01  source=device_information  firmware_revision=1.4.2  model_number=-")
        #expect(FleetRun<GetBatteryCommand>.oneLine(["C0:FF:EE:00:00:01  87%  (battery1)"], address: address(sampleAddress))
                == "C0:FF:EE:00:00:01  87%  (battery1)")
    }
}
