import Foundation
import Testing
@testable import DBusKit
import SimulatorHarness
#if canImport(Glibc)
import Glibc
#endif

/// pipe2(2), which the Glibc module does not export.
@_silgen_name("pipe2")
private func pipe2(_ fds: UnsafeMutablePointer<Int32>, _ flags: Int32) -> Int32

/// D-Bus type `h`: descriptors cross a message whole (a pipe written through the copy that
/// arrived is read at the other end), and every copy is closed once nobody holds it: a pipe's
/// read end sees end-of-file only when every copy of its write end is gone, and /proc/self/fd
/// shows how many copies of one pipe this process holds.
@Suite struct UnixFDPassingTests {
    /// A pipe whose ends are owned by objects, made close-on-exec at once (`pipe2`, so that a
    /// child another test spawns meanwhile cannot inherit a copy); `inode` names it in
    /// /proc/self/fd.
    struct Pipe {
        let read: UnixFileDescriptor
        let write: UnixFileDescriptor
        let inode: UInt64

        init() throws {
            var fds: [Int32] = [-1, -1]
            guard pipe2(&fds, O_CLOEXEC) == 0 else { throw POSIXError(.EMFILE) }
            read = UnixFileDescriptor(owning: fds[0])
            write = UnixFileDescriptor(owning: fds[1])
            var info = stat()
            fstat(fds[0], &info)
            inode = UInt64(info.st_ino)
        }

        /// How many descriptors of this process refer to this pipe (either end).
        var openCopies: Int {
            let target = "pipe:[\(inode)]"
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
            return entries.filter { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)")) == target }.count
        }

        /// ``openCopies`` once it is `expected`, or after 10 s (a guard a loaded machine keeps): a reply resumes its caller while
        /// libdbus still finishes with the message on the connection's queue (the message and
        /// its copies go a moment later); a leaked copy stays.
        func settledCopies(_ expected: Int) async -> Int {
            let deadline = ContinuousClock.now + .seconds(10)
            while openCopies != expected && ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(10)) }
            return openCopies
        }
    }

    static func write(_ text: String, to fd: Int32) -> Bool {
        var bytes = Array(text.utf8)
        return bytes.withUnsafeMutableBytes { Glibc.write(fd, $0.baseAddress, $0.count) } == text.utf8.count
    }

    /// Reads what is there; "" at end-of-file, nil when nothing came within `wait` (the end
    /// is made non-blocking, so a leaked writer shows as nil instead of a hang). The wait
    /// covers a child another test is spawning: between its clone and its exec it holds a
    /// copy of every descriptor, close-on-exec ones included, for a moment; a leak stays.
    static func readAvailable(_ fd: Int32, wait: Duration = .seconds(10)) -> String? {
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        _ = poll(&entry, 1, Int32(wait / .milliseconds(1)))
        var buffer = [UInt8](repeating: 0, count: 256)
        let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        return n < 0 ? nil : String(decoding: buffer[0..<n], as: UTF8.self)
    }

    @Test func aDescriptorSurvivesAMessageAndEveryCopyIsClosed() throws {
        let pipe = try Pipe()
        #expect(pipe.openCopies == 2)
        do {
            let decoded = try MessageRoundTrip.encodeAndDecode([.unixFD(pipe.write)])
            let received = try #require(decoded.first?.unixFD)
            let fd = try #require(received.fileDescriptor)
            #expect(fd != pipe.write.fileDescriptor, "the receiver gets its own descriptor")
            #expect(fcntl(fd, F_GETFD) & FD_CLOEXEC != 0)
            #expect(pipe.openCopies == 3, "the message is gone; its copy closed with it")
            #expect(Self.write("through the copy", to: fd))
            #expect(Self.readAvailable(try #require(pipe.read.fileDescriptor)) == "through the copy")
        }
        // The decoded value is gone: its descriptor closed with it, nobody had to.
        #expect(pipe.openCopies == 2)
        pipe.write.close()
        let atEnd = Self.readAvailable(try #require(pipe.read.fileDescriptor))
        #expect(atEnd == "", "a copy of the write end is still open: read gave \(String(describing: atEnd)), copies \(pipe.openCopies)")
        #expect(pipe.openCopies == 1)
    }

    @Test func takeHandsOwnershipOverAndCloseIsIdempotent() throws {
        let pipe = try Pipe()
        let raw = try #require(pipe.write.take())
        #expect(pipe.write.fileDescriptor == nil)
        #expect(pipe.write.take() == nil)
        pipe.write.close()                       // holds nothing: does nothing
        #expect(fcntl(raw, F_GETFD) >= 0, "taken: the object no longer closes it")
        #expect(pipe.openCopies == 2)
        close(raw)
        #expect(pipe.openCopies == 1)
        pipe.read.close()
        pipe.read.close()
        #expect(pipe.openCopies == 0)
    }

    @Test func aClosedDescriptorIsNotSent() throws {
        let pipe = try Pipe()
        pipe.write.close()
        #expect(throws: BusError.invalidArgument("a file descriptor already closed or taken")) {
            _ = try MessageRoundTrip.encodeAndDecode([.unixFD(pipe.write)])
        }
    }

    /// One process sends the write end of a pipe to another connection, which writes into the
    /// copy it received and answers with the read end of a pipe of its own; back and forth
    /// 200 times. The receiver never takes or closes what it got: the values going away close
    /// every copy, on both sides.
    @Test func descriptorsCrossTheBusBothWaysAndNoneLeaks() async throws {
        let bus = try await PrivateBus.start()
        let a = try await BusConnection.connect(to: bus.address)
        let b = try await BusConnection.connect(to: bus.address)
        defer { a.close(); b.close() }
        let outbound = try Pipe()         // A's pipe: B writes into it
        let inbound = try Pipe()          // B's pipe: its read end goes to A
        b.export("/org/blectl/FDTest") { call in
            guard call.member == "Swap", let fd = call.body.first?.unixFD?.fileDescriptor else {
                return .error(name: DBusErrorName.invalidArgs, message: "want h")
            }
            _ = UnixFDPassingTests.write("B", to: fd)
            _ = inbound.write.fileDescriptor.map { UnixFDPassingTests.write("A", to: $0) }
            return .values([.unixFD(inbound.read)])
        }
        let call = MethodCall(destination: b.uniqueName, path: "/org/blectl/FDTest", interface: "org.blectl.FDTest",
                              member: "Swap", arguments: [.unixFD(outbound.write)])
        let rounds = 200
        for _ in 0..<rounds {
            let reply = try await a.call(call, timeout: .seconds(10))
            let received = try #require(reply.body.first?.unixFD?.fileDescriptor)
            #expect(Self.readAvailable(received) == "A")
        }
        #expect(Self.readAvailable(try #require(outbound.read.fileDescriptor)) == String(repeating: "B", count: rounds))
        // Only the two ends each pipe started with are left: every copy made on the way (the
        // messages', the receivers') is closed, on both connections.
        #expect(await outbound.settledCopies(2) == 2)
        #expect(await inbound.settledCopies(2) == 2)
        outbound.write.close()
        #expect(Self.readAvailable(try #require(outbound.read.fileDescriptor)) == "", "a copy of the write end leaked")
        #expect(a.registeredReplyHandlerCount == 0)
    }

    /// The fd count of the whole process before and after many round trips: a leak of one
    /// descriptor per message would add hundreds (other tests running meanwhile move it by a
    /// few at most).
    @Test func theProcessHoldsNoMoreDescriptorsAfterManyRoundTrips() async throws {
        func count() -> Int { ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []).count }
        let bus = try await PrivateBus.start()
        let a = try await BusConnection.connect(to: bus.address)
        let b = try await BusConnection.connect(to: bus.address)
        defer { a.close(); b.close() }
        b.export("/org/blectl/FDTest") { call in .values(call.body) }    // echoes the descriptors back
        let pipe = try Pipe()
        let call = MethodCall(destination: b.uniqueName, path: "/org/blectl/FDTest", interface: "org.blectl.FDTest",
                              member: "Echo", arguments: [.unixFD(pipe.read), .unixFD(pipe.write)])
        _ = try await a.call(call, timeout: .seconds(10))
        let before = count()
        for _ in 0..<300 {
            let reply = try await a.call(call, timeout: .seconds(10))
            #expect(reply.signature == "hh")
        }
        #expect(await pipe.settledCopies(2) == 2)
        let after = count()
        #expect(after - before < 100, "\(before) descriptors before, \(after) after 300 round trips of 2")
    }
}
