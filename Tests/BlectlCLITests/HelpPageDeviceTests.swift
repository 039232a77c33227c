import Testing
@testable import BlectlCLI

/// The exact help pages of scan and of the commands that manage devices and adapters:
/// disconnect, pair, unpair, info, devices, adapters.
@Suite("Help text: scan's and the device commands' pages")
struct HelpPageDeviceTests {
    @Test func scanHelpExactly() throws {
        let text = try #require(helpText(["scan", "--help"]))
        #expect(text == """
            OVERVIEW: Scan for Bluetooth LE devices and print each one found.

            Prints one JSON line per device as it is first seen during this scan, until the
            timeout; reaching the timeout is success, even with no device found. With
            --count, the scan ends with success once that many devices are printed, and
            reaching the timeout first exits 124. Devices BlueZ only remembers from earlier
            are not printed. A device must pass every kind of filter given (--rssi-min
            checked by BlueZ and again by blectl; --name, --service, --address and
            --decoded by blectl only). --name matches a device's Name and its Alias (the
            name its user gave it, as bluetoothctl shows it); the record's name is the
            Name. Devices that do not advertise as discoverable are found too. --timeout 0
            connects, checks the adapter and prints nothing.

            Each record has first_seen (when this scan first heard the device) and
            last_seen. With --updates, --min-interval and --changes-only thin out the lines
            of RSSI changes; --lost-after prints {"event":"lost",...} for a device not
            heard for that long, and then prints its next sighting as new.

            USAGE: blectl scan [--timeout <seconds>] [--name <substring> ...]
                               [--service <uuid> ...] [--address <address> ...]
                               [--rssi-min <dbm>] [--decoded <format> ...] [--count <n>]
                               [--updates] [--min-interval <seconds>] [--changes-only]
                               [--lost-after <seconds>] [--bindkey <address=key> ...]
                               [--mqtt <url>] [--mqtt-gateway <name>]
                               [--mqtt-keepalive <seconds>] [--mqtt-queue <n>]
                               [--mqtt-cafile <path>] [--adapter <adapter>]
                               [--format <format>] [--verbose ...] [--quiet]

            OPTIONS:
              -t, --timeout <seconds>
                                      Stop scanning after this many seconds; decimals
                                      allowed, inf to scan until interrupted. (default: 10)
              -n, --name <substring>  Only report devices whose name, or the alias their
                                      user gave them, contains this text, ignoring case.
                                      Repeat to accept any of several.
              -s, --service <uuid>    Only report devices that list this service UUID, such
                                      as 180f: advertised, or found by an earlier
                                      connection. Repeat to accept any of several.
              --address <address>     Only report the device with this address. Repeat to
                                      accept any of several.
              --rssi-min <dbm>        Only report devices heard at this signal strength or
                                      stronger, in dBm from -127 to 20.
              --decoded <format>      Only report devices that advertise in this beacon
                                      format: ibeacon, eddystone or bthome (shown under
                                      decoded, even when undecodable). Repeat to accept any
                                      of several.
              --count <n>             Stop after this many devices; if the timeout comes
                                      first, exit 124.
              --updates               Print a line for every advertisement update, not just
                                      the first sighting of each device.
              --min-interval <seconds>
                                      With --updates, print each device at most once per
                                      this many seconds (decimals allowed), at once when
                                      more than its RSSI changed; the newest update held
                                      meanwhile is printed when the interval ends.
              --changes-only          With --updates, print a device again only when more
                                      than its RSSI changed.
              --lost-after <seconds>  Print a lost event for a device not heard for this
                                      many seconds (decimals allowed); its next sighting is
                                      printed as new.
              --bindkey <address=key>
                                      Decrypt the encrypted BTHome advertisements of the
                                      device with this address with this bind key, 32 hex
                                      digits, as in
                                      54:48:E6:8F:80:A5=231d39c1d7cc1ab1aee224cd096db932
                                      (never printed). Repeat for several devices.
              --mqtt <url>            Also publish each record, retained, with QoS 1, to
                                      this MQTT broker:
                                      mqtt://[user[:password]@]host[:port][/prefix], or
                                      mqtts:// for TLS (ports 1883 and 8883, prefix blectl
                                      by default). Standard output is unchanged. The
                                      topics: MQTT in blectl(1).
              --mqtt-gateway <name>   The gateway's topic level under the prefix; the
                                      host's short name by default.
              --mqtt-keepalive <seconds>
                                      Seconds between MQTT keepalive pings, 5 to 65535: the
                                      broker publishes the last will after 1.5 times this
                                      without a word, or as soon as the connection drops.
                                      (default: 60)
              --mqtt-queue <n>        Records that may wait for the broker's
                                      acknowledgement, 1 to 1000000; beyond them new
                                      records are dropped and counted. (default: 10000)
              --mqtt-cafile <path>    With mqtts://, trust the certificate authorities in
                                      this PEM file instead of those in /etc/ssl/certs.
              --adapter <adapter>     Bluetooth adapter to use, like hci0; without it, the
                                      first powered adapter.
              -f, --format <format>   Output format: json or text. (default: json)
              -v, --verbose           Trace on stderr every D-Bus call blectl makes, its
                                      reply and every signal it acts on; twice (-vv), every
                                      signal received, dropped ones too.
              -q, --quiet             No progress line on stderr when it is a terminal.
              -h, --help              Show help information.

            """)
    }

    @Test func disconnectHelpExactly() throws {
        let text = try #require(helpText(["disconnect", "--help"]))
        #expect(text == """
            OVERVIEW: Disconnect a device, whoever connected it.

            Asks BlueZ to disconnect the device and waits until the link is down. A device
            that is not connected, or that BlueZ does not know, is left alone: that is
            success too (was_connected false). blectl never scans for it: a device BlueZ
            does not know has no link to close.

            USAGE: blectl disconnect <address> ... [--timeout <seconds>] [--from <path>]
                                     [--parallel <count>] [--overall-timeout <seconds>]
                                     [--adapter <adapter>] [--format <format>]
                                     [--verbose ...] [--quiet]

            ARGUMENTS:
              <address>               The device's address, like C0:FF:EE:00:00:01; several
                                      for several devices (one JSON line each), or none
                                      with --from.

            OPTIONS:
              -t, --timeout <seconds>
                                      Give up waiting for BlueZ after this many seconds
                                      (for each device, with several); decimals allowed.
                                      (default: 20)
              --from <path>           Also take the devices from this file (- for standard
                                      input), one a line: an address, or a JSON object with
                                      an "address" field (JSON Lines, as scan prints). Each
                                      is started as soon as its line is read; blank lines
                                      are skipped, an address given twice is taken once.
              --parallel <count>      Work on at most this many devices at once, 1 to 64.
                                      (default: 4)
              --overall-timeout <seconds>
                                      End the whole run after this many seconds, every
                                      device not done by then reported as timed out;
                                      decimals allowed, more than 0. --timeout is each
                                      device's own limit.
              --adapter <adapter>     Bluetooth adapter to use, like hci0; without it, the
                                      first powered adapter.
              -f, --format <format>   Output format: json or text. (default: json)
              -v, --verbose           Trace on stderr every D-Bus call blectl makes, its
                                      reply and every signal it acts on; twice (-vv), every
                                      signal received, dropped ones too.
              -q, --quiet             No progress line on stderr when it is a terminal.
              -h, --help              Show help information.

            """)
    }

    @Test func pairHelpExactly() throws {
        let text = try #require(helpText(["pair", "--help"]))
        #expect(text == """
            OVERVIEW: Pair with a device, and print its pairing state.

            Finds the device (scanning if BlueZ does not know it), registers a pairing
            agent of blectl's own (NoInputNoOutput, or KeyboardOnly with --passkey) and
            asks BlueZ to pair, which connects the device if needed; a link the pairing
            opened is closed at the end. A device paired already is left as it is
            (success). A failed pairing, such as a wrong passkey, exits 77
            (authentication_failed).

            USAGE: blectl pair <address> [--timeout <seconds>] [--trust]
                               [--passkey <passkey>] [--adapter <adapter>]
                               [--format <format>] [--verbose ...] [--quiet]

            ARGUMENTS:
              <address>               The device's address, like C0:FF:EE:00:00:01.

            OPTIONS:
              -t, --timeout <seconds>
                                      Give up after this many seconds, connecting included;
                                      decimals allowed, more than 0. (default: 20)
              --trust                 Also mark the device trusted (Device1.Trusted), so
                                      that BlueZ lets it connect without asking.
              --passkey <passkey>     The passkey the device displays, 0 to 999999:
                                      blectl's agent types it when BlueZ asks. Without it,
                                      Just Works only.
              --adapter <adapter>     Bluetooth adapter to use, like hci0; without it, the
                                      first powered adapter.
              -f, --format <format>   Output format: json or text. (default: json)
              -v, --verbose           Trace on stderr every D-Bus call blectl makes, its
                                      reply and every signal it acts on; twice (-vv), every
                                      signal received, dropped ones too.
              -q, --quiet             No progress line on stderr when it is a terminal.
              -h, --help              Show help information.

            """)
    }

    @Test func unpairHelpExactly() throws {
        let text = try #require(helpText(["unpair", "--help"]))
        #expect(text == """
            OVERVIEW: Remove a device and its pairing from BlueZ.

            Asks BlueZ to remove the device (Adapter1.RemoveDevice): its pairing and keys
            go with it, and a connected device is disconnected first, whoever connected it.
            A device BlueZ does not know, because it never saw it or it was removed
            already, exits 2 (device_not_found); blectl does not scan for it.

            USAGE: blectl unpair <address> [--timeout <seconds>] [--adapter <adapter>]
                                 [--format <format>] [--verbose ...] [--quiet]

            ARGUMENTS:
              <address>               The device's address, like C0:FF:EE:00:00:01.

            OPTIONS:
              -t, --timeout <seconds>
                                      Give up after this many seconds; decimals allowed.
                                      (default: 20)
              --adapter <adapter>     Bluetooth adapter to use, like hci0; without it, the
                                      first powered adapter.
              -f, --format <format>   Output format: json or text. (default: json)
              -v, --verbose           Trace on stderr every D-Bus call blectl makes, its
                                      reply and every signal it acts on; twice (-vv), every
                                      signal received, dropped ones too.
              -q, --quiet             No progress line on stderr when it is a terminal.
              -h, --help              Show help information.

            """)
    }

    @Test func infoHelpExactly() throws {
        let text = try #require(helpText(["info", "--help"]))
        #expect(text == """
            OVERVIEW: Show what BlueZ knows about a device.

            Prints the device's org.bluez.Device1 properties (and Battery1's percentage) as
            one object, null where BlueZ has no value, without connecting. A device BlueZ
            does not know is looked for by scanning until the timeout (exit 2 if it is not
            heard; scanning needs a powered adapter, else exit 69); one BlueZ knows is
            printed even when the adapter is powered off. Without --adapter: the first
            powered adapter, else the first one.

            USAGE: blectl info <address> ... [--timeout <seconds>] [--from <path>]
                               [--parallel <count>] [--overall-timeout <seconds>]
                               [--bindkey <address=key> ...] [--adapter <adapter>]
                               [--format <format>] [--verbose ...] [--quiet]

            ARGUMENTS:
              <address>               The device's address, like C0:FF:EE:00:00:01; several
                                      for several devices (one JSON line each), or none
                                      with --from.

            OPTIONS:
              -t, --timeout <seconds>
                                      Give up after this many seconds (on each device, with
                                      several), scanning for a device BlueZ does not know
                                      included; decimals allowed. (default: 10)
              --from <path>           Also take the devices from this file (- for standard
                                      input), one a line: an address, or a JSON object with
                                      an "address" field (JSON Lines, as scan prints). Each
                                      is started as soon as its line is read; blank lines
                                      are skipped, an address given twice is taken once.
              --parallel <count>      Work on at most this many devices at once, 1 to 64.
                                      (default: 4)
              --overall-timeout <seconds>
                                      End the whole run after this many seconds, every
                                      device not done by then reported as timed out;
                                      decimals allowed, more than 0. --timeout is each
                                      device's own limit.
              --bindkey <address=key>
                                      Decrypt the encrypted BTHome advertisements of the
                                      device with this address with this bind key, 32 hex
                                      digits, as in
                                      54:48:E6:8F:80:A5=231d39c1d7cc1ab1aee224cd096db932
                                      (never printed). Repeat for several devices.
              --adapter <adapter>     Bluetooth adapter to use, like hci0; without it, the
                                      first powered adapter.
              -f, --format <format>   Output format: json or text. (default: json)
              -v, --verbose           Trace on stderr every D-Bus call blectl makes, its
                                      reply and every signal it acts on; twice (-vv), every
                                      signal received, dropped ones too.
              -q, --quiet             No progress line on stderr when it is a terminal.
              -h, --help              Show help information.

            """)
    }

    @Test func devicesHelpExactly() throws {
        let text = try #require(helpText(["devices", "--help"]))
        #expect(text == """
            OVERVIEW: List the devices BlueZ knows, without scanning.

            Prints one JSON line per device BlueZ has under the adapter, as info prints it,
            ordered by address: devices heard earlier and still cached, paired ones,
            connected ones, whether in range or not. Nothing is scanned or connected, and
            the adapter may be powered off; without --adapter: the first powered adapter,
            else the first one. With --format text, a table; its FLAGS column shows P
            paired, B bonded, T trusted, X blocked, C connected, R services resolved (- no,
            ? unknown).

            USAGE: blectl devices [--timeout <seconds>] [--connected] [--paired]
                                  [--bindkey <address=key> ...] [--adapter <adapter>]
                                  [--format <format>] [--verbose ...] [--quiet]

            OPTIONS:
              -t, --timeout <seconds>
                                      Give up after this many seconds; decimals allowed.
                                      (default: 10)
              --connected             Only list devices that are connected.
              --paired                Only list devices that are paired. With --connected,
                                      only devices that are both.
              --bindkey <address=key>
                                      Decrypt the encrypted BTHome advertisements of the
                                      device with this address with this bind key, 32 hex
                                      digits, as in
                                      54:48:E6:8F:80:A5=231d39c1d7cc1ab1aee224cd096db932
                                      (never printed). Repeat for several devices.
              --adapter <adapter>     Bluetooth adapter to use, like hci0; without it, the
                                      first powered adapter.
              -f, --format <format>   Output format: json or text. (default: json)
              -v, --verbose           Trace on stderr every D-Bus call blectl makes, its
                                      reply and every signal it acts on; twice (-vv), every
                                      signal received, dropped ones too.
              -q, --quiet             No progress line on stderr when it is a terminal.
              -h, --help              Show help information.

            """)
    }

    @Test func adaptersHelpExactly() throws {
        let text = try #require(helpText(["adapters", "--help"]))
        #expect(text == """
            OVERVIEW: List the Bluetooth adapters, powered or not.

            Prints one JSON line per adapter (org.bluez.Adapter1), ordered by object path;
            with --adapter, only that one (exit 69 if BlueZ has no such adapter). No
            adapter needs to be powered; when bluetoothd runs but has no adapter, nothing
            is printed and the exit status is 0.

            USAGE: blectl adapters [--timeout <seconds>] [--adapter <adapter>]
                                   [--format <format>] [--verbose ...] [--quiet]

            OPTIONS:
              -t, --timeout <seconds>
                                      Give up after this many seconds; decimals allowed.
                                      (default: 10)
              --adapter <adapter>     Bluetooth adapter to use, like hci0; without it, the
                                      first powered adapter.
              -f, --format <format>   Output format: json or text. (default: json)
              -v, --verbose           Trace on stderr every D-Bus call blectl makes, its
                                      reply and every signal it acts on; twice (-vv), every
                                      signal received, dropped ones too.
              -q, --quiet             No progress line on stderr when it is a terminal.
              -h, --help              Show help information.

            """)
    }
}
