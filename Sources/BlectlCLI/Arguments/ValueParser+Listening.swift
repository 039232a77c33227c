/// The values of the options of commands that listen (`scan`, `notify`).

/// What `--timeout inf` stands for: listening until a signal ends blectl. A Duration the
/// clocks can still add and sleep for (100 years), and which nothing else parses to (plain
/// seconds stop at one day).
public enum ListeningTimeout {
    public static let infinite = Duration.seconds(100 * 365 * 86_400)
}

extension ValueParser where Value == Duration {
    /// How long a command listens: seconds as ``seconds`` (0 to 86400, decimals allowed),
    /// or `inf` (exactly so, lower case) for ``ListeningTimeout/infinite``: until interrupted.
    /// Only the commands that listen take it; for the others a limit is a limit.
    static var listeningSeconds: ValueParser<Duration> {
        let seconds = ValueParser.seconds
        return ValueParser(noun: "value", parse: { (text: String) throws(ExpectedValue) -> Duration in
            if text == "inf" { return ListeningTimeout.infinite }
            do throws(ExpectedValue) {
                return try seconds.parse(text)
            } catch {
                throw ExpectedValue(error.text + ", or inf")
            }
        }, describe: { $0 == ListeningTimeout.infinite ? "inf" : seconds.describe($0) })
    }
}

extension ValueParser where Value == Int {
    /// A count of things: a whole decimal number from 1 to 1,000,000,000 (no sign, no
    /// spaces; leading zeros allowed).
    static var count: ValueParser<Int> {
        ValueParser(noun: "value", parse: { (text: String) throws(ExpectedValue) -> Int in
            let digits = text.utf8
            guard !digits.isEmpty, digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
                  let value = Int(text),
                  (1...1_000_000_000).contains(value)
            else { throw ExpectedValue("a whole number from 1 to 1000000000") }
            return value
        }, describe: { "\($0)" })
    }
}
