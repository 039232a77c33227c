/// A D-Bus match rule (D-Bus specification, "Match Rules"): which signals a connection asks
/// the bus to route to it, and which of the received signals a local handler gets.
public struct MatchRule: Hashable, Sendable, CustomStringConvertible {
    /// `sender=`: a well-known or unique bus name. Locally only a unique name (`:1.42`) is
    /// compared; a well-known name is resolved by the bus daemon, which only routes matching
    /// signals.
    public var sender: String?
    public var interface: String?
    public var member: String?
    public var path: ObjectPath?
    public var pathNamespace: ObjectPath?
    /// `arg0=`: the first body argument, when it is a string.
    public var arg0: String?

    public init(sender: String? = nil, interface: String? = nil, member: String? = nil,
                path: ObjectPath? = nil, pathNamespace: ObjectPath? = nil, arg0: String? = nil) {
        self.sender = sender
        self.interface = interface
        self.member = member
        self.path = path
        self.pathNamespace = pathNamespace
        self.arg0 = arg0
    }

    /// The rule string for `org.freedesktop.DBus.AddMatch` (`type='signal',sender='org.bluez',...`).
    public var description: String {
        // Appended to one string, not collected and `joined(separator:)`: that generic call
        // is not specialized, and its first use looks up conformances at run time, a cost
        // every start-up pays (BENCHMARKS.md, "Mechanisms kept for speed").
        var rule = "type='signal'"
        func add(_ key: String, _ value: String?) {
            guard let value else { return }
            // Single quotes cannot be escaped inside quotes in match rules: close, escape, reopen.
            rule += ","
            rule += key
            rule += "='"
            rule += value.singleQuotesEscapedForMatchRule
            rule += "'"
        }
        add("sender", sender)
        add("interface", interface)
        add("member", member)
        add("path", path?.rawValue)
        add("path_namespace", pathNamespace?.rawValue)
        add("arg0", arg0)
        return rule
    }

    /// Whether a received signal matches this rule (see ``sender`` for how senders compare).
    public func matches(_ message: Message) -> Bool {
        guard message.kind == .signal,
              matches(SignalHeader(sender: message.sender, path: message.path, interface: message.interface, member: message.member))
        else { return false }
        return matchesArguments(of: message)
    }

    /// Whether a signal with these header fields matches every part of this rule but
    /// ``arg0`` (which needs the body: ``matchesArguments(of:)``).
    func matches(_ header: SignalHeader) -> Bool {
        if let interface, header.interface != interface { return false }
        if let member, header.member != member { return false }
        if let path, header.path != path { return false }
        if let pathNamespace {
            guard let messagePath = header.path, messagePath.isDescendant(ofOrEqualTo: pathNamespace) else { return false }
        }
        if let sender, sender.hasPrefix(":"), header.sender != sender { return false }
        return true
    }

    /// Whether the signal's body matches ``arg0`` (true for a rule without one).
    func matchesArguments(of message: Message) -> Bool {
        guard let arg0 else { return true }
        return message.body.first?.string == arg0
    }
}

extension String {
    /// The string with each `'` written `'\''` (close the quotes, an escaped quote, reopen),
    /// read as UTF-8 bytes, as the bus daemon reads the rule: `'` is ASCII, never part of a
    /// multi-byte sequence, and a quote followed by a combining mark is one Character but
    /// still a quote to the daemon.
    var singleQuotesEscapedForMatchRule: String {
        let quote = UInt8(ascii: "'")
        guard utf8.contains(quote) else { return self }
        var escaped = [UInt8]()
        escaped.reserveCapacity(utf8.count + 8)
        for byte in utf8 {
            if byte == quote { escaped.append(contentsOf: [quote, UInt8(ascii: "\\"), quote, quote]) } else { escaped.append(byte) }
        }
        return String(decoding: escaped, as: UTF8.self)
    }
}
