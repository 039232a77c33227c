"""Discovery sessions (one per D-Bus client, like BlueZ's discovery_list), filters,
advertising reports and RSSI updates."""

import random

from .call import DBusError
from .ifaces import ERR
from . import world

RSSI_THRESHOLD = 8
PAIR_DELAY_MS = 300
RSSI_PAIR = (-70, -40)     # rssi_back_to_back: two readings 30 dBm apart
REPORT_DELAY_MS = 60
TICK_MS = 700
CHURN_MS = 200
BATCH = 250


class Discovery:
    def __init__(self, sim):
        self.sim = sim
        self.sessions = {}       # sender -> filter (plain dict)
        self.pending = {}        # sender -> StartDiscovery call not answered yet (start_discovery_delay_ms)
        self.report_timer = None
        self.tick_timer = None
        self.churn_timer = None
        self.power_timer = None
        self.bench = []          # pending bench specs to report
        self.bench_timer = None
        self.pair_timer = None   # rssi_back_to_back, once per discovery run
        self.pair_sent = False
        self.rng = random.Random(0x5A1E)

    # ------------------------------------------------------------ helpers
    @property
    def adapter(self):
        return self.sim.adapter

    def active(self):
        return bool(self.sessions) and self.adapter is not None and self.adapter.discovering

    def no_threshold(self):
        """Every RSSI change is signalled during a filtered discovery (src/adapter.c:
        device_set_rssi_with_delta with delta 0), else only moves of RSSI_THRESHOLD dBm."""
        return self.filtered()

    def filtered(self):
        """Whether bluetoothd runs a filtered discovery: some session has a filter (BlueZ
        5.66), or, with empty_filter_is_regular (5.67 and later, de8e7cfce), a filter that asks
        for more than the adapter's scan type as Transport and DuplicateData false
        (src/adapter.c merge_discovery_filters)."""
        if not self.sim.faults.get("empty_filter_is_regular"):
            return any(bool(f) for f in self.sessions.values())
        scan_type = ("le", "auto") if self.sim.faults.get("le_only_adapter") else ("auto",)
        return any(is_filtered(f, scan_type) for f in self.sessions.values())

    def passes(self, spec):
        if spec.group == "foreign":
            return True
        # src/adapter.c device_is_discoverable: an unfiltered discovery reports LE devices
        # only when they advertise as discoverable (main.conf FilterDiscoverable, 5.84 and
        # later, can turn this off; it is on by default). 5.78 to 5.82 report it anyway when
        # it is connectable (profiles.py).
        if not self.filtered() and not discoverable(spec) and not (
                spec.connectable and self.sim.connectable_hidden_reported()):
            return False
        return any(match(f, spec) for f in self.sessions.values())

    def crashes_on(self, spec):
        """uuid_filter_crash: bluetoothd 5.87's is_filter_match walks the sessions newest
        first; the first whose filter has no UUIDs matches every device, but one with UUIDs
        has them looked up in the advertisement's service UUIDs with queue_find's arguments
        swapped, which crashes as soon as that list is not empty. When every session has
        UUIDs, the kernel passes only advertisements that list one of them. Crashes here when
        bluetoothd would; returns whether it did."""
        if not (self.sim.faults.get("uuid_filter_crash") and spec.uuids and self.sessions):
            return False
        filters = list(self.sessions.values())
        if all(f.get("UUIDs") for f in filters):
            wanted = {u for f in filters for u in f["UUIDs"]}
            if not wanted & set(spec.uuids):
                return False
        if not filters[-1].get("UUIDs"):
            return False
        self.sim.exit_bluez()
        return True

    def _cancel_timers(self):
        for t in (self.report_timer, self.tick_timer, self.churn_timer, self.power_timer, self.bench_timer,
                  self.pair_timer):
            self.sim.cancel(t)
        self.report_timer = self.tick_timer = self.churn_timer = self.power_timer = self.bench_timer = None
        self.pair_timer = None
        self.pair_sent = False
        self.bench = []

    def clear(self, emit=False):
        """Drop every session (adapter power-off, reset). With emit, signal like BlueZ."""
        had = bool(self.sessions)
        self.sessions.clear()
        self.pending.clear()
        self._cancel_timers()
        if emit and self.adapter is not None and (had or self.adapter.discovering):
            self._end_sequence()

    # ------------------------------------------------------------ methods
    def start(self, call):
        ad = self.adapter
        if not ad.powered:
            raise DBusError(ERR + "NotReady", "Resource Not Ready")
        if self.sim.start_discovery_busy_left != 0:
            if self.sim.start_discovery_busy_left > 0:
                self.sim.start_discovery_busy_left -= 1
            raise DBusError(ERR + "InProgress", "Operation already in progress")
        if call.sender in self.sessions or call.sender in self.pending:
            raise DBusError(ERR + "InProgress", "Operation already in progress")
        if self.sim.faults.get("start_discovery_held"):
            # Like start_discovery_delay_ms, but until the test clears the fault.
            call.held = True
            self.pending[call.sender] = call
            return
        delay = self.sim.faults.get("start_discovery_delay_ms")
        if delay > 0:
            # Like BlueZ's discovery_list entry with client->msg set: StopDiscovery answers
            # InProgress until the reply, and the client leaving drops the start.
            self.pending[call.sender] = call
            self.sim.later(delay, self._start_now, call)
        else:
            self._start_now(call)

    def _start_now(self, call):
        if self.pending.get(call.sender) is call:
            del self.pending[call.sender]
        if getattr(call, "client_gone", False):
            return       # BlueZ frees the client with its message: no reply, no session
        ad = self.adapter
        if ad is None or not ad.powered:
            call.error(ERR + "NotReady", "Resource Not Ready")
            return
        if call.sender in self.sessions:
            call.error(ERR + "InProgress", "Operation already in progress")
            return
        self.sessions[call.sender] = dict(ad.filters.get(call.sender, {}))
        late = self.sim.faults.get("start_discovery_reply_delay_ms")
        if self.sim.faults.get("start_discovery_unanswered"):
            self.pending[call.sender] = call     # client->msg stays set: Stop answers InProgress
        elif late > 0:
            self.pending[call.sender] = call
            self.sim.later(late, self._answer_late, call)
        else:
            call.reply()
        if not ad.discovering:
            ad.set(Discovering=True)
            self.tick_timer = self.sim.every(TICK_MS, self._tick)
        self._schedule_report()
        ms = self.sim.faults.get("power_off_mid_scan_ms")
        if ms > 0 and self.power_timer is None:
            self.power_timer = self.sim.later(ms, self._power_off)

    def _answer_late(self, call):
        """start_discovery_reply_delay_ms: the reply of a start already begun."""
        if self.pending.get(call.sender) is call:
            del self.pending[call.sender]
        if not getattr(call, "client_gone", False):
            call.reply()

    def release_held(self):
        """start_discovery_held cleared: the held StartDiscovery calls are answered now."""
        for call in [c for c in self.pending.values() if getattr(c, "held", False)]:
            call.held = False
            self._start_now(call)

    def stop(self, call):
        ad = self.adapter
        if not ad.powered:
            raise DBusError(ERR + "NotReady", "Resource Not Ready")
        if call.sender in self.pending:
            raise DBusError(ERR + "InProgress", "Operation already in progress")
        if call.sender not in self.sessions:
            raise DBusError(ERR + "Failed", "No discovery started")
        del self.sessions[call.sender]
        call.reply()
        if not self.sessions:
            self._cancel_timers()
            self._end_sequence()

    def client_left(self, sender):
        if self.adapter is not None:
            self.adapter.filters.pop(sender, None)
        pending = self.pending.pop(sender, None)
        if pending is not None:
            pending.client_gone = True
        if self.sessions.pop(sender, None) is not None and not self.sessions:
            self._cancel_timers()
            self._end_sequence()

    def filter_changed(self, sender, flt):
        if sender in self.sessions:
            self.sessions[sender] = dict(flt)
            self._schedule_report()

    def _power_off(self):
        self.power_timer = None
        if self.adapter is not None:
            self.adapter.set_powered(False)

    # ------------------------------------------------------------ reporting
    def _schedule_report(self):
        if self.report_timer is None:
            self.report_timer = self.sim.later(REPORT_DELAY_MS, self._report)

    def _report(self):
        self.report_timer = None
        if not self.active():
            return
        self.inquiry()
        for spec in self.sim.advertisers():
            if self.crashes_on(spec):
                return
            if self.passes(spec):
                self.seen(spec, spec.rssi + self.rng.randint(-2, 2))
        if self.sim.faults.get("rssi_back_to_back") and not self.pair_sent and self.pair_timer is None:
            self.pair_timer = self.sim.later(PAIR_DELAY_MS, self._rssi_pair)
        n = self.sim.faults.get("advertisers")
        if n > 0:
            self.bench = [s for s in world.bench_devices(n, self.sim.faults.get("rssi_churn"), self.sim.faults.get("advertisers_data")) if self.passes(s)]
            self._bench_batch()
            if self.sim.faults.get("rssi_churn") and self.churn_timer is None:
                self.churn_timer = self.sim.every(CHURN_MS, self._churn)

    def _bench_batch(self):
        self.bench_timer = None
        if not self.active():
            self.bench = []
            return False
        batch, self.bench = self.bench[:BATCH], self.bench[BATCH:]
        for spec in batch:
            self.seen(spec, spec.rssi)
        if self.bench:
            self.bench_timer = self.sim.later(0, self._bench_batch)
        return False

    def seen(self, spec, rssi):
        dev = self.sim.devices.get(spec.address)
        if dev is None:
            dev = self.sim.ensure_device(spec, rssi=rssi)
            dev.seen_over("le")
        else:
            dev.advertised(rssi, force=self.no_threshold())

    def _rssi_pair(self):
        """rssi_back_to_back: the device's RSSI changes twice (RSSI_PAIR), as two
        PropertiesChanged sent back to back in this one callback."""
        self.pair_timer = None
        dev = self.sim.devices.get(self.sim.faults.get("rssi_back_to_back").upper())
        if not self.active() or dev is None or dev.removed or dev.rssi is None:
            return
        self.pair_sent = True
        msgs = []
        for rssi in RSSI_PAIR:
            dev.rssi = rssi
            msgs.append(self.sim.bus.prepare_props(dev.obj, "org.bluez.Device1", {"RSSI": rssi}))
            self.sim.sightings += 1
        resume = self.sim.hold_clients(list(self.sessions))
        self.sim.bus.send_back_to_back(msgs)
        resume()

    def inquiring(self):
        """Whether some session runs a BR/EDR inquiry (Transport "auto", the default, or
        "bredr"): dual-mode devices are then seen over BR/EDR too."""
        if self.sim.faults.get("le_only_adapter"):
            return False
        return any(f.get("Transport", "auto") in ("auto", "bredr") for f in self.sessions.values())

    def inquiry(self):
        if not self.inquiring():
            return
        for dev in list(self.sim.devices.values()):
            if dev.spec.dual and any(s.address == dev.spec.address for s in self.sim.advertisers()):
                dev.seen_over("bredr")

    def _tick(self):
        if not self.active():
            self.tick_timer = None
            return False
        self.inquiry()
        for spec in self.sim.advertisers():
            if self.crashes_on(spec):
                self.tick_timer = None
                return False
            dev = self.sim.devices.get(spec.address)
            if dev is None or not self.passes(spec):
                continue
            swing = 12 if self.rng.random() < 0.15 else 4
            dev.advertised(spec.rssi + self.rng.randint(-swing, swing), force=self.no_threshold())
        return True

    def _churn(self):
        if not self.active() or not self.sim.faults.get("rssi_churn"):
            self.churn_timer = None
            return False
        for dev in list(self.sim.devices.values()):
            if dev.spec.group == "bench" and not self.sim.has_device_fault(dev.spec.address, "silent"):
                cur = dev.rssi if dev.rssi is not None else dev.spec.rssi
                new = dev.spec.rssi - 10 if cur >= dev.spec.rssi else dev.spec.rssi
                dev.advertised(new, force=True)
        return True

    def _end_sequence(self):
        """After the last session ends (reply already sent): invalidate RSSI/TxPower,
        drop non-connectable temporary devices, then Discovering=false. BlueZ 5.66
        (adapter.c discovery_cleanup) keeps a connectable one, named or not, until its
        TemporaryTimeout: the real bluetoothd kept the rig's unnamed connectable filler."""
        for dev in list(self.sim.devices.values()):
            dev.invalidate_rssi()
        for dev in list(self.sim.devices.values()):
            if dev.is_temporary() and not dev.spec.connectable:
                self.sim.remove_device(dev)
        if self.adapter is not None and self.adapter.discovering:
            self.adapter.set(Discovering=False)


def is_filtered(flt, scan_type):
    """A filter that makes a filtered discovery: anything beyond DuplicateData false and a
    Transport that is the adapter's scan type (`scan_type`, the Transport values that mean it)."""
    return (bool(flt.get("UUIDs")) or "RSSI" in flt or "Pathloss" in flt or bool(flt.get("DuplicateData"))
            or flt.get("Pattern") is not None or flt.get("Transport", "auto") not in scan_type)


def discoverable(spec):
    """Whether the advertising flags have LE Limited (0x01) or LE General (0x02) Discoverable."""
    return bool(spec.adv_flags and spec.adv_flags[0] & 0x03)


def match(flt, spec):
    if flt.get("Transport") == "bredr":
        return False
    uuids = flt.get("UUIDs")
    if uuids:
        have = set(spec.uuids) | set(spec.service_data)
        if not have & set(uuids):
            return False
    if "RSSI" in flt and (spec.rssi is None or spec.rssi < flt["RSSI"]):
        return False
    if "Pathloss" in flt:
        if spec.tx_power is None or spec.rssi is None or spec.tx_power - spec.rssi > flt["Pathloss"]:
            return False
    pat = flt.get("Pattern")
    if pat:
        if not (spec.address.startswith(pat) or (spec.name or "").startswith(pat)):
            return False
    if flt.get("Discoverable") and not discoverable(spec):
        return False
    return True
