import Testing
@testable import BlectlCLI

/// The exact help pages of the GATT toolbox: read, write, request, notify.
@Suite("Help text: the GATT toolbox's pages")
struct HelpPageGATTTests {
    @Test func readHelpExactly() throws {
        let text = try #require(helpText(["read", "--help"]))
        #expect(text == """
            OVERVIEW: Read a characteristic's value.

            Finds the device (scanning if BlueZ does not know it), connects, reads the
            characteristic, or with --descriptor one of its descriptors, and prints the
            value in hex, as text when it is clean UTF-8, and decoded when the
            characteristic is one the GATT Specification Supplement defines or has a
            Presentation Format descriptor; then disconnects, unless the device was already
            connected. A characteristic without the read flag is refused before anything is
            sent.

            USAGE: blectl read <address> ... <characteristic> [--service <uuid>]
                               [--descriptor <uuid>] [--offset <bytes>]
                               [--timeout <seconds>] [--retries <n>] [--from <path>]
                               [--parallel <count>] [--overall-timeout <seconds>]
                               [--adapter <adapter>] [--format <format>] [--verbose ...]
                               [--quiet]

            ARGUMENTS:
              <address>               The device's address, like C0:FF:EE:00:00:01; several
                                      for several devices (one JSON line each), or none
                                      with --from.
              <characteristic>        The characteristic's UUID: 16-bit (2a19), 32-bit or
                                      128-bit.

            OPTIONS:
              -s, --service <uuid>    The service the characteristic is in, when its UUID
                                      occurs in several services.
              --descriptor <uuid>     Read this descriptor of the characteristic instead,
                                      such as 2901.
              --offset <bytes>        Start this many bytes into the value, 0 to 65535.
                                      (default: 0)
              -t, --timeout <seconds>
                                      Give up on a device after this many seconds,
                                      connecting included (each device its own); decimals
                                      allowed, more than 0. (default: 20)
              --retries <n>           Try a transient failure (one whose error has
                                      retryable true) again up to this many times, with a
                                      pause of 0.25 s doubling to 2 s, within the timeout.
                                      (default: 0)
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

    @Test func writeHelpExactly() throws {
        let text = try #require(helpText(["write", "--help"]))
        #expect(text == """
            OVERVIEW: Write a value to a characteristic.

            Finds the device (scanning if BlueZ does not know it), connects, writes the
            value with response (the device acknowledges it) or, with --without-response,
            without; then disconnects, unless the device was already connected. A
            characteristic whose flags do not allow that kind of write is refused before
            anything is sent (exit 3).

            With --without-response --file PATH (or - for standard input) instead of
            <value>, sends the bytes as write-without-response packets of the link's
            maximum size, MTU - 3 bytes (512 at most) each but the last: through the socket
            BlueZ hands over with AcquireWrite, waiting whenever it is full, or, when BlueZ
            refuses AcquireWrite, by WriteValue with type command. Prints address, service,
            characteristic, bytes, packets, mtu, acquired and seconds once BlueZ has taken
            every packet. --timeout then bounds finding, connecting and acquiring, and then
            each wait for the link to take the next packet; reading the input has no limit.

            USAGE: blectl write <address> <characteristic> [<value>] [--service <uuid>]
                                [--text] [--without-response] [--file <path>]
                                [--timeout <seconds>] [--retries <n>] [--adapter <adapter>]
                                [--format <format>] [--verbose ...] [--quiet]

            ARGUMENTS:
              <address>               The device's address, like C0:FF:EE:00:00:01.
              <characteristic>        The characteristic's UUID: 16-bit (2a19), 32-bit or
                                      128-bit.
              <value>                 The bytes to write: hex (0102ff, 01:02:ff or
                                      0x0102ff), or text with --text. Not with --file.

            OPTIONS:
              -s, --service <uuid>    The service the characteristic is in, when its UUID
                                      occurs in several services.
              --text                  Take <value> as UTF-8 text instead of hex bytes.
              --without-response      Write without response (ATT Write Command) instead of
                                      with response; the characteristic must allow it.
                                      Required with --file.
              --file <path>           Stream this file (- for standard input) as
                                      write-without-response packets of the link's maximum
                                      size (MTU - 3 bytes, 512 at most), through
                                      AcquireWrite when BlueZ grants it, else WriteValue.
                                      Needs --without-response; takes the place of <value>.
              -t, --timeout <seconds>
                                      Give up after this many seconds, connecting included;
                                      decimals allowed, more than 0. (default: 20)
              --retries <n>           Try a transient failure (one whose error has
                                      retryable true) again up to this many times, with a
                                      pause of 0.25 s doubling to 2 s, within the timeout.
                                      (default: 0)
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

    @Test func requestHelpExactly() throws {
        let text = try #require(helpText(["request", "--help"]))
        #expect(text == """
            OVERVIEW: Write a request and print the responses notified.

            Finds the device (scanning if BlueZ does not know it), connects, subscribes to
            the notify characteristic, writes the request to the write characteristic, and
            prints the first --count notifications that start with --response-prefix,
            counting those that come before the write's reply; other notifications are
            ignored. Then stops the notifications and disconnects, unless the device was
            already connected. Characteristics whose flags allow no write or no
            notification are refused before anything is sent.

            USAGE: blectl request <address> <value> --write <uuid> --notify <uuid>
                                  [--service <uuid>] [--text] [--response-prefix <hex>]
                                  [--count <n>] [--timeout <seconds>] [--retries <n>]
                                  [--adapter <adapter>] [--format <format>] [--verbose ...]
                                  [--quiet]

            ARGUMENTS:
              <address>               The device's address, like C0:FF:EE:00:00:01.
              <value>                 The request's bytes: hex (0102ff, 01:02:ff or
                                      0x0102ff), or text with --text.

            OPTIONS:
              --write <uuid>          The characteristic the request is written to.
              --notify <uuid>         The characteristic whose notifications carry the
                                      responses.
              -s, --service <uuid>    The service both characteristics are in, when their
                                      UUIDs occur in several services.
              --text                  Take <value> as UTF-8 text instead of hex bytes.
              --response-prefix <hex>
                                      Only notifications that start with these bytes are
                                      responses; without it, every notification is.
              --count <n>             Responses to wait for, 1 to 1000. (default: 1)
              -t, --timeout <seconds>
                                      Give up after this many seconds, connecting included;
                                      decimals allowed, more than 0. (default: 20)
              --retries <n>           Try a transient failure (one whose error has
                                      retryable true) again up to this many times, with a
                                      pause of 0.25 s doubling to 2 s, within the timeout.
                                      (default: 0)
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

    @Test func notifyHelpExactly() throws {
        let text = try #require(helpText(["notify", "--help"]))
        #expect(text == """
            OVERVIEW: Print the notifications of a characteristic.

            Subscribes to the characteristic's notifications (or indications) and prints
            one JSON line per value as it arrives, in order, each with a sequence number
            from 1 and the time it was received. Ends with success at the timeout or after
            --count values. The timeout counts from the start: running out before the
            subscription is set up exits 124 naming the stage. Without --reconnect, a lost
            link ends the command with status 4 after the values received.

            Only what the device notifies is printed: the values come through the socket
            BlueZ hands over with AcquireNotify, never what another client reads. BlueZ
            allows one such client per characteristic: while another holds it, notify exits
            5 (busy). Where AcquireNotify cannot be had (the characteristic only indicates,
            the bus cannot pass file descriptors, or another client has a StartNotify
            session on it), notify uses StartNotify and says why on standard error (event
            notify_method): values other clients read are then printed too. --start-notify
            asks for StartNotify, whose sessions other clients can share.

            USAGE: blectl notify <address> <characteristic> [--service <uuid>]
                                 [--timeout <seconds>] [--count <n>] [--reconnect]
                                 [--start-notify] [--mqtt <url>] [--mqtt-gateway <name>]
                                 [--mqtt-keepalive <seconds>] [--mqtt-queue <n>]
                                 [--mqtt-cafile <path>] [--adapter <adapter>]
                                 [--format <format>] [--verbose ...] [--quiet]

            ARGUMENTS:
              <address>               The device's address, like C0:FF:EE:00:00:01.
              <characteristic>        The characteristic's UUID: 16-bit (2a19), 32-bit or
                                      128-bit.

            OPTIONS:
              -s, --service <uuid>    The service the characteristic is in, when its UUID
                                      occurs in several services.
              -t, --timeout <seconds>
                                      Stop after this many seconds, connecting included;
                                      decimals allowed, more than 0, inf for no limit.
                                      (default: 10)
              --count <n>             Stop after this many values; if the timeout comes
                                      first, exit 124.
              --reconnect             When the link drops, reconnect within the timeout and
                                      go on; losses and reconnections are reported on
                                      standard error.
              --start-notify          Subscribe with StartNotify, which other clients can
                                      share, instead of AcquireNotify; values other clients
                                      read are printed too.
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
}
