"""The simulator's timers on the GLib main loop (mixed into core.Sim): one-shot and
repeating, each kept until it fires or is cancelled, so that a reset cancels them all."""

from gi.repository import GLib


class Timers:
    """Expects of the Sim: timers (a set of GLib source ids)."""

    # ------------------------------------------------------------ timers
    def later(self, ms, fn, *args):
        holder = {}

        def fire():
            self.timers.discard(holder["id"])
            try:
                fn(*args)
            except Exception:
                import traceback
                traceback.print_exc()
            return False
        holder["id"] = GLib.timeout_add(max(0, int(ms)), fire)
        self.timers.add(holder["id"])
        return holder["id"]

    def every(self, ms, fn):
        holder = {}

        def fire():
            try:
                keep = fn()
            except Exception:
                import traceback
                traceback.print_exc()
                keep = False
            if not keep:
                self.timers.discard(holder["id"])
            return bool(keep)
        holder["id"] = GLib.timeout_add(int(ms), fire)
        self.timers.add(holder["id"])
        return holder["id"]

    def cancel(self, tid):
        if tid is not None and tid in self.timers:
            self.timers.discard(tid)
            GLib.source_remove(tid)

    def cancel_all(self):
        for tid in list(self.timers):
            GLib.source_remove(tid)
        self.timers.clear()
