#if DEBUG
import Testing
@testable import DBusKit

/// Lock order, checked in debug builds: a thread holding any `Lock` must not take an
/// `outermost` one (a BlueZ session's: its watchers run under it and take the operations'
/// locks). The deadlock it prevents needs two threads to meet by chance (a notify
/// subscription's StartNotify read the session's cache under its own lock while a signal's
/// watcher, under the session's lock, waited for that lock: notify hung for good); the check
/// fails the first time the order is broken, on one thread.
@Suite struct LockOrderTests {
    @Test func anOutermostLockTakenUnderAnotherLockTraps() async {
        await #expect(processExitsWith: .failure) {
            let inner = Lock(0)
            let session = Lock(0, outermost: true)
            inner.withLock { _ in session.withLock { $0 += 1 } }
        }
    }

    @Test func theOutermostLockFirstThenOthersIsTheOrder() {
        let inner = Lock(0)
        let session = Lock(0, outermost: true)
        session.withLock { value in
            inner.withLock { $0 += 1 }
            value += 1
        }
        // Released: the session's lock may be taken again, also after an inner one was released.
        inner.withLock { $0 += 1 }
        session.withLock { $0 += 1 }
        #expect(inner.withLock { $0 } == 2)
        #expect(session.withLock { $0 } == 2)
    }
}
#endif
