import Testing
@testable import BlectlCLI
import BlueZKit

/// The property wrappers: a type's declarations are its properties, in the order written,
/// groups in place; a parse fills the same properties in.
@Suite("@Option, @Flag, @Argument, @OptionGroup")
struct DeclarationTests {
    typealias Copy = MadeUpTool.Copy

    @Test("declarations in property order, an optional group's options all or none and none required")
    func declarationsInOrder() {
        let declared = Copy.declarations
        #expect(declared.arguments.map(\.displayName) == ["<source>", "<target>"])
        #expect(declared.arguments.map(\.isOptional) == [false, true])
        #expect(declared.options.map(\.long) == ["tag", "count", "first", "second"])
        #expect(declared.options.map(\.isRepeatable) == [true, false, false, false])
        #expect(declared.options.map(\.isRequired) == [false, false, false, false])
        #expect(declared.options.map(\.defaultDescription) == [nil, "1", nil, nil])
        #expect(declared.allOrNoneGroups == [["first", "second"]])
        #expect(MadeUpTool.Move.declarations.options.map(\.isRequired) == [true, false])
    }

    @Test("a group declared plainly contributes its arguments and options where it stands")
    func groupInPlace() {
        let declared = ReadCommand.declarations
        #expect(declared.arguments.map(\.valueName) == ["address", "characteristic"])
        #expect(declared.options.map(\.long) == ["service", "descriptor", "offset", "timeout", "retries", "from", "parallel", "overall-timeout"])
        #expect(declared.allOrNoneGroups.isEmpty)
    }

    @Test("a command made in code has its defaults and the values it is given, and reads no command line")
    func madeInCode() {
        var copy = Copy()
        #expect(copy.count == 1 && copy.tags == [] && copy.target == nil && copy.pair == nil)
        copy.source = "a"
        copy.tags = ["t"]
        #expect(copy.source == "a" && copy.tags == ["t"])
        #expect(DevicesCommand(onlyPaired: true).onlyPaired)
        #expect(DevicesCommand().timeout == .seconds(10))
    }

    @Test("the first value that does not convert, in declaration order, and validate()'s error, name the subcommand")
    func errorsNameTheSubcommand() throws {
        var values = ParsedValues(optionValues: ["count": ["9"], "level": [""]], arguments: ["source": "a"], subcommand: "copy")
        #expect(throws: UsageError("Invalid value '9' for '--count': expected a whole number of dBm from -5 to 5", subcommand: "copy")) {
            _ = try Copy.parse(values)
        }
        values = ParsedValues(arguments: ["address": sampleAddress, "characteristic": "2a19"], subcommand: "write")
        #expect(throws: UsageError("Missing expected argument '<value>' (or --file)", subcommand: "write")) {
            _ = try WriteCommand.parse(values)
        }
        values.arguments["value"] = "0g"
        #expect(throws: UsageError("Invalid value '0g': expected hex bytes like 0102ff, 01:02:ff or 0x0102ff (1 to 512 bytes)",
                                   subcommand: "write")) {
            _ = try WriteCommand.parse(values)
        }
    }

    @Test("an optional group is nil when none of its options is given, whole when all are")
    func optionalGroup() throws {
        var values = ParsedValues(arguments: ["address": sampleAddress], subcommand: "get-version")
        #expect(try GetVersionCommand.parse(values).vendor == nil)
        values.optionValues = ["vendor-service": ["180f"], "vendor-write": ["2a19"], "vendor-notify": ["2a1a"]]
        let vendor = try #require(try GetVersionCommand.parse(values).vendor)
        #expect(vendor.vendorProtocol == VendorProtocol(service: .batteryService, writeCharacteristic: .batteryLevel,
                                                        notifyCharacteristic: uuid("2a1a")))
    }
}
