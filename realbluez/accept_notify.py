"""Acceptance tests against a real bluetoothd: `blectl notify`."""
import json
import signal
import subprocess
import threading
import time

import rig
from rig import *  # noqa: F401,F403 (check, eq, blectl, the D-Bus view, ...)
from rig_gatt import *  # noqa: F401,F403
from rig_notify import *  # noqa: F401,F403


def test_notify_count():
    """--count 20: exactly 20 lines, seq 1..20, the values in the order bumble sent them;
    then StopNotify and the link closed. (On the host: StartNotify, the TCP bus passing no
    file descriptors; test_notify_acquired_in_vm runs AcquireNotify.)"""
    n = Background(*notify_argv("--count", "20", "--timeout", "60"))
    notify_values(20, 1)
    r = host_notify(n.finish())
    expect_ok(r)
    expect_notify_records(r, list(range(1, 21)), [1] * 20)
    assert_no_notify_session("notify --count 20")


def test_notify_timeout():
    """--timeout reached: 0 with the values received; --count 10 not reached in time: 124
    naming the notifications, after the values received."""
    n = Background(*notify_argv("--timeout", "6"))
    notify_values(3, 1)
    r = host_notify(n.finish())
    expect_ok(r)
    expect_notify_records(r, [1, 2, 3], [1, 1, 1])
    check(5.8 <= r.elapsed <= 9.0, f"ends at its 6 s timeout (took {r.elapsed:.2f} s)")
    assert_no_notify_session("notify --timeout 6")
    c = Background(*notify_argv("--count", "10", "--timeout", "6"))
    notify_values(4, 1)
    r = host_notify(c.finish())
    expect_rc(r, 124)
    expect_notify_records(r, [1, 2, 3, 4], [1] * 4)
    eq(error_of(r), {"code": "timed_out", "exit_status": 124, "retryable": False,
                     "message": f"timed out waiting for notifications of characteristic {VENDOR_NOTIFY} in service {VENDOR_SERVICE} "
                                f"on {PERIPHERAL}",
                     "operation": "notifications", "address": PERIPHERAL, "service": VENDOR_SERVICE,
                     "characteristic": VENDOR_NOTIFY, "dbus_error": None}, "error of notify --count 10 --timeout 6")
    assert_no_notify_session("notify --count 10 --timeout 6")


def test_notify_link_drop():
    """The peripheral drops the link (bumble disconnects): a plain notify ends 4 after the
    values received, with its error object; its session (kept by bluetoothd over the loss)
    stopped, no link."""
    n = Background(*notify_argv("--timeout", "60"))
    notify_values(5, 1)
    n.wait_lines(5)
    eq(bumble("drop"), ["dropped 1 link(s)"], "bumble drop")
    r = host_notify(n.finish())
    expect_rc(r, 4)
    expect_notify_records(r, [1, 2, 3, 4, 5], [1] * 5)
    # From 5.83 bluetoothd says why (Device1.Disconnected, just before Connected false): the
    # peripheral ended the link, reason Remote, with bluetoothd's own message.
    said = bluez_at_least(5, 83)
    expected = {"code": "disconnected", "exit_status": 4, "retryable": True,
                "message": f"disconnected during notifications of characteristic {VENDOR_NOTIFY} in service "
                           f"{VENDOR_SERVICE} on {PERIPHERAL}"
                           + (" (bluetoothd: org.bluez.Reason.Remote: Connection terminated by remote user)" if said else ""),
                "operation": "notifications", "address": PERIPHERAL, "service": VENDOR_SERVICE,
                "characteristic": VENDOR_NOTIFY, "dbus_error": None}
    if said:
        expected |= {"disconnect_reason": "org.bluez.Reason.Remote", "disconnect_message": "Connection terminated by remote user"}
    eq(error_of(r, disconnect_reason=said), expected, "error of notify after the link drop")
    assert_no_notify_session("notify and a link drop")


def test_notify_reconnect():
    """--reconnect across 3 link drops forced by the peripheral: the values sent on each of
    the 4 links arrive, in order, seq 1..80, tagged with links 1..4; each loss and
    reconnection on stderr; at --count 80 exit 0, no link, no session."""
    per_link = 20
    n = Background(*notify_argv("--reconnect", "--count", str(4 * per_link), "--timeout", "150"))
    for link in range(1, 5):
        notify_values(per_link, (link - 1) * per_link + 1)
        n.wait_lines(link * per_link)
        if link == 4:
            break
        eq(bumble("drop"), ["dropped 1 link(s)"], f"bumble drop of link {link}")
        n.wait_event("link_lost", link)
        n.wait_event("reconnected", link + 1, timeout=60)
    r = host_notify(n.finish())
    expect_rc(r, 0)
    expect_notify_records(r, list(range(1, 4 * per_link + 1)), [k for k in range(1, 5) for _ in range(per_link)])
    events = [json.loads(line) for line in r.err.splitlines() if line.strip()]
    eq([(e["event"], e["connection"]) for e in events if e["event"] != "reconnect_failed"],
       [("link_lost", 1), ("reconnected", 2), ("link_lost", 2), ("reconnected", 3), ("link_lost", 3), ("reconnected", 4)],
       "link losses and reconnections on stderr")
    failed = [e for e in events if e["event"] == "reconnect_failed"]
    if failed:
        note(f"notify --reconnect: {len(failed)} reconnection attempt(s) failed and were retried: "
             f"{'; '.join(e['message'] for e in failed)[:400]}")
    assert_no_notify_session("notify --reconnect")


def test_notify_after_failure():
    """notify --count right after a failed command: subscribed on a link of its own,
    exactly the values sent, nothing left."""
    def run():
        n = Background(*notify_argv("--count", "5", "--timeout", "60"))
        notify_values(5, 1)
        return host_notify(n.finish())
    linked, r = fail_then(run)
    expect_ok(r)
    expect_notify_records(r, [1, 2, 3, 4, 5], [1] * 5)
    if not linked:
        note("notify after a failure: the failed command's link was already down (nothing to test this time)")
    assert_no_notify_session("notify after a failed command")


def test_notify_acquired_in_vm():
    """notify inside the VM, on its Unix-socket system bus: AcquireNotify's socket (no
    notify_method event: stderr empty), --count 5, exactly the values bumble sent, in order;
    then the socket closed and the link too (no session, no link)."""
    # The init runs one command at a time: bumble notifies by itself once blectl has subscribed.
    eq(bumble("notify-when-subscribed 5 1"), ["scheduled 5 (1..5)"], "bumble notify-when-subscribed")
    r = vm_blectl(*notify_argv("--count", "5", "--timeout", "60"), timeout=70)
    expect_ok(r)
    expect_notify_records(r, [1, 2, 3, 4, 5], [1] * 5)
    assert_no_notify_session("notify in the VM")
