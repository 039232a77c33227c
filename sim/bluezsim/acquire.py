"""AcquireWrite and AcquireNotify, as bluetoothd 5.66 does them (src/gatt-client.c
create_sock, sock_read, notify_io_cb, sock_hup): the client gets one end of a
socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC) and the ATT MTU; one
datagram is one ATT PDU's value (a write-without-response value of at most MTU - 3 bytes,
or one notification). The client closing its end releases the lock (WriteAcquired /
NotifyAcquired false); the link dropping shuts the socket (the client sees HUP).

The simulated bluetoothd takes the datagrams of a write socket at a configurable rate
(fault acquire_write_drain_bps) from a socket whose buffer is small (acquire_write_sndbuf
on the client's end, the one that limits a Unix socket's sender), so a fast client meets
back-pressure: it must wait for POLLOUT. How often the simulator found the socket full is
counted (state "echo": socket_full)."""

import fcntl
import select
import socket
import struct
import termios
import time
import zlib

import dbus
from gi.repository import GLib

from .call import DBusError
from .claimed import refuse_write_if_claimed
from .ifaces import ERR

TICK_MS = 5

REFUSALS = {
    "NotSupported": "Operation is not supported",
    "NotPermitted": "Write acquired",
    "Failed": "Operation failed",
    "NotAuthorized": "Operation Not Authorized",
}


def _queued(sock):
    """Bytes waiting in a SEQPACKET socket's receive queue (SIOCINQ sums every datagram)."""
    try:
        return struct.unpack("i", fcntl.ioctl(sock.fileno(), termios.FIONREAD, b"\0\0\0\0"))[0]
    except OSError:
        return 0


def _hung_up(sock):
    p = select.poll()
    p.register(sock, select.POLLIN | select.POLLHUP)
    return any(ev & (select.POLLHUP | select.POLLERR) for _, ev in p.poll(0))


# The buffer bluetoothd reads each AcquireWrite datagram into (src/gatt-client.c sock_read).
BLUETOOTHD_SOCK_READ_BUFFER = 512

class EchoStats:
    """What the echo device's writable characteristic has received, in order: bytes, packets,
    a CRC-32 (zlib's) of all the bytes, the largest and smallest packet, how many came through
    an acquired socket and how many by WriteValue; datagrams too long for the MTU (dropped, as
    bluetoothd's bt_att_send refuses a PDU longer than the MTU); how often the simulator found
    the write socket full when it came to read (back-pressure) and the most bytes it found
    queued; datagrams lost in a socket when the link dropped."""

    def __init__(self):
        self.bytes = 0
        self.packets = 0
        self.crc = 0
        self.max_packet = 0
        self.min_packet = None
        self.socket_packets = 0
        self.write_value_packets = 0
        self.oversized = 0
        self.socket_full = 0
        self.max_queued = 0
        self.capacity = 0
        self.lost_at_link_loss = 0
        self.notified = 0

    def add(self, data, via):
        self.bytes += len(data)
        self.packets += 1
        self.crc = zlib.crc32(data, self.crc)
        self.max_packet = max(self.max_packet, len(data))
        self.min_packet = len(data) if self.min_packet is None else min(self.min_packet, len(data))
        if via == "socket":
            self.socket_packets += 1
        else:
            self.write_value_packets += 1

    def as_json(self):
        return {"bytes": self.bytes, "packets": self.packets, "crc32": "%08x" % (self.crc & 0xFFFFFFFF),
                "max_packet": self.max_packet, "min_packet": self.min_packet,
                "socket_packets": self.socket_packets, "write_value_packets": self.write_value_packets,
                "oversized": self.oversized, "socket_full": self.socket_full, "max_queued_bytes": self.max_queued,
                "capacity_bytes": self.capacity, "lost_at_link_loss": self.lost_at_link_loss,
                "notified": self.notified}


class AcquiredSocket:
    """The simulator's end of one acquired socket."""

    def __init__(self, char, kind, client, mtu):
        self.char = char
        self.sim = char.sim
        self.kind = kind              # "write" or "notify"
        self.client = client
        self.mtu = mtu
        self.ours, self.theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.ours.setblocking(False)
        self.theirs.setblocking(False)
        self.closed = False
        self.sources = []

    def hand_over(self, call):
        """Answers the call with the client's end and the MTU; our copy of that end is closed,
        so the client's close is seen here as HUP."""
        fd = dbus.types.UnixFd(self.theirs)       # a duplicate, owned by fd
        self.theirs.close()
        self.theirs = None
        call.reply("hq", fd, dbus.UInt16(self.mtu))
        try:
            import os
            os.close(fd.take())
        except (OSError, ValueError):
            pass
        self.sim.acquired.append(self)

    def describe(self):
        return {"path": self.char.path, "kind": self.kind, "client": self.client, "mtu": self.mtu}

    def close(self, reason):
        """Closes our end (the client sees HUP if it still holds its own) and releases the lock."""
        if self.closed:
            return
        self.closed = True
        for s in self.sources:
            GLib.source_remove(s)
        self.sources = []
        if reason == "link" and self.kind == "write":
            lost = _queued(self.ours)
            if lost and self.char.role == "echo_sink":
                self.sim.echo.lost_at_link_loss += lost
        try:
            self.ours.close()
        except OSError:
            pass
        if self.theirs is not None:
            self.theirs.close()
        if self in self.sim.acquired:
            self.sim.acquired.remove(self)
        self.char.socket_released(self, quiet=(reason == "bluez_gone"))


class WriteSocket(AcquiredSocket):
    """AcquireWrite: datagrams from the client, taken at acquire_write_drain_bps."""

    def __init__(self, char, client, mtu):
        super().__init__(char, "write", client, mtu)
        f = self.sim.faults
        self.theirs.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, max(1, f.get("acquire_write_sndbuf")))
        self.capacity = self._calibrate()
        if char.role == "echo_sink":
            self.sim.echo.capacity = self.capacity
        self.budget = 0.0
        self.last = time.monotonic()

    def _calibrate(self):
        """How many bytes of full-size datagrams the client's end takes before it is full
        (its SO_SNDBUF counts each datagram's kernel overhead): found by filling it once."""
        payload = b"\0" * max(1, self.mtu - 3)
        sent = 0
        try:
            while sent < 1 << 22:
                self.theirs.send(payload)
                sent += len(payload)
        except (BlockingIOError, OSError):
            pass
        while True:
            try:
                self.ours.recv(65536)
            except (BlockingIOError, OSError):
                break
        return sent

    def start(self):
        if self.sim.faults.get("acquire_write_drain_bps") <= 0:
            self.sources.append(GLib.io_add_watch(self.ours.fileno(), GLib.PRIORITY_DEFAULT,
                                                  GLib.IO_IN | GLib.IO_HUP | GLib.IO_ERR, self._readable))
        else:
            self.sources.append(GLib.timeout_add(TICK_MS, self._tick))

    def _readable(self, fd, cond):
        """Unlimited drain: every datagram there is, each time the socket is readable."""
        if self.closed:
            return False
        self._observe()
        self._read(None)
        return not self.closed

    def _tick(self):
        """Rate-limited drain: the bytes the rate allows since the last tick."""
        if self.closed:
            return False
        rate = self.sim.faults.get("acquire_write_drain_bps")
        now = time.monotonic()
        if rate <= 0:
            budget = None
        else:
            self.budget = min(self.budget + rate * (now - self.last), max(rate * 0.02, float(self.mtu)))
            budget = self.budget
        self.last = now
        self._observe()
        if _hung_up(self.ours):
            # The client closed its end: bluetoothd's read watch outranks its hang-up watch
            # (io-glib.c: G_IO_HUP at G_PRIORITY_DEFAULT_IDLE), so it takes all that is queued.
            budget = None
        left = self._read(budget)
        if budget is not None and left is not None:
            self.budget = left
        return not self.closed

    def _observe(self):
        queued = _queued(self.ours)
        if self.char.role == "echo_sink":
            echo = self.sim.echo
            echo.max_queued = max(echo.max_queued, queued)
            if self.capacity and queued >= self.capacity - (self.mtu - 3):
                echo.socket_full += 1

    def _read(self, budget):
        """Reads datagrams while the budget lasts (None: all there are); the budget left."""
        while not self.closed and (budget is None or budget > 0):
            try:
                # bluetoothd 5.66 sock_read: recvmsg into uint8_t buf[512]; the rest of a
                # longer datagram is lost (SOCK_SEQPACKET truncates), the value sent cut short.
                data = self.ours.recv(BLUETOOTHD_SOCK_READ_BUFFER)
            except BlockingIOError:
                return budget
            except OSError:
                self.close("client")
                return budget
            if not data:
                if _hung_up(self.ours):
                    self.close("client")     # the client closed its end, nothing left unread
                    return budget
                continue                      # an empty datagram: nothing to write
            if budget is not None:
                budget -= len(data)
            self.char.datagram(data)
        return budget


class NotifySocket(AcquiredSocket):
    """AcquireNotify: notifications to the client as datagrams; dropped when the socket is full
    (bluetoothd's notify_io_cb logs the sendmsg error and goes on)."""

    def __init__(self, char, client, mtu):
        super().__init__(char, "notify", client, mtu)
        self.dropped = 0

    def start(self):
        self.sources.append(GLib.io_add_watch(self.ours.fileno(), GLib.PRIORITY_DEFAULT,
                                              GLib.IO_HUP | GLib.IO_ERR, self._hup))

    def _hup(self, fd, cond):
        self.close("client")
        return False

    def send(self, data):
        if self.closed:
            return False
        try:
            self.ours.send(bytes(data))
            return True
        except BlockingIOError:
            self.dropped += 1
        except OSError:
            self.close("client")
        return False


def acquire_write(char, call):
    """GattCharacteristic1.AcquireWrite (src/gatt-client.c characteristic_acquire_write)."""
    char._check()
    refuse_write_if_claimed(char)
    refused = char.sim.faults.get("acquire_write_refused")
    if refused:
        name = refused if refused.startswith("org.") else ERR + refused
        raise DBusError(name, REFUSALS.get(name.rsplit(".", 1)[-1], "Operation failed"))
    if char.write_io is not None:
        raise DBusError(ERR + "NotPermitted", "Write acquired")
    if "write-without-response" not in char.flags:
        raise DBusError(ERR + "NotSupported", "Operation is not supported")
    sock = WriteSocket(char, call.sender, char.sim.faults.get("att_mtu"))
    char.write_io = sock
    sock.hand_over(call)
    sock.start()
    char.set(WriteAcquired=True)


def acquire_notify(char, call):
    """GattCharacteristic1.AcquireNotify (characteristic_acquire_notify, create_sock)."""
    char._check()
    if char.notify_io is not None:
        raise DBusError(ERR + "NotPermitted", "Notify acquired")
    if char.notify_clients or char.pending_notify:
        raise DBusError(ERR + "InProgress", "In Progress")
    if "notify" not in char.flags:
        raise DBusError(ERR + "NotSupported", "Operation is not supported")
    if char.tree.service_changed_by(char, call):
        return
    sock = NotifySocket(char, call.sender, char.sim.faults.get("att_mtu"))
    char.notify_io = sock
    sock.hand_over(call)
    sock.start()
    char.set(NotifyAcquired=True)
    char.start_status()          # the vendor device's own status notifications too
    char.start_ticker()          # notify_every_ms / notify_rate_hz reach the socket too
    char.burst_on_start()        # and notify_burst
