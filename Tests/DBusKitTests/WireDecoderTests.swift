import Testing
@testable import DBusKit
import SimulatorHarness
#if canImport(Glibc)
import Glibc
#endif

/// The wire-form decoder against libdbus's iterator, on the same received messages: random
/// values of every type (nested arrays, dictionaries, structures and variants, empty
/// containers, every alignment), BlueZ's shapes, and mutated messages libdbus accepts.
/// Where the wire decoder takes a message it must give exactly what the iterator gives.
@Suite(.cpuBound) struct WireDecoderTests {
    /// A random value of a random type, at most `depth` containers deep.
    static func randomValue(depth: Int, using g: inout SplitMix64) -> DBusValue {
        let kinds = depth > 0 ? 17 : basicKinds
        switch Int.random(in: 0..<kinds, using: &g) {
        case let k where k < basicKinds:
            return randomBasic(k, using: &g)
        case 12:
            return .bytes((0..<Int.random(in: 0...9, using: &g)).map { _ in UInt8.random(in: 0...255, using: &g) })
        case 13:
            // An array of one element type: make one element, then more of the same shape.
            let prototype = randomValue(depth: depth - 1, using: &g)
            let count = Int.random(in: 0...3, using: &g)
            let elements = (0..<count).map { _ in sameType(as: prototype, depth: depth - 1, using: &g) }
            if case .bytes = prototype { return .bytes([]) }
            if case .byte = prototype { return .bytes(elements.compactMap { if case .byte(let b) = $0 { b } else { nil } }) }
            return .array(elementSignature: prototype.signature, elements)
        case 14:
            let key = randomBasic(Int.random(in: 0..<basicKinds, using: &g), using: &g)
            let value = randomValue(depth: depth - 1, using: &g)
            let count = Int.random(in: 0...3, using: &g)
            let entries = (0..<count).map { _ in
                DBusValue.DictEntry(sameType(as: key, depth: 0, using: &g), sameType(as: value, depth: depth - 1, using: &g))
            }
            return .dictionary(keySignature: key.signature, valueSignature: value.signature, entries)
        case 15:
            return .structure((0..<Int.random(in: 1...4, using: &g)).map { _ in randomValue(depth: depth - 1, using: &g) })
        default:
            return .variant(randomValue(depth: depth - 1, using: &g))
        }
    }

    static let basicKinds = 12

    /// A random value of basic type number `kind` (0..<basicKinds).
    static func randomBasic(_ kind: Int, using g: inout SplitMix64) -> DBusValue {
        switch kind {
        case 0: .byte(UInt8.random(in: 0...255, using: &g))
        case 1: .boolean(Bool.random(using: &g))
        case 2: .int16(Int16.random(in: .min ... .max, using: &g))
        case 3: .uint16(UInt16.random(in: 0 ... .max, using: &g))
        case 4: .int32(Int32.random(in: .min ... .max, using: &g))
        case 5: .uint32(UInt32.random(in: 0 ... .max, using: &g))
        case 6: .int64(Int64.random(in: .min ... .max, using: &g))
        case 7: .uint64(UInt64.random(in: 0 ... .max, using: &g))
        case 8: .double(Double(bitPattern: UInt64.random(in: 0 ... .max, using: &g) & 0x7FEF_FFFF_FFFF_FFFF))
        case 9: .string(randomString(using: &g))
        case 10: .objectPath(ObjectPath("/org/bluez/hci0/dev_C0_FF_EE_00_00_0\(Int.random(in: 0...9, using: &g))"))
        default: .signature(["", "s", "a{sv}", "(yv)", "aay"].randomElement(using: &g)!)
        }
    }

    /// Another value with `prototype`'s signature.
    static func sameType(as prototype: DBusValue, depth: Int, using g: inout SplitMix64) -> DBusValue {
        for _ in 0..<200 {
            let candidate = randomValue(depth: max(depth, 0), using: &g)
            if candidate.signature == prototype.signature { return candidate }
        }
        return prototype
    }

    static func randomString(using g: inout SplitMix64) -> String {
        let pool: [Unicode.Scalar] = ["a", "Z", "0", ":", "\"", "\\", "\u{1}", "\u{7F}", "\u{85}", "é", "€", "😀", "\u{10FFFF}"]
        return String(String.UnicodeScalarView((0..<Int.random(in: 0...20, using: &g)).map { _ in pool.randomElement(using: &g)! }))
    }

    @Test func randomBodiesDecodeAsTheIteratorDecodesThem() throws {
        var g = SplitMix64(seed: 0xB0D1_E5)
        var taken = 0
        for round in 0..<2_000 {
            let values = (0..<Int.random(in: 0...4, using: &g)).map { _ in Self.randomValue(depth: 3, using: &g) }
            let bytes = try MessageRoundTrip.marshal(values)
            let both = try #require(MessageRoundTrip.bodyBothWays(bytes), "round \(round): libdbus rejected \(values)")
            #expect(both.iterator == values, "round \(round)")
            let wire = try #require(both.wire, "round \(round): not taken: \(values.map(\.signature))")
            #expect(wire == both.iterator, "round \(round): \(values.map(\.signature))")
            taken += 1
        }
        #expect(taken == 2_000)
    }

    @Test func blueZShapesDecodeAsTheIteratorDecodesThem() throws {
        for seed in DecoderFuzzTests.seeds {
            let both = try #require(MessageRoundTrip.bodyBothWays(try MessageRoundTrip.marshal(seed)))
            #expect(both.wire == seed)
            #expect(both.iterator == seed)
        }
    }

    /// Bytes changed at random: whatever libdbus still accepts, the wire decoder either
    /// declines or gives what the iterator gives.
    @Test func mutatedMessagesDecodeAsTheIteratorDecodesThemOrAreDeclined() throws {
        var g = SplitMix64(seed: 0x3E55_A9E5)
        var accepted = 0
        var mismatches: [String] = []
        for _ in 0..<3_000 {
            let values = g.next() % 2 == 0 ? DecoderFuzzTests.seeds.randomElement(using: &g)!
                : [Self.randomValue(depth: 3, using: &g), Self.randomValue(depth: 2, using: &g)]
            var bytes = try MessageRoundTrip.marshal(values)
            for _ in 0..<Int.random(in: 1...3, using: &g) {
                let index = Int.random(in: 16..<bytes.count, using: &g)
                bytes[index] = UInt8.random(in: 0...255, using: &g)
            }
            guard let both = MessageRoundTrip.bodyBothWays(bytes) else { continue }
            accepted += 1
            if let wire = both.wire, wire != both.iterator { mismatches.append("\(wire) vs \(both.iterator)") }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(2))")
        #expect(accepted > 0)
    }

    /// Unix file descriptors are not in the wire bytes: such a message is left to the iterator.
    @Test func descriptorsAreLeftToTheIterator() throws {
        let values: [DBusValue] = [.string("x"), .unixFD(UnixFileDescriptor(owning: -1))]
        guard let bytes = try? MessageRoundTrip.marshal(values), let both = MessageRoundTrip.bodyBothWays(bytes) else {
            return  // libdbus would not marshal a descriptor it cannot duplicate: nothing to decline
        }
        #expect(both.wire == nil)
    }

    /// A received message's body kept in wire form that the decoder then does not take: a
    /// descriptor type inside a variant, which libdbus accepts with no descriptor attached.
    /// The iterator reads it from the same bytes (it once recursed into the wire form again,
    /// without end, and crashed).
    @Test func aVariantHoldingADescriptorTypeIsReadByTheIterator() throws {
        var bytes = try MessageRoundTrip.marshal([.variant(.uint32(7)), .string("after")])
        // The variant's signature, `1 'u' NUL`, made `1 'h' NUL`.
        let at = try #require((0..<bytes.count - 2).last { bytes[$0] == 1 && bytes[$0 + 1] == UInt8(ascii: "u") && bytes[$0 + 2] == 0 })
        bytes[at + 1] = UInt8(ascii: "h")
        let received = try #require(MessageRoundTrip.demarshalAndDecode(bytes))
        #expect(received.wire != nil)
        // As the iterator reads it: a descriptor object that holds nothing (none attached),
        // then the rest of the body.
        #expect(received.body.count == 2)
        guard case .variant(.unixFD(let fd))? = received.body.first else {
            Issue.record("expected a variant holding a descriptor, got \(received.body)")
            return
        }
        #expect(fd.fileDescriptor == nil)
        #expect(received.body.last == .string("after"))
    }

    /// A message with a descriptor attached (here inside a variant, where the top-level
    /// signature does not show it) is decoded by the iterator at once, never kept in wire form.
    @Test func aMessageWithADescriptorAttachedIsNotKeptInWireForm() throws {
        var fds: [Int32] = [-1, -1]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]); close(fds[1]) }
        let message = try MessageRoundTrip.encodeAndDecodeMessage([.variant(.unixFD(try UnixFileDescriptor.duplicating(fds[0]))), .string("x")])
        #expect(message.wire == nil)
        #expect(message.body.count == 2)
        #expect(message.body.last == .string("x"))
    }

    /// A body first read by many threads at once: every reader gets the same values (the
    /// ones the iterator gives), and every read after them too.
    @Test func aBodyFirstReadByManyThreadsAtOnceGivesEachTheSameValues() async throws {
        var g = SplitMix64(seed: 0x5EED)
        let body = (0..<8).map { _ in Self.randomValue(depth: 3, using: &g) }
        for _ in 0..<50 {
            let message = try MessageRoundTrip.encodeAndDecodeMessage(body)
            let wire = try #require(message.wire)
            let reads = await withTaskGroup(of: [DBusValue].self) { group in
                for _ in 0..<8 { group.addTask { wire.values } }
                return await group.reduce(into: [[DBusValue]]()) { $0.append($1) }
            }
            #expect(reads.count == 8)
            for read in reads { #expect(read == body) }
            #expect(wire.values == body)
        }
    }

    @Test func anEmptyBodyIsNotKeptInWireForm() throws {
        let message = try MessageRoundTrip.encodeAndDecodeMessage([])
        #expect(message.wire == nil)
        #expect(message.body.isEmpty)
    }
}
