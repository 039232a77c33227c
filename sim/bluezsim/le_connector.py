"""LE connection creation per adapter, as the Linux kernel does it (one per Sim:
`sim.le_connector`).

BlueZ 5.66 does not queue: Device1.Connect calls device_connect_le, which opens the ATT
socket at once (bt_io_connect; dev->att_io set, so a second Connect of the same device
answers Failed "Operation already in progress") and leaves the Connect message unanswered
until the socket connects (att_connect_cb). The kernel makes the LE connections one at a
time per controller: l2cap_chan_connect puts the device on the pending list
(hci_connect_le_scan, pend_le_conns), the background scan starts a creation when it hears
the device advertise, and hci_connect_le refuses a second creation while one runs ("the
controller supports only one LE connection attempt at a time"), so the next pending device
goes once the creation before it has ended. So Connects of different devices wait their
turn, each taking the connection latency, and a caller sees nothing but a later reply. A
device that does not advertise is never heard: it holds no turn, and its Connect fails
when the attempt times out, while the others are served.

With `le_connect_serial` the simulator does the same, the turns going in the order the
Connects came (the kernel's next is the first pending device heard again: FIFO keeps tests
deterministic); without it (the default, whose timings the Swift tests rely on) every
creation starts at once. Either way `le_max_links` caps the LE links up on the adapter (a
link counts until it is down, so through BlueZ's disconnect timer): a creation that starts
when the cap is reached is refused at once, as a controller answers LE Create Connection
with Connection Limit Exceeded or Memory Capacity Exceeded; the kernel fails the socket
and att_connect_cb answers the Connect Failed "le-connection-abort-by-local" (every socket
error there is -ECONNABORTED, btd_error_le_conn_from_errno)."""

import time

LIMIT = "link-limit"


class LeConnector:
    def __init__(self, sim):
        self.sim = sim
        self.queue = []        # Devices waiting their turn, in the order their Connect came
        self.creating = []     # Devices whose creation is under way
        self.unheard = []      # Devices on the pending list that do not advertise: no turn
        self.log = []          # every creation: address, queued/start/end (monotonic s), result
        self.records = {}      # Device -> its open log entry

    def clear(self):
        self.queue.clear()
        self.creating.clear()
        self.unheard.clear()
        self.log.clear()
        self.records.clear()

    def serial(self):
        return bool(self.sim.faults.get("le_connect_serial"))

    def links(self):
        """LE links up (or going down through the disconnect timer) on the adapter."""
        return sum(1 for d in self.sim.devices.values() if d.connected and d.bearer != "bredr")

    def request(self, dev):
        """dev's Connect wants an LE link: its creation starts now or when its turn comes
        (dev.create_le_link)."""
        self.done(dev, "cancelled")     # never twice in the queue
        rec = {"address": dev.spec.address, "queued": time.monotonic(), "start": None, "end": None, "result": None}
        self.log.append(rec)
        self.records[dev] = rec
        if not dev.heard():
            self.unheard.append(dev)
            dev.create_le_link()        # it times out (connect_timeout_ms), holding no turn
            return
        self.queue.append(dev)
        self._pump()

    def done(self, dev, result):
        """dev's creation ended (the link is up, it failed) or was given up (a Disconnect,
        the device removed): the next one in the queue goes. No-op when dev has none."""
        rec = self.records.pop(dev, None)
        if rec is None:
            return
        if rec["result"] is None:
            rec["result"] = result
        rec["end"] = time.monotonic()
        if dev in self.queue:
            self.queue.remove(dev)
        if dev in self.unheard:
            self.unheard.remove(dev)
        if dev in self.creating:
            self.creating.remove(dev)
            self._pump()

    def _pump(self):
        while self.queue and not (self.serial() and self.creating):
            dev = self.queue.pop(0)
            rec = self.records[dev]
            if not dev.heard():         # gone silent (absent) while it waited: no turn either
                self.unheard.append(dev)
                dev.create_le_link()
                continue
            self.creating.append(dev)
            rec["start"] = time.monotonic()
            cap = self.sim.faults.get("le_max_links")
            if cap > 0 and self.links() >= cap:
                rec["result"] = LIMIT
                self.sim.later(0, dev.refuse_le_link)
            else:
                dev.create_le_link()

    def state(self):
        return {"serial": self.serial(), "max_links": self.sim.faults.get("le_max_links"), "links": self.links(),
                "creating": [d.spec.address for d in self.creating], "queued": [d.spec.address for d in self.queue],
                "unheard": [d.spec.address for d in self.unheard]}
