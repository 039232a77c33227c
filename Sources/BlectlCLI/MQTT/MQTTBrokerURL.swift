/// Where `--mqtt` publishes: `mqtt://[user[:password]@]host[:port][/prefix]`, or `mqtts://`
/// for MQTT over TLS.
///
/// The user and password may be percent-encoded (`%40` for `@`, `%3A` for `:`); a host that is
/// an IPv6 address is written in brackets (`mqtt://[::1]:1883`). The port defaults to the
/// IANA-registered 1883 (`mqtt`) or 8883 (`mqtts`), as MQTT 3.1.1 section 4.2 names them. The
/// path is the topic prefix, every topic's first levels: without one (or with `/` alone) it is
/// ``defaultPrefix``; it may hold several levels (`/home/ble`) but no wildcard (`+`, `#`) and
/// no empty level, since topic names carry neither (MQTT 3.1.1 section 4.7).
struct MQTTBrokerURL: Sendable, Equatable, CustomStringConvertible {
    /// `true` for `mqtts://`.
    var usesTLS: Bool
    var host: String
    /// 1 to 65535.
    var port: Int
    /// Percent-decoded; nil when the URL gives none.
    var username: String?
    /// Percent-decoded; nil when the URL gives none (a user alone logs in without one).
    var password: String?
    /// The topic prefix, without leading or trailing `/`: `blectl`, `home/ble`.
    var prefix: String

    static let defaultPrefix = "blectl"
    static let defaultPort = 1883
    static let defaultTLSPort = 8883

    /// The URL as given, the password replaced by `***` (for messages and `--help`).
    var description: String {
        var text = usesTLS ? "mqtts://" : "mqtt://"
        if let username { text += username + (password == nil ? "@" : ":***@") }
        text += host.contains(":") ? "[\(host)]" : host
        return text + ":\(port)/\(prefix)"
    }

}

extension MQTTBrokerURL {
    /// Parses `text`.
    /// - Throws: ``ExpectedValue`` saying what is wrong: another scheme, no host, a port that is
    ///   not 1 to 65535, a bad percent escape, a query or fragment, a prefix with a wildcard or an
    ///   empty level.
    init(parsing text: String) throws(ExpectedValue) {
        let rest: Substring
        if text.hasPrefix("mqtt://") {
            usesTLS = false
            rest = text.dropFirst("mqtt://".count)
        } else if text.hasPrefix("mqtts://") {
            usesTLS = true
            rest = text.dropFirst("mqtts://".count)
        } else {
            throw ExpectedValue("a URL starting with mqtt:// or mqtts://")
        }
        // A '#' would start a fragment; in the prefix it would be a wildcard (a password
        // holding one writes it %23).
        guard !rest.contains("?"), !rest.contains("#") else {
            throw ExpectedValue("a URL without '?' or '#' (percent-encode them in a user or password)")
        }
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        var authority = rest[..<slash]
        let path = rest[slash...]

        if let at = authority.lastIndex(of: "@") {
            let userinfo = authority[..<at]
            authority = authority[authority.index(after: at)...]
            if let colon = userinfo.firstIndex(of: ":") {
                username = try Self.percentDecoded(userinfo[..<colon])
                password = try Self.percentDecoded(userinfo[userinfo.index(after: colon)...])
            } else {
                username = try Self.percentDecoded(userinfo)
                password = nil
            }
            guard username?.isEmpty == false else { throw ExpectedValue("a user name before ':' or '@'") }
        } else {
            username = nil
            password = nil
        }

        let portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw ExpectedValue("a ']' closing the IPv6 address") }
            host = String(authority[authority.index(after: authority.startIndex)..<close])
            let after = authority[authority.index(after: close)...]
            guard after.isEmpty || after.hasPrefix(":") else { throw ExpectedValue("':port' or nothing after the IPv6 address") }
            portText = after.isEmpty ? nil : after.dropFirst()
        } else if let colon = authority.firstIndex(of: ":") {
            host = String(authority[..<colon])
            portText = authority[authority.index(after: colon)...]
        } else {
            host = String(authority)
            portText = nil
        }
        guard !host.isEmpty else { throw ExpectedValue("a host name or address after \(usesTLS ? "mqtts" : "mqtt")://") }
        if let portText {
            guard portText.allSatisfy(\.isASCII), let port = Int(portText), (1...65535).contains(port) else {
                throw ExpectedValue("a port from 1 to 65535 after the host")
            }
            self.port = port
        } else {
            port = usesTLS ? Self.defaultTLSPort : Self.defaultPort
        }

        let levels = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        let trimmed = levels.last == "" ? levels.dropLast() : levels
        if trimmed.isEmpty {
            prefix = Self.defaultPrefix
        } else {
            guard trimmed.allSatisfy({ !$0.isEmpty }) else { throw ExpectedValue("a topic prefix with no empty level (no '//')") }
            let decoded = try trimmed.map { (level) throws(ExpectedValue) in try Self.percentDecoded(level) }
            guard decoded.allSatisfy({ !$0.contains("+") && !$0.contains("#") && !$0.contains("\0") }) else {
                throw ExpectedValue("a topic prefix without the wildcards '+' and '#'")
            }
            // Topics beginning with '$' are the broker's ($SYS): a client's messages there are
            // taken and dropped, and '#' does not match them (MQTT 3.1.1 section 4.7.2).
            guard !decoded[0].hasPrefix("$") else { throw ExpectedValue("a topic prefix not beginning with '$' (the broker's topics)") }
            prefix = decoded.joined(separator: "/")
        }
    }

    /// `text` with each `%XX` replaced by its byte; the result must be UTF-8.
    private static func percentDecoded(_ text: Substring) throws(ExpectedValue) -> String {
        var bytes: [UInt8] = []
        var utf8 = text.utf8.makeIterator()
        while let byte = utf8.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = utf8.next().flatMap(hexDigit), let low = utf8.next().flatMap(hexDigit) else {
                throw ExpectedValue("two hex digits after each '%'")
            }
            bytes.append(high << 4 | low)
        }
        guard let decoded = String(validating: bytes, as: UTF8.self) else { throw ExpectedValue("UTF-8 after percent-decoding") }
        return decoded
    }

    private static func hexDigit(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
