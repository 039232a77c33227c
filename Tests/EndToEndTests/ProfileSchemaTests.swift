// profiles/blectl-profile.schema.json, the GATT profile `blectl serve` takes, against what
// `blectl connect` prints, through profiles/validate.

import Foundation
import SimulatorHarness
import Testing

/// What `connect` prints, with and without `--values`, is a profile that
/// profiles/blectl-profile.schema.json accepts (profiles/validate, with the Python package
/// jsonschema that `make oracles` installs into the venv); and the check is not vacuous:
/// a broken profile is refused, naming where.
@Suite("connect's output against the profile schema")
struct ProfileSchemaTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The venv's python: BLECTL_ORACLE_PYTHON (make test sets it), else the repository's .venv.
    static var python: String {
        if let path = ProcessInfo.processInfo.environment["BLECTL_ORACLE_PYTHON"], !path.isEmpty { return path }
        return root.appendingPathComponent(".venv/bin/python").path
    }

    /// profiles/validate on `profile` (written to a file of its own): exit status and output.
    static func validate(_ profile: String) async throws -> ProcessResult {
        try #require(FileManager.default.isExecutableFile(atPath: python), "no python at \(python): run `make oracles` (jsonschema in the venv)")
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("blectl-profile-\(UUID().uuidString).json")
        try Data(profile.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let script = root.appendingPathComponent("profiles/validate").path
        return try await offThread { try runToEnd(python, [script, file.path], environment: [:]) }
    }

    @Test("connect --values and plain connect print valid profiles", arguments: [
        ([World.probe, "--values"], [:]),
        ([World.toolbox, "--values"], World.toolboxFaults),
        ([World.probe], [:]),
    ] as [([String], [String: String])])
    func outputIsValid(arguments: [String], faults: [String: String]) async throws {
        let run = try await Sim.with(faults: faults) { sim in await sim.blectl(["connect"] + arguments) }
        #expect(run.status == 0, "\(run)")
        let result = try await Self.validate(run.stdout)
        #expect(result.status == 0, "profiles/validate: \(result.stdout) \(result.stderr)")
        #expect(result.stdout == "")
    }

    @Test("a profile the schema refuses: exit 1 and where (a value of one hex digit, an unknown member)")
    func brokenProfileRefused() async throws {
        let oddDigit = try await Self.validate(#"{"services":[{"uuid":"180f","characteristics":[{"uuid":"2a19","flags":["read"],"value":"5"}]}]}"#)
        #expect(oddDigit.status == 1)
        #expect(oddDigit.stdout.hasSuffix(": $.services[0].characteristics[0].value: '5' is not valid under any of the given schemas\n"),
                "\(oddDigit.stdout)")
        let unknown = try await Self.validate(#"{"services":[],"rssi":-55}"#)
        #expect(unknown.status == 1)
        #expect(unknown.stdout.hasSuffix(": $: Additional properties are not allowed ('rssi' was unexpected)\n"), "\(unknown.stdout)")
    }
}
