"""blectl as the peripheral: blesim Central (bumble, peripheral_central.py) driven over the
control port, bluetoothd's advertising state, blectl advertise/serve in the background and
their JSON Lines events."""
import base64
import json
import os
import signal
import tempfile
import time

import dbus

import ctl
import rig
from rig import *  # noqa: F401,F403
from rig_gatt import *  # noqa: F401,F403
from rig_notify import *  # noqa: F401,F403


CENTRAL = "F0:5E:A1:00:00:C1"  # blesim Central's static random address

# AD types (Bluetooth SIG Assigned Numbers, Common Data Types).
AD_FLAGS, AD_UUID16, AD_UUID128, AD_NAME, AD_MANUFACTURER = 1, 3, 7, 9, 0xFF

BASE_TAIL = "-0000-1000-8000-00805f9b34fb"


def central(command, timeout=60):
    """A blesim Central command (peripheral_central.py) -> its JSON answer; an error answer
    is a failure of the test (the central could not do what the test asked)."""
    answer = json.loads(bumble("central " + command, timeout=timeout)[0])
    if "error" in answer:
        raise Failed(f"central {command}: {answer['error']}"
                     + (f" (ATT error 0x{answer['att_error']:02x})" if answer.get("att_error") is not None else ""))
    return answer


def central_error(command, timeout=60):
    """A blesim Central command expected to fail -> (error text, ATT error code or None)."""
    answer = json.loads(bumble("central " + command, timeout=timeout)[0])
    check("error" in answer, f"central {command} failed: {answer}")
    return answer["error"], answer["att_error"]


def adapter_address():
    return str(adapter_props()["Address"])


def active_instances():
    """LEAdvertisingManager1.ActiveInstances: the advertisements registered with bluetoothd."""
    return int(managed_objects()["/org/bluez/hci0"]["org.bluez.LEAdvertisingManager1"]["ActiveInstances"])


def host_on_air():
    """Whether hci0's controller (bumble) has advertising enabled: what the kernel left on air."""
    status, out = ctl.command(rig.args.ctl, "bumble-state", timeout=30)
    eq(status, 0, f"bumble-state: {out}")
    line = next((l for l in out.splitlines() if l.startswith("hci0 ")), "")
    check("advertising on air: " in line, f"hci0's advertising state in bumble-state: {out}")
    return line.rsplit("advertising on air: ", 1)[1].strip() == "True"


def short_uuid(text):
    """blectl's form of a UUID: 4 hex digits for a SIG one, else lower-case 128-bit."""
    text = text.lower()
    if len(text) == 8:
        text += BASE_TAIL
    if len(text) == 36 and text.startswith("0000") and text.endswith(BASE_TAIL):
        return text[4:8]
    return text


def uuid128_le(text):
    """A 128-bit UUID as it goes in an AD structure (little-endian), hex."""
    return bytes(reversed(bytes.fromhex(text.replace("-", "")))).hex()


def events(run_or_bg):
    """The JSON Lines a blectl run or Background printed on stdout."""
    lines = run_or_bg.out if isinstance(run_or_bg.out, list) else run_or_bg.out.splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def wait_event(bg, name, count=1, timeout=15.0, **fields):
    """Waits for the count-th stdout event `name` whose fields include `fields` -> it."""
    def matching():
        return [e for e in events(bg) if e.get("event") == name and all(e.get(k) == v for k, v in fields.items())]
    wait_until(lambda: len(matching()) >= count or bg.p.poll() is not None, timeout,
               f"event {name} {fields or ''} from blectl {bg.argv[0]}")
    found = matching()
    check(len(found) >= count, f"blectl {bg.argv[0]} ended (status {bg.p.returncode}) without event {name} {fields}: "
                               f"stdout {''.join(bg.out)[-1200:]} stderr {''.join(bg.err)[-800:]}")
    return found[count - 1]


def check_event(e, name, fields):
    """An event record: `event` first, then `time` (RFC 3339 UTC, ms), then exactly these
    fields (any order; a field blectl adds beyond them is noted, not failed)."""
    eq(list(e)[:2], ["event", "time"], f"the first keys of {name}")
    eq(e["event"], name, "event")
    check(isinstance(e["time"], str) and len(e["time"]) == 24 and e["time"].endswith("Z"), f"time RFC 3339 ms: {e}")
    eq({k: e.get(k) for k in fields}, fields, f"{name} event")
    extra = [k for k in e if k not in fields and k not in ("event", "time")]
    if extra:
        note(f"{name} event: more fields than the tests check: {extra}")


def stop(bg, sig=signal.SIGINT, timeout=30.0):
    """Sends sig to a Background blectl -> its Run once it has ended."""
    if bg.p.poll() is None:
        bg.p.send_signal(sig)
    return bg.finish(timeout)


def forget_central():
    """Removes blesim Central's device object from bluetoothd (an incoming central stays
    known after it leaves, and test_devices expects only the VM's peripherals)."""
    if known(CENTRAL):
        wait_until(lambda: not device_prop(CENTRAL, "Connected"), 6.0, "blesim Central not connected")
        remove_device(CENTRAL)


def idle_advertising(after):
    """Nothing registered (ActiveInstances 0), nothing on air from hci0, no link."""
    wait_until(lambda: active_instances() == 0, 3.0, f"ActiveInstances 0 after {after}")
    wait_until(lambda: not host_on_air(), 3.0, f"hci0 not advertising after {after}")
    assert_idle(after)


def has_subcommand(name):
    """Whether this blectl has the subcommand (its own help, not the top-level one)."""
    r = blectl(name, "--help", timeout=20)
    return r.rc == 0 and f"USAGE: blectl {name}" in r.out


def has_option(subcommand, option):
    r = blectl(subcommand, "--help", timeout=20)
    return r.rc == 0 and option in r.out


def require_serve():
    if not has_subcommand("serve"):
        raise Skipped("this blectl has no serve subcommand (`blectl serve --help` prints no serve usage)")


def profile_file(profile):
    """The profile written to a temporary file -> its path (removed by the caller)."""
    fd, path = tempfile.mkstemp(prefix="blectl-profile-", suffix=".json")
    with os.fdopen(fd, "w") as f:
        json.dump(profile, f)
    return path


class VMMonitor:
    """dbus-monitor in the VM, on its system bus, recording the method calls bluetoothd makes
    on a GATT application's characteristics (what options WriteValue and ReadValue carry on
    this bluetoothd version, and whether it wants a reply): started, then read back, then
    stopped. Two monitors: one as text, one as pcap (the messages' header flags)."""

    LOG = "/tmp/gatt-calls.log"
    PCAP = "/tmp/gatt-calls.pcap"
    RULE = "type=method_call,interface=org.bluez.GattCharacteristic1"

    def __enter__(self):
        self.sh(f"rm -f {self.LOG} {self.PCAP}; (dbus-monitor --system {self.RULE} >{self.LOG} 2>&1 &) ; "
                f"(dbus-monitor --system --pcap {self.RULE} >{self.PCAP} 2>/dev/null &) ; sleep 0.5")
        return self

    def expects_reply(self, member):
        """For each call `member`, in order: False when it was sent NO_REPLY_EXPECTED."""
        data = base64.b64decode("".join(self.sh(f"base64 {self.PCAP}").split()))
        out, i = [], 24  # the pcap file header
        while i + 16 <= len(data):
            length = int.from_bytes(data[i + 8:i + 12], "little")
            message = data[i + 16:i + 16 + length]
            i += 16 + length
            if len(message) > 3 and message[1] == 1 and member.encode() in message:
                out.append(not message[2] & 0x1)
        return out

    def text(self):
        return self.sh(f"cat {self.LOG}")

    def __exit__(self, *exc):
        self.sh("kill $(pidof dbus-monitor) 2>/dev/null; true")

    @staticmethod
    def sh(command):
        status, out = ctl.command(rig.args.ctl, "sh " + command, timeout=30)
        eq(status, 0, f"sh {command}: {out}")
        return out

    def calls(self, member):
        """[(member, options dict as text lines)] of each method call `member` seen."""
        blocks, current = [], None
        for line in self.text().splitlines():
            if line.startswith("method call"):
                current = [line] if f"member={member}" in line else None
                if current is not None:
                    blocks.append(current)
            elif current is not None:
                current.append(line)
        return blocks

    def options(self, member):
        """The option names and values of each call `member`: [{name: value text}]."""
        out = []
        for block in self.calls(member):
            opts, key = {}, None
            for line in block:
                s = line.strip()
                if s.startswith("string \"") and key is None and "dict entry" not in s:
                    key = s[len("string \""):-1]
                elif key is not None and s.startswith("variant"):
                    opts[key] = s[len("variant"):].strip()
                    key = None
            out.append(opts)
        return out
