import Testing
@testable import BlectlCLI
@testable import BlueZKit

/// `scan`'s throttle and presence rules (``ScanThrottle``), driven with made-up times: the
/// monotonic instant `t0 + s` seconds, and a wall-clock time of `wall + s` for sightings.
@Suite struct ScanThrottleTests {
    static let t0 = ContinuousClock.now
    static let wall = Duration.seconds(1_796_026_500)
    static let probe = BluetoothAddress("C0:FF:EE:00:00:01")!
    static let other = BluetoothAddress("C0:FF:EE:00:00:02")!

    static func at(_ seconds: Double) -> ContinuousClock.Instant { t0 + .milliseconds(Int64(seconds * 1000)) }

    /// A sighting of `address` at `seconds`, with this RSSI and manufacturer data.
    static func sighting(_ address: BluetoothAddress = probe, at seconds: Double, rssi: Int = -60,
                         data: [UInt8] = [1, 2]) -> Advertisement {
        var a = TextFormatTests.advertisement
        a.address = address
        a.properties.address = address
        a.properties.rssi = rssi
        a.properties.manufacturerData = [0x05F1: data]
        a.receivedAt = wall + .milliseconds(Int64(seconds * 1000))
        return a
    }

    static func firstSeen(_ seconds: Double) -> ScanSighting.FirstSeen {
        ScanSighting.FirstSeen(wall + .milliseconds(Int64(seconds * 1000)))
    }

    /// Feeds `sightings` (seconds, RSSI, data) and says which were printed at once.
    static func printed(_ throttle: inout ScanThrottle, _ sightings: [(Double, Int, [UInt8])]) -> [Bool] {
        sightings.map { seconds, rssi, data in
            throttle.sighted(sighting(at: seconds, rssi: rssi, data: data), at: at(seconds)) != .skip
        }
    }

    @Test("without --updates: the first sighting only, and nothing timed")
    func firstSightingOnly() {
        var throttle = ScanThrottle(updates: .none)
        #expect(!throttle.isTimed)
        #expect(Self.printed(&throttle, [(0, -60, [1, 2]), (1, -70, [1, 2]), (2, -70, [9])]) == [true, false, false])
        #expect(throttle.sighted(Self.sighting(Self.other, at: 3), at: Self.at(3)) == .print(Self.firstSeen(3)))
        #expect(throttle.devicesPrinted == 2)
        #expect(throttle.due(at: Self.at(1000)) == [])
    }

    @Test("--updates: every sighting, each with the device's first_seen")
    func everyUpdate() {
        var throttle = ScanThrottle(updates: .all)
        #expect(!throttle.isTimed)
        for seconds in [0.0, 0.1, 0.2, 5] {
            #expect(throttle.sighted(Self.sighting(at: seconds, rssi: -60 - Int(seconds)), at: Self.at(seconds)) == .print(Self.firstSeen(0)))
        }
        #expect(throttle.devicesPrinted == 1)
    }

    @Test("--min-interval 2: an RSSI change within the interval is held, then printed when it ends; the newest held wins")
    func rssiHeldThenFlushed() throws {
        var throttle = ScanThrottle(updates: .atMostEvery(.seconds(2)))
        #expect(throttle.isTimed)
        #expect(Self.printed(&throttle, [(0, -60, [1, 2]), (0.5, -65, [1, 2]), (1.5, -70, [1, 2])]) == [true, false, false])
        #expect(throttle.due(at: Self.at(1.9)) == [])
        // The interval ends at 2 s: the newest held sighting (-70 at 1.5 s), with its own time.
        let due = throttle.due(at: Self.at(2))
        #expect(due == [.record(ScanSighting(Self.sighting(at: 1.5, rssi: -70), firstSeen: Self.firstSeen(0)))])
        // Printed once: nothing more is held.
        #expect(throttle.due(at: Self.at(10)) == [])
        // The next interval counts from that line (2 s): a change at 3 s is held until 4 s.
        #expect(Self.printed(&throttle, [(3, -61, [1, 2])]) == [false])
        #expect(throttle.due(at: Self.at(3.9)) == [])
        #expect(throttle.due(at: Self.at(4)).count == 1)
        // A sighting after the interval is printed at once.
        #expect(Self.printed(&throttle, [(6.5, -62, [1, 2])]) == [true])
    }

    @Test("--min-interval: a change of anything but RSSI is printed at once, and supersedes what was held")
    func otherChangePrintedAtOnce() {
        var throttle = ScanThrottle(updates: .atMostEvery(.seconds(2)))
        #expect(Self.printed(&throttle, [(0, -60, [1, 2]), (0.5, -65, [1, 2]), (0.7, -65, [1, 3]), (0.8, -66, [1, 3])])
                == [true, false, true, false])
        // The held -66 (0.8 s) waits for the interval of the line at 0.7 s.
        #expect(throttle.due(at: Self.at(2.6)) == [])
        #expect(throttle.due(at: Self.at(2.7)) == [.record(ScanSighting(Self.sighting(at: 0.8, rssi: -66, data: [1, 3]),
                                                                              firstSeen: Self.firstSeen(0)))])
        // Back to the earlier data is a change too.
        #expect(Self.printed(&throttle, [(2.8, -66, [1, 2])]) == [true])
    }

    @Test("--changes-only: only changes of more than RSSI; nothing held is ever printed")
    func changesOnly() {
        var throttle = ScanThrottle(updates: .changesOnly)
        #expect(!throttle.isTimed)
        #expect(Self.printed(&throttle, [(0, -60, [1, 2]), (10, -80, [1, 2]), (100, -40, [1, 2]), (101, -40, [7])])
                == [true, false, false, true])
        #expect(throttle.due(at: Self.at(10_000)) == [])
    }

    @Test("--lost-after 3: lost 3 s after the last sighting, with its time; then printed as new, first_seen reset")
    func lostThenNew() {
        var throttle = ScanThrottle(updates: .all, lostAfter: .seconds(3))
        #expect(throttle.isTimed)
        #expect(Self.printed(&throttle, [(0, -60, [1, 2]), (1, -61, [1, 2])]) == [true, true])
        _ = throttle.sighted(Self.sighting(Self.other, at: 2), at: Self.at(2))
        #expect(throttle.due(at: Self.at(3.9)) == [])
        // The probe, last heard at 1 s, is lost at 4 s; the other, heard at 2 s, not yet.
        #expect(throttle.due(at: Self.at(4)) == [.lost(ScanLostEvent(address: Self.probe, lastSeen: Self.wall + .seconds(1)))])
        #expect(throttle.due(at: Self.at(4.5)) == [])
        #expect(throttle.due(at: Self.at(5)) == [.lost(ScanLostEvent(address: Self.other, lastSeen: Self.wall + .seconds(2)))])
        // Heard again: printed as new, first_seen its own time.
        #expect(throttle.sighted(Self.sighting(at: 6, rssi: -70), at: Self.at(6)) == .print(Self.firstSeen(6)))
        #expect(throttle.sighted(Self.sighting(at: 7, rssi: -71), at: Self.at(7)) == .print(Self.firstSeen(6)))
        #expect(throttle.due(at: Self.at(9.9)) == [])
        // Devices are counted once, lost or not.
        #expect(throttle.devicesPrinted == 2)
    }

    @Test("--lost-after without --updates: sightings not printed still keep the device present")
    func unprintedSightingsKeepPresence() {
        var throttle = ScanThrottle(updates: .none, lostAfter: .seconds(3))
        #expect(Self.printed(&throttle, [(0, -60, [1, 2]), (2, -60, [1, 2]), (4, -61, [1, 2])]) == [true, false, false])
        #expect(throttle.due(at: Self.at(6.9)) == [])
        #expect(throttle.due(at: Self.at(7)) == [.lost(ScanLostEvent(address: Self.probe, lastSeen: Self.wall + .seconds(4)))])
        #expect(Self.printed(&throttle, [(8, -60, [1, 2])]) == [true])
    }

    @Test("--min-interval with --lost-after: a device lost with an update held gets it printed before its lost event; back, it is new")
    func lostPrintsWhatWasHeldFirst() {
        var throttle = ScanThrottle(updates: .atMostEvery(.seconds(10)), lostAfter: .seconds(3))
        #expect(Self.printed(&throttle, [(0, -60, [1, 2]), (1, -65, [1, 2])]) == [true, false])
        #expect(throttle.due(at: Self.at(4)) == [.record(ScanSighting(Self.sighting(at: 1, rssi: -65), firstSeen: Self.firstSeen(0))),
                                                 .lost(ScanLostEvent(address: Self.probe, lastSeen: Self.wall + .seconds(1)))])
        #expect(throttle.due(at: Self.at(20)) == [])
        #expect(throttle.sighted(Self.sighting(at: 21), at: Self.at(21)) == .print(Self.firstSeen(21)))
    }

    @Test("the lost event's line: event, address, last_seen")
    func lostEventLine() {
        let event = ScanLostEvent(address: Self.probe, lastSeen: Self.wall + .milliseconds(47))
        #expect(ScanLostEvent.layout.line(event) == #"{"event":"lost","address":"C0:FF:EE:00:00:01","last_seen":"2026-11-30T08:15:00.047Z"}"# + "\n")
        #expect(event.textRow == "C0:FF:EE:00:00:01  lost, last seen 2026-11-30T08:15:00.047Z")
    }
}
