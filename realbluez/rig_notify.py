"""Notifications and the peripheral's control port: bumble commands, notify runs in the background, their records, blectl inside the VM."""
import base64
import json
import subprocess
import threading
import time

import ctl
import rig
from rig import *  # noqa: F401,F403
from rig_gatt import *  # noqa: F401,F403


NOTIFY_KEYS = ["address", "service", "characteristic", "value", "text", "decoded", "seq", "time", "connection"]


def bumble(command, timeout=60):
    """A control-port command of peripheral.py (through the init's `bumble`) -> answer lines."""
    check(rig.args.ctl, "--ctl needed for the peripheral's control port")
    status, out = ctl.command(rig.args.ctl, "bumble " + command, timeout=timeout)
    eq(status, 0, f"bumble {command}: {out}")
    return [line for line in out.splitlines() if line.strip()]


def notify_values(count, first, timeout=20.0):
    """blesim Real notifies first..first+count-1 (4 bytes big-endian each) on the vendor
    notify characteristic, once a link has subscribed (its CCC enabled): asked again until
    then; nothing is sent to nobody."""
    t = time.monotonic()
    while True:
        answer = bumble(f"notify {count} {first}")[0]
        if answer.startswith(f"notified {count} "):
            eq(answer, f"notified {count} ({first}..{first + count - 1}) on 1 link(s)", "bumble notify")
            return time.monotonic() - t
        check(answer.startswith("notified 0: "), f"bumble notify: {answer}")
        if time.monotonic() - t > timeout:
            raise Failed(f"no link subscribed to {VENDOR_NOTIFY} within {timeout} s")
        time.sleep(0.1)


class Background:
    """blectl running on the host, its output read as it comes."""

    def __init__(self, *argv, stdin=False):
        """stdin: a pipe to write lines to (send); otherwise this script's own."""
        self.argv = argv
        self.t0 = time.monotonic()
        self.p = subprocess.Popen([rig.args.blectl, *argv], env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  stdin=subprocess.PIPE if stdin else None, text=True)
        self.out, self.err = [], []
        self.readers = [threading.Thread(target=self._read, args=(f, lines), daemon=True)
                        for f, lines in ((self.p.stdout, self.out), (self.p.stderr, self.err))]
        for r in self.readers:
            r.start()

    @staticmethod
    def _read(f, lines):
        for line in f:
            lines.append(line)

    def wait_lines(self, n, timeout=30.0):
        wait_until(lambda: len(self.out) >= n or self.p.poll() is not None, timeout, f"{n} lines from {self.argv[0]}")
        check(len(self.out) >= n, f"blectl {self.argv[0]} ended after {len(self.out)} lines: {''.join(self.err)[-600:]}")

    def wait_stderr(self, text, timeout=30.0):
        wait_until(lambda: text in "".join(self.err) or self.p.poll() is not None, timeout, f"{text!r} on stderr")
        check(text in "".join(self.err), f"blectl {self.argv[0]} ended without {text!r}: {''.join(self.err)[-800:]}")

    def wait_event(self, event, connection, timeout=30.0):
        """Waits for the JSON event line `event` with `connection` on stderr (it also carries
        the address and the time)."""
        def seen():
            for line in "".join(self.err).splitlines():
                try:
                    e = json.loads(line)
                except ValueError:
                    continue
                if isinstance(e, dict) and e.get("event") == event and e.get("connection") == connection:
                    return True
            return False
        wait_until(lambda: seen() or self.p.poll() is not None, timeout, f"{event} {connection} on stderr")
        check(seen(), f"blectl {self.argv[0]} ended without {event} {connection}: {''.join(self.err)[-800:]}")

    def send(self, line):
        """One line to blectl's standard input, flushed."""
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()

    def finish(self, timeout=60.0):
        try:
            self.p.wait(timeout=timeout)
        finally:
            if self.p.poll() is None:
                self.p.kill()
                self.p.wait()
        for r in self.readers:
            r.join(5)
        r = Run(self.argv, self.p.returncode, "".join(self.out), "".join(self.err), time.monotonic() - self.t0)
        if rig.args.verbose:
            print("    " + str(r), flush=True)
        return r


def expect_notify_records(r, values, connections):
    """Every stdout line a value record of the vendor notify characteristic, keys in order,
    seq 1..n, exactly these values (4-byte big-endian integers) and link numbers."""
    lines = [line for line in r.out.splitlines() if line.strip()]
    records = [json.loads(line) for line in lines]
    for record in records:
        eq(list(record), NOTIFY_KEYS, "keys of a notify record")
    eq([x["seq"] for x in records], list(range(1, len(values) + 1)), "seq")
    eq([x["value"] for x in records], [f"{v:08x}" for v in values], "values, in order")
    eq([x["connection"] for x in records], connections, "connection of each value")
    eq([x["decoded"] for x in records], [None] * len(records), "decoded: null for the vendor characteristic")
    eq({(x["address"], x["service"], x["characteristic"], x["text"]) for x in records},
       {(PERIPHERAL, VENDOR_SERVICE, VENDOR_NOTIFY, None)} if records else set(), "address, service, characteristic, text")
    for x in records:
        check(len(x["time"]) == 24 and x["time"].endswith("Z") and x["time"][19] == ".", f"time RFC 3339 ms: {x['time']}")


def assert_no_notify_session(after):
    """No link (assert_idle), and bluetoothd has no notification session on the vendor
    notify characteristic (Notifying false where it is still exported)."""
    assert_idle(after)
    for path, ifs in managed_objects().items():
        c = ifs.get("org.bluez.GattCharacteristic1")
        if c and str(path).startswith(device_path(PERIPHERAL)) and str(c["UUID"]) == VENDOR_NOTIFY:
            eq(bool(c.get("Notifying", False)), False, f"Notifying of {VENDOR_NOTIFY} after {after}")


def host_notify(r):
    """notify on the host talks to bluetoothd over the TCP bus, which passes no file
    descriptors: AcquireNotify's socket cannot reach it, so it uses StartNotify and says so
    first on stderr (event notify_method). Checked, and taken out of the run's stderr."""
    lines = r.err.splitlines(keepends=True)
    check(bool(lines), f"notify on the host said nothing of its method: {r}")
    first = json.loads(lines[0])
    check(isinstance(first.pop("time", None), str), f"notify_method without a time: {lines[0]}")
    eq(first, {"event": "notify_method", "address": PERIPHERAL, "method": "StartNotify",
               "reason": "the bus cannot pass file descriptors"}, "notify's method on the host")
    return Run(r.argv, r.rc, r.out, "".join(lines[1:]), r.elapsed)


def notify_argv(*rest):
    return ["notify", PERIPHERAL, VENDOR_NOTIFY, *rest]


def fail_then(what):
    """A command that fails after connecting (read of a descriptor 2a26 lacks, exit 3, on
    every version: 2a00 is readable from 5.80), then at once what():
    -> (whether the link was still up when what() started, what() returns)."""
    first = blectl("read", PERIPHERAL, "2a26", "--descriptor", "2902", "--timeout", "30")
    expect_rc(first, 3)
    linked = connected_now()
    return linked, what()


BACK_TO_BACK_RUNS = 20


def vm_blectl(*argv, files=None, stdin=None, timeout=60):
    """blectl run inside the VM on its own system bus (vmexec.py): -> Run."""
    check(rig.args.ctl, "--ctl needed to run blectl in the VM")
    spec = {"argv": list(argv), "timeout": timeout,
            "files": {path: base64.b64encode(data).decode() for path, data in (files or {}).items()},
            "stdin": base64.b64encode(stdin).decode() if stdin is not None else None}
    status, out = ctl.command(rig.args.ctl, "blectl-exec " + base64.b64encode(json.dumps(spec).encode()).decode(),
                              timeout=timeout + 30)
    eq(status, 0, f"blectl-exec: {out[-600:]}")
    result = json.loads(out.strip().splitlines()[-1])
    r = Run(argv, result["status"], result["stdout"], result["stderr"], result["seconds"])
    if rig.args.verbose:
        print("    (in the VM) " + str(r), flush=True)
    eq(r.rc == 127 and "not in this VM" in r.err, False, f"blectl in the VM: {r.err.strip()}")
    return r


def stream_received():
    """bumble's record of what reached the vendor write characteristic since reset-stream."""
    line = bumble("stream")[0]
    fields = dict(part.strip().split(" ", 1) for part in line.split(";"))
    return {"bytes": int(fields["bytes"]), "packets": int(fields["packets"]), "largest": int(fields["largest"]),
            "sha256": fields["sha256"], "mtu": fields["mtu"]}
