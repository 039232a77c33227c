#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An open Unix file descriptor with exactly one owner: the value D-Bus passes as type `h`
/// (``DBusValue/unixFD(_:)``).
///
/// Ownership rules (the D-Bus specification, "Type System", UNIX_FD; libdbus's
/// `dbus_message_iter_get_basic` and `dbus_message_iter_append_basic`):
///
/// - **Receiving.** Every `h` in a received message decodes to a descriptor of its own: the
///   duplicate libdbus makes when the value is read (close-on-exec set), owned by this object.
///   The message libdbus keeps closes its own copies. Nobody has to do anything: the
///   descriptor is closed when the last copy of the value holding it is released (`deinit`),
///   so a reply or signal whose descriptors nobody takes leaks nothing. To keep it, either
///   hold on to the object, or ``take()`` the number, after which closing it is the caller's
///   job. ``close()`` closes it at once.
/// - **Sending.** A `.unixFD(descriptor)` argument is duplicated by libdbus as the message
///   is built (on the connection's queue, before the call returns or the signal is sent);
///   the message's copy is closed by libdbus once the message is gone. The caller's object
///   is never closed or taken by sending, and the value holding it keeps it open until the
///   message is built. A descriptor already closed or taken makes the send fail with
///   ``BusError/invalidArgument(_:)``, as does a connection that cannot pass descriptors (a
///   TCP bus).
///
/// Equality and hashing are by identity: two objects are the same value only when they are
/// the same object (two descriptors can be duplicates of one open file and still be two).
/// All members may be called from any thread.
public final class UnixFileDescriptor: Sendable, Hashable, CustomStringConvertible {
    /// The descriptor while owned; -1 once closed or taken.
    private let state: Lock<Int32>

    /// Takes ownership of `fd`: it is closed by ``close()`` or when the object goes away,
    /// unless ``take()`` hands it back first. A negative `fd` makes an object that holds
    /// nothing (what a message that lacks the descriptor it names decodes to).
    public init(owning fd: Int32) {
        state = Lock(fd >= 0 ? fd : -1)
    }

    /// Duplicates `fd` (`F_DUPFD_CLOEXEC`) into a new object; the caller keeps `fd`.
    /// - Throws: ``BusError/invalidArgument(_:)`` when `fd` is not an open descriptor or no
    ///   descriptor is free (the `errno` text).
    public static func duplicating(_ fd: Int32) throws(BusError) -> UnixFileDescriptor {
        let copy = fcntl(fd, F_DUPFD_CLOEXEC, 0)
        guard copy >= 0 else { throw .invalidArgument("cannot duplicate file descriptor \(fd): \(String(cString: strerror(errno)))") }
        return UnixFileDescriptor(owning: copy)
    }

    deinit {
        let fd = state.withLock { $0 }
        if fd >= 0 { _ = closeDescriptor(fd) }
    }

    /// The descriptor number while this object owns it; nil once closed or taken. The number
    /// is borrowed: valid only while the object is alive and neither closed nor taken.
    public var fileDescriptor: Int32? {
        state.withLock { $0 >= 0 ? $0 : nil }
    }

    /// Whether the object still owns an open descriptor.
    public var isOpen: Bool { fileDescriptor != nil }

    /// Hands the descriptor over: the caller owns it now (and closes it); this object holds
    /// nothing afterwards. Nil when it was already closed or taken.
    public func take() -> Int32? {
        state.withLock { fd in
            defer { fd = -1 }
            return fd >= 0 ? fd : nil
        }
    }

    /// Closes the descriptor now; later calls do nothing.
    public func close() {
        if let fd = take() { _ = closeDescriptor(fd) }
    }

    /// Runs `body` with the descriptor number, which cannot be closed or taken meanwhile (the
    /// object's lock is held: keep `body` short and non-blocking); nil when closed or taken.
    package func withDescriptor<T, E: Error>(_ body: (Int32) throws(E) -> T) throws(E) -> T? {
        let result = state.withLock { fd -> Result<T, E>? in
            fd >= 0 ? Result { () throws(E) -> T in try body(fd) } : nil
        }
        return try result?.get()
    }

    public static func == (lhs: UnixFileDescriptor, rhs: UnixFileDescriptor) -> Bool { lhs === rhs }

    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    public var description: String {
        fileDescriptor.map { "fd \($0)" } ?? "fd (closed)"
    }
}

#if canImport(Glibc)
private func closeDescriptor(_ fd: Int32) -> Int32 { Glibc.close(fd) }
#elseif canImport(Musl)
private func closeDescriptor(_ fd: Int32) -> Int32 { Musl.close(fd) }
#else
private func closeDescriptor(_ fd: Int32) -> Int32 { Darwin.close(fd) }
#endif
