"""hold_client_ms (mixed into core.Sim): clients stopped (SIGSTOP) while a group of messages
is sent, so that each reads the whole group at once, and resumed (SIGCONT) afterwards."""

import os
import signal
import time

from gi.repository import GLib
import dbus


class ClientHolds:
    """Expects of the Sim: faults, bus, held (the pids stopped), holds (a counter)."""

    # ------------------------------------------------------------ one client read
    def hold_clients(self, names):
        """hold_client_ms: stops (SIGSTOP) the processes of these unique names and waits until
        they are stopped, so that a group of messages sent now is all in their sockets when
        they run again (resume_later). Returns a callable to run once the group is sent. A
        client that did not get the CPU for a moment reads such a group at once; this makes
        it certain. Never stops this process; names without a pid are skipped."""
        ms = self.faults.get("hold_client_ms")
        if ms <= 0 or not self.bus.alive:
            return lambda: None
        pids = set()
        for name in set(names):
            try:
                pid = int(self.bus.conn.call_blocking("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                                      "GetConnectionUnixProcessID", "s", (name,)))
            except dbus.DBusException:
                continue
            if pid != os.getpid() and pid not in self.held:
                pids.add(pid)
        for pid in pids:
            try:
                os.kill(pid, signal.SIGSTOP)
                self.held.add(pid)
            except OSError:
                pass
        deadline = time.monotonic() + 0.05
        while time.monotonic() < deadline and not all(_stopped(p) for p in pids & self.held):
            time.sleep(0.0005)
        if pids:
            self.holds += 1

        def resume_later():
            if self.bus.alive:
                self.bus.conn.flush()
            # Not self.later: a reset must not cancel it (the client would stay stopped).
            GLib.timeout_add(ms, lambda: (self.resume(pids), False)[1])
        return resume_later

    def resume(self, pids=None):
        for pid in list(self.held if pids is None else pids):
            self.held.discard(pid)
            try:
                os.kill(pid, signal.SIGCONT)
            except OSError:
                pass


def _stopped(pid):
    """Whether the process is stopped (state T in /proc/PID/stat), or gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("T", "t")
    except OSError:
        return True
