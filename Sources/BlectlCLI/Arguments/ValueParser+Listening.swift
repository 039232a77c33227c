/// The values of the options of commands that listen (`scan`, `notify`).

/// What `--timeout inf` stands for: listening until a signal ends blectl. A Duration the
/// clocks can still add and sleep for (100 years), and which nothing else parses to (plain
/// seconds stop at one day).
enum ListeningTimeout {
    static let infinite = Duration.seconds(100 * 365 * 86_400)
}

extension ValueParser where Value == Duration {
    /// How long a command listens: seconds as ``seconds(allowingZero:)`` (up to 86400, decimals allowed),
    /// or `inf` (exactly so, lower case) for ``ListeningTimeout/infinite``: until interrupted.
    /// Only the commands that listen take it; for the others a limit is a limit.
    /// - Parameter allowingZero: false for `notify`, which needs a connection to listen on.
    static func listeningSeconds(allowingZero: Bool = true) -> ValueParser<Duration> {
        let seconds = ValueParser.seconds(allowingZero: allowingZero)
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
    /// A count of things: a whole number from 1 to 1,000,000,000 in the number grammar
    /// (``NumberText``: digits only, leading zeros allowed).
    static var count: ValueParser<Int> { .wholeNumber(in: 1...1_000_000_000) }
}
