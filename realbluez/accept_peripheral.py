"""Acceptance tests against a real bluetoothd with blectl as the peripheral: `blectl
advertise` and `blectl serve` on the host, blesim Central (bumble, in the VM) as the central
that scans for them, connects, reads, writes and subscribes; both sides checked."""
import json
import os
import signal

import dbus

import rig
from rig import *  # noqa: F401,F403
from rig_gatt import *  # noqa: F401,F403
from rig_notify import *  # noqa: F401,F403
from rig_central import *  # noqa: F401,F403


ADV_NAME = "blectl rig"
ADV_UUID = "5a1e0100-6c2d-4b8e-9f3a-0c1d2e3f4a5b"
ADV_TIMEOUT = 30.0

SERVE_NAME = "blectl serve rig"
SERVE_SERVICE = "5a1e0200-6c2d-4b8e-9f3a-0c1d2e3f4a5b"
SERVE_READ = "5a1e0201-6c2d-4b8e-9f3a-0c1d2e3f4a5b"    # read, c0ffee01, a 2901 descriptor
SERVE_WRITE = "5a1e0202-6c2d-4b8e-9f3a-0c1d2e3f4a5b"   # read write write-without-response
SERVE_NOTIFY = "5a1e0203-6c2d-4b8e-9f3a-0c1d2e3f4a5b"  # notify
SERVE_REQUEST = "5a1e0204-6c2d-4b8e-9f3a-0c1d2e3f4a5b"  # write (requests only)
SERVE_COMMAND = "5a1e0205-6c2d-4b8e-9f3a-0c1d2e3f4a5b"  # write-without-response (commands only)
DESCRIPTION = "blectl rig value"
FLAGS_OF = {SERVE_WRITE: "write write-without-response", SERVE_REQUEST: "write", SERVE_COMMAND: "write-without-response"}
SERVE_PROFILE = {
    "name": SERVE_NAME,
    "services": [{"uuid": SERVE_SERVICE, "characteristics": [
        {"uuid": SERVE_READ, "flags": ["read"], "value": "c0ffee01",
         "descriptors": [{"uuid": "2901", "value": DESCRIPTION.encode().hex()}]},
        {"uuid": SERVE_WRITE, "flags": ["read", "write", "write-without-response"], "value": "00"},
        {"uuid": SERVE_NOTIFY, "flags": ["notify"]},
        {"uuid": SERVE_REQUEST, "flags": ["write"], "value": "00"},
        {"uuid": SERVE_COMMAND, "flags": ["write-without-response"], "value": "00"},
    ]}],
}


def central_link_events(bg, after):
    """Waits for blectl's connected event with blesim Central's address; checks bluetoothd's
    Device1 for the incoming central (made by bluetoothd for it, not by a scan) -> event."""
    e = wait_event(bg, "connected", address=CENTRAL)
    check_event(e, "connected", {"address": CENTRAL})
    d = dict(managed_objects().get(dbus.ObjectPath(device_path(CENTRAL)), {}).get("org.bluez.Device1", {}))
    check(d, f"bluetoothd has a Device1 for the incoming central {CENTRAL} ({after})")
    eq((bool(d["Connected"]), str(d["AddressType"])), (True, "random"), f"Device1 Connected, AddressType of {CENTRAL}")
    note(f"{after}: Device1 of the incoming central: Name {str(d.get('Name'))!r}, ServicesResolved "
         f"{bool(d.get('ServicesResolved'))}, UUIDs {[short_uuid(str(u)) for u in d.get('UUIDs', [])]}, "
         f"RSSI {d.get('RSSI')}, Paired {bool(d.get('Paired'))}")
    return e


def test_advertise_central():
    """blectl advertise on the host; blesim Central scans for it and finds it by name and by
    service with the advertised bytes; connects (blectl: connected with the central's
    address; bluetoothd: a Device1 for it), disconnects (blectl: disconnected); blectl exits 0
    at its timeout; then nothing is registered (ActiveInstances 0) or on air."""
    eq(active_instances(), 0, "ActiveInstances before advertise")
    adapter = adapter_address()
    argv = ["advertise", "--name", ADV_NAME, "--service", "180d", "--service", ADV_UUID,
            "--manufacturer-data", "05f1:c0", "--timeout", f"{ADV_TIMEOUT:g}"]
    bg = Background(*argv)
    try:
        registered = wait_event(bg, "registered")
        eq((registered["adv_data_bytes"], registered["scan_response_bytes"]), (4 + 18 + 5, 2 + len(ADV_NAME)),
           "registered: bytes of the advertising data and scan response")
        eq(active_instances(), 1, "ActiveInstances while advertising")
        found = central(f"scan-name 10 {ADV_NAME}", timeout=40)
        check(found["found"], f"blesim Central found {ADV_NAME!r}: heard {found.get('heard')}")
        eq((found["address"], found["address_type"], found["connectable"]), (adapter, "public", True),
           "the advertiser: hci0's public address, connectable")
        # The kernel adds the Flags (0x04: LE only, BR/EDR not supported) to an LE-only
        # adapter's advertising data, which blectl does not count (D-Bus does not show it).
        eq(found["ad"], [[AD_FLAGS, "04"], [AD_UUID16, "0d18"], [AD_UUID128, uuid128_le(ADV_UUID)],
                         [AD_MANUFACTURER, "f105c0"]], "advertising data, field by field")
        eq(len(found["adv_data"]) // 2, registered["adv_data_bytes"] + 3, "advertising data bytes (blectl's + the kernel's Flags)")
        eq(found["scan_response_ad"], [[AD_NAME, ADV_NAME.encode().hex()]], "scan response: the name")
        eq((found["name"], found["services"], found["manufacturer_data"]), (ADV_NAME, ["180d", ADV_UUID], {"05f1": "c0"}),
           "name, services, manufacturer data as the central decodes them")
        by_service = central(f"scan-service 10 {ADV_UUID}", timeout=40)
        eq((by_service["found"], by_service.get("address")), (True, adapter), f"found by service {ADV_UUID}")

        linked = central(f"connect {adapter}", timeout=40)
        eq((linked["self"], linked["peer"]), (CENTRAL, adapter), "the central's link")
        note(f"bluetoothd's GATT server as blesim Central discovers it: mtu {linked['mtu']}, "
             + "; ".join(f"{s['uuid']}: {' '.join(c['uuid'] for c in s['characteristics'])}" for s in linked["services"]))
        central_link_events(bg, "advertise")
        dropped = central("disconnect")
        eq(dropped, {"disconnected": True, "reason": "REMOTE_USER_TERMINATED_CONNECTION_ERROR"}, "the central's disconnect")
        check_event(wait_event(bg, "disconnected", address=CENTRAL), "disconnected", {"address": CENTRAL})
        r = bg.finish(ADV_TIMEOUT + 20)
    finally:
        if bg.p.poll() is None:
            stop(bg)
    expect_rc(r, 0)
    check(ADV_TIMEOUT - 0.5 <= r.elapsed <= ADV_TIMEOUT + 5, f"advertise ended at its {ADV_TIMEOUT:g} s timeout: {r.elapsed:.1f} s")
    eq([e["event"] for e in events(r)], ["registered", "connected", "disconnected"], f"events printed ({r})")
    eq(r.err, "", "stderr of advertise")
    idle_advertising("advertise")
    gone = central(f"scan-name 4 {ADV_NAME}", timeout=30)
    eq(gone["found"], False, f"{ADV_NAME!r} still heard after advertise ended: {gone}")
    forget_central()


def serve_run(profile, *options, stdin=True):
    """blectl serve PROFILE in the background, until its registered event -> (Background, path)."""
    path = profile_file(profile)
    bg = Background("serve", path, *options, stdin=stdin)
    try:
        wait_event(bg, "registered", timeout=20)
    except Exception:
        stop(bg)
        os.unlink(path)
        raise
    return bg, path


def test_serve_central():
    """blectl serve of a small profile; blesim Central finds it (name, service UUID),
    connects, reads the value (blectl: a read event), writes with and without response
    (write events with the central's address, the bytes, the type; the value replaced),
    subscribes (subscribed), gets the value blectl's stdin sent (notified), unsubscribes,
    disconnects; SIGINT: 130, nothing registered. What bluetoothd passes in WriteValue's
    options is noted (dbus-monitor in the VM)."""
    require_serve()
    adapter = adapter_address()
    eq(active_instances(), 0, "ActiveInstances before serve")
    bg, path = serve_run(SERVE_PROFILE, "--timeout", "90")
    try:
        with VMMonitor() as monitor:
            found = central(f"scan-address 10 {adapter}", timeout=40)
            check(found["found"], f"blesim Central heard serve's advertisement from {adapter}: {found}")
            eq((found["name"], found["services"], found["connectable"]), (SERVE_NAME, [SERVE_SERVICE], True),
               "serve's advertisement: name, services, connectable")
            linked = central(f"connect {adapter}", timeout=40)
            served = [s for s in linked["services"] if s["uuid"] == SERVE_SERVICE]
            eq(len(served), 1, f"the served service in the central's discovery: {linked['services']}")
            eq({c["uuid"]: (c["properties"], c["descriptors"]) for c in served[0]["characteristics"]},
               {SERVE_READ: (["read"], ["2901"]), SERVE_WRITE: (["read", "write-without-response", "write"], []),
                SERVE_NOTIFY: (["notify"], ["2902"]), SERVE_REQUEST: (["write"], []),
                SERVE_COMMAND: (["write-without-response"], [])}, "the served characteristics: properties, descriptors")
            central_link_events(bg, "serve")

            eq(central(f"read {SERVE_READ}"), {"value": "c0ffee01"}, "the central read the served value")
            check_event(wait_event(bg, "read", characteristic=SERVE_READ), "read",
                        {"device": CENTRAL, "service": SERVE_SERVICE, "characteristic": SERVE_READ, "descriptor": None,
                         "offset": 0, "value": "c0ffee01"})
            eq(central(f"read-descriptor {SERVE_READ} 2901"), {"value": DESCRIPTION.encode().hex()}, "the 2901 descriptor's value")
            check_event(wait_event(bg, "read", characteristic=SERVE_READ, descriptor="2901"), "read",
                        {"device": CENTRAL, "service": SERVE_SERVICE, "characteristic": SERVE_READ, "descriptor": "2901",
                         "offset": 0, "value": DESCRIPTION.encode().hex()})

            # bluetoothd's WriteValue options say nothing of the write's type (seen on the
            # bus in the VM with dbus-monitor: device, link, mtu only, on 5.66, 5.82 and 5.87):
            # blectl can tell it only from a characteristic that allows one kind of write.
            writes = ((SERVE_WRITE, "a1b2", "request", None), (SERVE_WRITE, "c3", "command", None),
                      (SERVE_REQUEST, "04", "request", "request"), (SERVE_COMMAND, "05", "command", "command"))
            for count, (characteristic, value, kind, expected) in enumerate(writes, 1):
                central(f"write {characteristic} {value} {kind}")
                e = wait_event(bg, "write", count=count)
                wait_until(lambda: len(monitor.options("WriteValue")) >= count, 3.0, f"WriteValue {count} on the VM's bus")
                options = monitor.options("WriteValue")[count - 1]
                note(f"WriteValue options from bluetoothd {rig.bluez[0]}.{rig.bluez[1]}, a write {kind}: {options}")
                given = options.get("type")
                check(given in (None, f'string "{kind}"'), f"bluetoothd's WriteValue type for a write {kind}: {given}")
                check_event(e, "write", {"device": CENTRAL, "service": SERVE_SERVICE, "characteristic": characteristic,
                                         "descriptor": None, "offset": 0, "type": kind if given else expected, "value": value})
                if characteristic == SERVE_WRITE:
                    eq(central(f"read {SERVE_WRITE}"), {"value": value}, f"the value after the write {kind}")
            eq(len(monitor.options("WriteValue")), len(writes), f"WriteValue calls bluetoothd made: {monitor.text()[-1500:]}")
            replies = monitor.expects_reply("WriteValue")
            note(f"WriteValue from bluetoothd {rig.bluez[0]}.{rig.bluez[1]} wants a reply: "
                 + "; ".join(f"a {kind} to {FLAGS_OF[characteristic]}: {wants}"
                             for (characteristic, _, kind, _), wants in zip(writes, replies)))
            # Measured on 5.66, 5.82 and 5.87: bluetoothd wants WriteValue's reply only for a
            # write request to a characteristic without write-without-response; otherwise it
            # answers the central itself (what serve's request/command inference rests on).
            eq(replies, [False, False, True, False], "which WriteValue calls wanted a reply")
            note(f"ReadValue options from bluetoothd {rig.bluez[0]}.{rig.bluez[1]}: {monitor.options('ReadValue')[:1]}")

        eq(central(f"subscribe {SERVE_NOTIFY}"), {"subscribed": SERVE_NOTIFY}, "the central subscribed")
        check_event(wait_event(bg, "subscribed"), "subscribed",
                    {"service": SERVE_SERVICE, "characteristic": SERVE_NOTIFY, "descriptor": None})
        bg.send(json.dumps({"characteristic": SERVE_NOTIFY, "value": "d00d"}))
        check_event(wait_event(bg, "notified"), "notified", {"service": SERVE_SERVICE, "characteristic": SERVE_NOTIFY,
                                                             "descriptor": None, "value": "d00d", "subscribed": True})
        eq(central(f"notifications {SERVE_NOTIFY} 1 10"), {"values": ["d00d"]}, "what the central was notified")
        bg.send(json.dumps({"characteristic": SERVE_NOTIFY, "value": "0102030405"}))
        eq(central(f"notifications {SERVE_NOTIFY} 2 10"), {"values": ["d00d", "0102030405"]}, "the second notification")
        central(f"unsubscribe {SERVE_NOTIFY}")
        check_event(wait_event(bg, "unsubscribed"), "unsubscribed",
                    {"service": SERVE_SERVICE, "characteristic": SERVE_NOTIFY, "descriptor": None})
        central("disconnect")
        check_event(wait_event(bg, "disconnected", address=CENTRAL), "disconnected", {"address": CENTRAL})
        r = stop(bg, signal.SIGINT)
    finally:
        if bg.p.poll() is None:
            stop(bg, signal.SIGKILL)
        os.unlink(path)
    expect_rc(r, 130)
    names = [e["event"] for e in events(r)]
    eq(names[:2], ["registered", "connected"], f"serve's first events ({r})")
    eq(names[-1], "disconnected", f"serve's last event ({r})")
    idle_advertising("serve")
    forget_central()


def test_serve_clone():
    """blectl connect --values of blesim Real (the probe peripheral), its output served by
    blectl serve as it is: blesim Central reads every value the profile carries from the
    copy, equal to the profile and to blesim Real's own (battery 73, "3.1.4", ...). Ends
    at serve's timeout: exit 0, nothing registered."""
    require_serve()
    if not has_option("connect", "--values"):
        raise Skipped("this blectl's connect has no --values option")
    r = blectl("connect", PERIPHERAL, "--values", "--timeout", "30")
    expect_ok(r)
    profile = r.json()
    assert_idle("connect --values")
    values = {(short_uuid(s["uuid"]), short_uuid(c["uuid"])): c.get("value")
              for s in profile["services"] for c in s.get("characteristics", [])}
    truth = {("180f", "2a19"): "49", ("180a", "2a26"): "3.1.4".encode().hex(),
             ("180a", "2a29"): "Bumble Labs".encode().hex(), ("180a", "2a24"): "Real-1".encode().hex()}
    eq({k: values.get(k) for k in truth}, truth, "connect --values: blesim Real's values")
    # 1800 and 1801 are bluetoothd's own on the serving side (serve leaves them out).
    readable = {k: v for k, v in values.items() if v is not None and k[0] not in ("1800", "1801")
                and any("read" in c["flags"] for s in profile["services"] for c in s.get("characteristics", [])
                        if (short_uuid(s["uuid"]), short_uuid(c["uuid"])) == k)}
    note(f"connect --values of {PERIPHERAL}: name {profile.get('name')!r}, readable values served again: "
         f"{sorted(k[1] for k in readable)}")
    adapter = adapter_address()
    timeout = 25.0
    bg, path = serve_run(profile, "--timeout", f"{timeout:g}", stdin=False)
    try:
        found = central(f"scan-address 10 {adapter}", timeout=40)
        check(found["found"], f"blesim Central heard the copy from {adapter}: {found}")
        if profile.get("name"):
            eq(found["name"], profile["name"], "the copy's advertised name")
        served = {short_uuid(s["uuid"]) for s in profile["services"]} - {"1800", "1801"}
        check(set(found["services"]) <= served and found["services"], f"advertised services {found['services']} among {served}")
        note(f"the copy advertises {found['services']} (ad {found['ad']}, scan response {found['scan_response_ad']})")
        central(f"connect {adapter}", timeout=40)
        central_link_events(bg, "serve (clone)")
        for (service, characteristic), value in sorted(readable.items()):
            eq(central(f"read {characteristic}"), {"value": value}, f"the copy's {service}/{characteristic}")
            check_event(wait_event(bg, "read", characteristic=characteristic), "read",
                        {"device": CENTRAL, "service": service, "characteristic": characteristic, "descriptor": None,
                         "offset": 0, "value": value})
        central("disconnect")
        wait_event(bg, "disconnected", address=CENTRAL)
        r = bg.finish(timeout + 20)
    finally:
        if bg.p.poll() is None:
            stop(bg, signal.SIGKILL)
        os.unlink(path)
    expect_rc(r, 0)
    check(r.elapsed >= timeout - 0.5, f"serve ended at its {timeout:g} s timeout: {r.elapsed:.1f} s")
    idle_advertising("serve (clone)")
    forget_central()
