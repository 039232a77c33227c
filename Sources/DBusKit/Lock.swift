#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A value guarded by a pthread mutex.
///
/// Used instead of `Synchronization.Mutex` because ThreadSanitizer understands pthread
/// mutexes but not Mutex's futex-based lock on Linux, which it reports as races: with this
/// lock the sanitizer runs need no suppressions and still see real races. Every lock of
/// blectl's is one (a Mutex in the progress line made `make test-tsan` fail at random).
///
/// Lock order. A lock made `outermost` (a BlueZ session's state: its watchers run under it and
/// take the locks of the operations they serve) must never be taken by a thread that holds
/// another `Lock`: that thread could hold a lock a watcher waits for while it waits for the
/// session, a deadlock two threads reach only by chance. Debug builds (the tests) check it
/// on every acquisition and trap at the first violation, whatever the timing.
package final class Lock<Value>: @unchecked Sendable {
    /// In memory of its own: a pthread mutex must not move once initialized, and a stored
    /// property's address is not guaranteed to stay the same.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value
    #if DEBUG
    private let outermost: Bool
    #endif

    package init(_ value: Value, outermost: Bool = false) {
        self.value = value
        #if DEBUG
        self.outermost = outermost
        #endif
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the value. Do not resume continuations or call
    /// out to unknown code inside: return an action and run it after.
    @inline(__always)
    package func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        #if DEBUG
        let held = heldCheckingOrder()
        LockOrder.held = held + 1
        defer { LockOrder.held = held }
        #endif
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }

    /// Takes the lock and releases it: a continuation's task calls this after its `await`
    /// returns, on the lock its resumer held before resuming it.
    ///
    /// Why: Swift's runtime tells ThreadSanitizer that a resume happens before the resumed
    /// task runs only when the task had suspended first (swift_continuation_await's fast path,
    /// taken when the resume came first, has no acquire of its own). A reply read on the
    /// D-Bus reader thread while the calling task is still between `install` and its suspension
    /// then looks, to the sanitizer, as if the task read the reply's memory without ordering
    /// (`make test-tsan` failed so in CI, in `WireBody.values`). The hardware ordering is
    /// there (the runtime's atomics); this makes it visible. A pthread lock and unlock.
    package func synchronize() {
        pthread_mutex_lock(mutex)
        pthread_mutex_unlock(mutex)
    }

    /// Runs `body` with exclusive access to the value when the lock is free now; nil, without
    /// waiting, when another thread holds it.
    package func withLockIfAvailable<T>(_ body: (inout Value) throws -> T) rethrows -> T? {
        #if DEBUG
        let held = heldCheckingOrder()
        #endif
        guard pthread_mutex_trylock(mutex) == 0 else { return nil }
        #if DEBUG
        LockOrder.held = held + 1
        defer { LockOrder.held = held }
        #endif
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }

    #if DEBUG
    /// The locks this thread holds, after the lock-order check (an outermost lock taken with
    /// another held traps).
    private func heldCheckingOrder() -> Int {
        let held = LockOrder.held
        precondition(!outermost || held == 0,
                     "lock order: an outermost lock taken while this thread holds \(held) other lock(s) (see Lock)")
        return held
    }
    #endif
}

#if DEBUG
/// How many `Lock`s the calling thread holds (debug builds only).
private enum LockOrder {
    static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    static var held: Int {
        get { Int(bitPattern: pthread_getspecific(key)) }
        set { pthread_setspecific(key, UnsafeRawPointer(bitPattern: newValue)) }
    }
}
#endif
