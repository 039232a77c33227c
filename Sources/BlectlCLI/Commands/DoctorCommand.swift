import BlueZKit
import DBusKit

/// `blectl doctor`: checks the set-up BLE needs on Linux, in order, and says what to do
/// about the first thing wrong. One JSON object `{"checks":[{"name","ok","detail","hint"}…]}`;
/// exit 0 when every check passes, else the status of the first that failed.
struct DoctorCommand: SessionOpeningSubcommand {
    static let configuration = CommandConfiguration(
        name: "doctor",
        abstract: "Check the Bluetooth set-up, in order, and say what to fix.",
        discussion: [
            "Checks, in this order: bus (the system bus answers), bluetoothd (org.bluez has an owner; BlueZ's version from the adapter's Modalias), permission (the bus policy lets blectl call BlueZ), adapter (BlueZ has one; --adapter picks it), rfkill (its switch is not soft- or hard-blocked), powered, le (the adapter's Roles include central), discovery (StartDiscovery and StopDiscovery both answered). Prints one JSON object with every check's name, ok (true, false, or null when not checked because an earlier one failed), detail and hint (what to do, or null). Exits 0 when all pass, else with the status of the first that failed (69 unavailable, 77 permission denied, 124 timed out, ...), its error object on standard error. Nothing is connected; discovery runs for as long as its two calls take.",
        ]
    )

    @Option(.timeout(help: "Give up after this many seconds; decimals allowed, more than 0.", parser: .seconds(allowingZero: false)))
    var timeout: Duration = .seconds(10)

    /// One check's outcome, as printed; `failure` is what blectl ends with when it is the
    /// first to fail.
    struct Check: Sendable {
        var name: String
        /// nil: not checked, because a check it needs failed.
        var ok: Bool?
        var detail: String
        var hint: String?
        var failure: (any Error)?

        static func pass(_ name: String, _ detail: String) -> Check { Check(name: name, ok: true, detail: detail) }
        static func fail(_ name: String, _ detail: String, hint: String?, _ failure: any Error) -> Check {
            Check(name: name, ok: false, detail: detail, hint: hint, failure: failure)
        }
        static func skipped(_ name: String, needs: String) -> Check {
            Check(name: name, ok: nil, detail: "not checked: needs \(needs)")
        }
    }

    /// The checks, in order.
    static let names = ["bus", "bluetoothd", "permission", "adapter", "rfkill", "powered", "le", "discovery"]

    func run(global: GlobalOptions, printer: Printer, deadline: ContinuousClock.Instant,
             observer: (any SessionObserver)?) async throws {
        var checks: [Check] = []
        // The bus alone first, so that a bluetoothd that does not answer is not taken for a bus
        // that does not.
        if let failure = await Self.busFailure(deadline: deadline) {
            checks = Self.sessionFailure(failure, adapterName: global.adapter)
        } else {
            do {
                let session = try await Session.open(timeout: max(deadline - .now, .zero), observer: observer)
                checks = await Self.checks(session, adapterName: global.adapter, deadline: deadline)
                await session.connection.flush(within: CleanupPolicy.wireTime)
                // Closing the connection also ends any discovery it still owns (bluetoothd ties
                // a discovery to the connection that started it).
                session.close()
            } catch {
                checks = Self.sessionFailure(error, adapterName: global.adapter, busReached: true)
            }
        }
        // Interrupted: no report (a check cut short is not a finding); blectl ends by the signal.
        if Task.isCancelled || checks.contains(where: { $0.failure is CancellationError }) { throw CancellationError() }
        try await printer.result(Self.lines(checks, format: printer.format))
        if let failure = checks.first(where: { $0.ok == false })?.failure { throw failure }
    }

    /// Connects to the system bus and closes the connection again: nil when that works within
    /// the deadline, else why not.
    static func busFailure(deadline: ContinuousClock.Instant) async -> (any Error)? {
        let operation = BLEOperation(.bus)
        do {
            let opened = try await withOneShot(timeout: max(deadline - .now, .zero),
                                               timeoutError: { BLEError.timedOut(operation) }) { shot in
                BusConnection.startConnecting(to: BusConnection.systemBusAddress) { result in
                    if !shot.resolve(result), case .success(let late) = result { late.abandon() }
                }
            }
            opened.abandon()
            return nil
        } catch let error as BLEError {
            return error
        } catch is CancellationError {
            return CancellationError()
        } catch {
            return BLEError.from(error, during: operation)
        }
    }

    // MARK: - The checks

    /// bus, bluetoothd and permission when the bus or the session could not open; rfkill, which
    /// needs only sysfs, still checked; the rest not checked. `busReached`: the bus answered
    /// (the failure is bluetoothd's or the policy's).
    static func sessionFailure(_ error: any Error, adapterName: String?, busReached: Bool = false) -> [Check] {
        let bus = BusConnection.systemBusAddress
        var checks: [Check]
        switch error {
        case is CancellationError:
            return [Check(name: "bus", ok: false, detail: "interrupted", failure: error)]
        case BLEError.unavailable(.busUnreachable(let why), _, _) where !busReached:
            checks = [.fail("bus", "cannot connect to \(bus): \(why)",
                            hint: "Start the system bus (systemctl status dbus), or point DBUS_SYSTEM_BUS_ADDRESS at it.", error)]
        case BLEError.permissionDenied(let message, _):
            checks = [.pass("bus", bus), .pass("bluetoothd", "org.bluez is on the system bus"),
                      .fail("permission", "the bus policy refused GetManagedObjects: \(message)",
                            hint: "Join the group the policy admits (often: sudo usermod -aG bluetooth $USER, then log in again); see /usr/share/dbus-1/system.d/bluetooth.conf.", error)]
        case BLEError.unavailable(.bluezNotRunning, _, _):
            checks = [.pass("bus", bus),
                      .fail("bluetoothd", "org.bluez has no owner on the system bus: bluetoothd is not running",
                            hint: "Start it: sudo systemctl start bluetooth (and enable it to start at boot).", error)]
        case _ where busReached:
            checks = [.pass("bus", bus),
                      .fail("bluetoothd", "bluetoothd did not give its objects (GetManagedObjects): \(error)",
                            hint: "bluetoothd may be stuck or restarting: systemctl status bluetooth, journalctl -u bluetooth.", error)]
        default:
            checks = [.fail("bus", "no answer from \(bus): \(error)",
                            hint: "Check that dbus-daemon is running and not stuck (systemctl status dbus).", error)]
        }
        let failed = checks.last!.name
        return checks + names.dropFirst(checks.count).map { name in
            name == "rfkill" ? rfkill(adapterName: adapterName, powerState: nil) : Check.skipped(name, needs: failed)
        }
    }

    /// Every check on an open session.
    static func checks(_ session: Session, adapterName: String?, deadline: ContinuousClock.Instant) async -> [Check] {
        var checks: [Check] = [.pass("bus", BusConnection.systemBusAddress)]
        let adapters = Adapter.all(in: session)
        let owner = session.bluezOwner.map { "org.bluez is \($0)" } ?? "org.bluez is on the system bus"
        let version = adapters.lazy.compactMap { $0.info?.modalias }.compactMap(bluezVersion).first
        checks.append(.pass("bluetoothd", owner + (version.map { "; BlueZ \($0)" } ?? "")))
        checks.append(.pass("permission", "the bus policy allows calling org.bluez"))

        let adapter: Adapter
        do {
            adapter = try Adapter.present(in: session, named: adapterName)
        } catch {
            let detail = adapterName.map { "BlueZ has no adapter \($0)" + (adapters.isEmpty ? "" : " (it has \(adapters.map(\.name).joined(separator: ", ")))") }
                ?? "BlueZ has no Bluetooth adapter"
            checks.append(.fail("adapter", detail, hint: adapterName != nil && !adapters.isEmpty
                                ? "Name one of those with --adapter, or leave it out."
                                : "Is the controller there? Look at dmesg | grep -i bluetooth and btmgmt info; a USB dongle may need its firmware (linux-firmware).", error))
            checks.append(rfkill(adapterName: adapterName, powerState: nil))
            return checks + names.dropFirst(checks.count).map { Check.skipped($0, needs: "adapter") }
        }
        let info = adapter.info
        let about = [info?.address?.description, info.flatMap(controller)].compactMap { $0 }.joined(separator: "; ")
        checks.append(.pass("adapter", adapter.name + (about.isEmpty ? "" : " (\(about))")))

        let rfkillCheck = rfkill(adapterName: adapter.name, powerState: info?.powerState)
        checks.append(rfkillCheck)

        let powered = info?.powered == true
        let state = info?.powerState.map { " (PowerState \($0))" } ?? ""
        if powered {
            checks.append(.pass("powered", "\(adapter.name) is powered\(state)"))
        } else {
            checks.append(.fail("powered", "\(adapter.name) is powered off\(state)",
                                hint: rfkillCheck.ok == false ? "Unblock it first (see rfkill)." : "Power it on: bluetoothctl power on (or AutoEnable=true in /etc/bluetooth/main.conf).",
                                BLEError.unavailable(.poweredOff(adapter.name), during: BLEOperation(.adapter))))
        }

        switch info?.roles {
        case nil:
            checks.append(.pass("le", "Roles not reported by this BlueZ (before 5.59?): LE assumed"))
        case let roles? where roles.contains("central"):
            checks.append(.pass("le", "roles: \(roles.joined(separator: ", "))"))
        case let roles?:
            checks.append(.fail("le", "\(adapter.name) cannot act as an LE central (roles: \(roles.isEmpty ? "none" : roles.joined(separator: ", ")))",
                                hint: "Use an adapter that supports Bluetooth LE (4.0 or later).",
                                DoctorFinding(message: "\(adapter.name) does not support the LE central role")))
        }

        if let failed = checks.first(where: { $0.ok == false && ($0.name == "powered" || $0.name == "le") }) {
            checks.append(.skipped("discovery", needs: failed.name))
            return checks
        }
        checks.append(await discovery(adapter, deadline: deadline))
        return checks
    }

    /// StartDiscovery then StopDiscovery, each answered within the deadline (nothing else: no
    /// filter, no devices taken). A discovery left running by a failure ends when the session's
    /// connection closes. A failure that comes with the adapter powered off, blocked or gone
    /// is that (69), as for every command.
    static func discovery(_ adapter: Adapter, deadline: ContinuousClock.Instant) async -> Check {
        let session = adapter.session
        let operation = BLEOperation(.discovery)
        let started = ContinuousClock.now
        var step = "StartDiscovery"
        do {
            try await CommandDeadline.$instant.withValue(deadline) {
                _ = try await session.call(BlueZ.call(adapter.path, BlueZ.adapterInterface, "StartDiscovery"),
                                           operation: operation, timeout: max(deadline - .now, .zero))
                step = "StopDiscovery"
                _ = try await session.call(BlueZ.call(adapter.path, BlueZ.adapterInterface, "StopDiscovery"),
                                           operation: operation, timeout: max(deadline - .now, .zero))
            }
        } catch is CancellationError {
            return Check(name: "discovery", ok: false, detail: "interrupted", failure: CancellationError())
        } catch {
            var failure: any Error = error
            if case .unavailable(let why, _, let name)? = await adapter.unavailabilityAfterLinkLoss(
                within: min(Adapter.linkLossGrace, max(deadline - .now, .zero))) {
                failure = BLEError.unavailable(why, during: operation, dbusError: name ?? (error as? BLEError)?.dbusError)
            }
            let hint = failure is BLEError && ExitStatus(for: failure) == .unavailable
                ? "The adapter went away during the check: see the checks above, and dmesg."
                : "Another program may hold the adapter (bluetoothctl scan on?); btmon shows what the controller says."
            return .fail("discovery", "\(step) failed: \(failure)", hint: hint, failure)
        }
        let (seconds, attoseconds) = (ContinuousClock.now - started).components
        let milliseconds = seconds * 1000 + attoseconds / 1_000_000_000_000_000
        return .pass("discovery", "StartDiscovery and StopDiscovery answered in \(milliseconds) ms")
    }

    /// The rfkill check: the adapter's switch (every Bluetooth switch when there is no
    /// adapter), and BlueZ's PowerState "off-blocked" (BlueZ >= 5.64).
    static func rfkill(adapterName: String?, powerState: String?, root: String = "/sys/class/rfkill") -> Check {
        let switches = RfkillSwitch.bluetooth(root: root).filter { adapterName == nil || $0.name == adapterName }
        if let hard = switches.first(where: \.hardBlocked) {
            return .fail("rfkill", "\(hard.name) is hard-blocked (\(hard.id)): a switch or the firmware turned the radio off",
                         hint: "Turn the radio on with the machine's switch or key, or in the firmware set-up.",
                         DoctorFinding(message: "\(hard.name) is hard-blocked by rfkill"))
        }
        if let soft = switches.first(where: \.softBlocked) {
            return .fail("rfkill", "\(soft.name) is soft-blocked (\(soft.id))", hint: "rfkill unblock bluetooth",
                         DoctorFinding(message: "\(soft.name) is soft-blocked by rfkill"))
        }
        if powerState == "off-blocked" {
            return .fail("rfkill", "BlueZ reports PowerState off-blocked", hint: "rfkill unblock bluetooth",
                         DoctorFinding(message: "\(adapterName ?? "the adapter") is blocked by rfkill"))
        }
        let subject = adapterName ?? "Bluetooth"
        return .pass("rfkill", switches.isEmpty ? "no rfkill switch for \(subject)" : "\(switches.map(\.id).joined(separator: ", ")) not blocked")
    }

    /// The controller as BlueZ 5.71 and later describe it (Adapter1.Version, Manufacturer):
    /// `"Bluetooth 5.2, Intel Corp. (0x0002)"`; nil when bluetoothd has neither.
    static func controller(_ info: AdapterInfo) -> String? {
        let version = info.version.map { v in "Bluetooth " + (AssignedNumbers.coreVersionName(for: v) ?? "HCI version \(v)") }
        let maker = info.manufacturer.map { id in
            (AssignedNumbers.companyName(for: id).map { "\($0) " } ?? "company ") + "(0x\(Records.hex4(id)))"
        }
        let parts = [version, maker].compactMap { $0 }
        return parts.isEmpty ? nil : parts.joined(separator: ", ")
    }

    /// `5.66` from BlueZ's own Device ID modalias `usb:v1D6Bp0246d0542` (vendor 0x1D6B, the
    /// Linux Foundation; product 0x0246, BlueZ; version major << 8 | minor, bluez
    /// src/main.c); nil for any other modalias.
    static func bluezVersion(_ modalias: String) -> String? {
        let text = modalias.lowercased()
        guard text.hasPrefix("usb:v1d6bp0246d"), let version = UInt16(text.dropFirst(15).prefix(4), radix: 16) else { return nil }
        return "\(version >> 8).\(version & 0xff)"
    }

    // MARK: - Records

    static func lines(_ checks: [Check], format: OutputFormat) -> [String] {
        switch format {
        case .json:
            return [JSONValue.object([("checks", .array(checks.map { check in
                .object([("name", .string(check.name)), ("ok", .optional(check.ok)), ("detail", .string(check.detail)),
                         ("hint", .optional(check.hint))])
            }))]).serialized()]
        case .text:
            return checks.flatMap { check -> [String] in
                let mark = check.ok.map { $0 ? "ok  " : "FAIL" } ?? "-   "
                let name = check.name.padding(toLength: 11)
                return ["\(mark)  \(name)\(Records.printable(check.detail))"]
                    + (check.hint.map { ["      \("".padding(toLength: 11))hint: \(Records.printable($0))"] } ?? [])
            }
        }
    }
}

/// A finding of `doctor` with no BlueZ error behind it (rfkill, no LE): 69, unavailable.
struct DoctorFinding: CommandError {
    var message: String
    var status: ExitStatus { .unavailable }
    var operation: BLEOperation? { BLEOperation(.adapter) }
    var description: String { message }
}

private extension String {
    func padding(toLength length: Int) -> String {
        count >= length ? self + " " : self + String(repeating: " ", count: length - count)
    }
}
