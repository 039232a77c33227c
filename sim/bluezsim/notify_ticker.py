"""The simulator's own notification streams on a characteristic (mixed into
characteristic.Char): notify_every_ms, a value every N ms, and notify_rate_hz, N values a
second sent in batches (totals in the state's notify_rate)."""

import time

from .world import norm_uuid

# notify_rate_hz: how often the notifications due by then are sent (ms).
RATE_TICK_MS = 5


class NotifyTicker:
    """Expects of the Char: sim, spec, ticker, ticks, active(), notify(), notify_many()."""

    # ------------------------------------------------------------ notify_every_ms
    def ticks_here(self):
        ms = self.sim.faults.get("notify_every_ms")
        hz = self.sim.faults.get("notify_rate_hz")
        want = self.sim.faults.get("notify_every_char")
        return (ms > 0 or hz > 0) and (not want or norm_uuid(want) == self.spec.uuid)

    def start_ticker(self):
        """notify_every_ms: a notification every N ms while active, value k = k as 4 bytes
        big-endian, k counting on from the last one sent (over link losses too).
        notify_rate_hz (instead): the same values at N per second, see _rate_tick."""
        self.stop_ticker()
        if not self.ticks_here() or not self.active():
            return
        if self.sim.faults.get("notify_rate_hz") > 0:
            self.rate_start = time.monotonic()
            self.rate_sent = 0
            self.ticker = self.sim.every(RATE_TICK_MS, self._rate_tick)
            return
        self.ticker = self.sim.every(self.sim.faults.get("notify_every_ms"), self._tick)

    def _rate_tick(self):
        """notify_rate_hz: the notifications due since the ticker started (rate x elapsed,
        up to notify_rate_total), sent back to back; the totals go to the state's notify_rate."""
        hz = self.sim.faults.get("notify_rate_hz")
        if not self.active() or not self.ticks_here() or hz <= 0:
            self.ticker = None
            return False
        total = self.sim.faults.get("notify_rate_total")
        now = time.monotonic()
        due = int((now - self.rate_start) * hz) - self.rate_sent
        if total > 0:
            due = min(due, total - self.sim.rate_stats["sent"])
        if due > 0:
            values = []
            for _ in range(due):
                self.ticks += 1
                values.append(self.ticks.to_bytes(4, "big"))
            self.notify_many(values, counter=True)
            self.rate_sent += due
            st = self.sim.rate_stats
            if st["first"] is None:
                st["first"] = now
            st["last"] = time.monotonic()
            st["sent"] += due
            st["batches"] += 1
        if total > 0 and self.sim.rate_stats["sent"] >= total:
            self.ticker = None
            return False
        return True

    def stop_ticker(self):
        self.sim.cancel(self.ticker)
        self.ticker = None

    def _tick(self):
        if not self.active() or not self.ticks_here():
            self.ticker = None
            return False
        self.ticks += 1
        readings = self.spec.notify_values
        if readings:
            self.notify(readings[(self.ticks - 1) % len(readings)], counter=True)
        else:
            self.notify(self.ticks.to_bytes(4, "big"), counter=True)
        return True
