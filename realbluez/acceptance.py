#!/usr/bin/python3
"""blectl acceptance tests against a real bluetoothd (the realbluez VM), run on the host.

Usage: /usr/bin/python3 realbluez/acceptance.py --blectl BIN --bus tcp:host=127.0.0.1,port=N
                                               [--ctl SOCKET] [-k SUBSTRING] [-v]
Needs python3-dbus (Debian's /usr/bin/python3). realbluez/run boots the VM and calls this.
The VM world is realbluez/peripheral.py: "blesim Real" at F0:5E:A1:00:00:01 (random).
Each test asserts exact values and exit statuses; the summary lists every check.
Exits 0 when all tests pass, 1 otherwise.
"""
import argparse
import os
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ctl  # noqa: E402
import rig  # noqa: E402
import rig_gatt  # noqa: E402
import tree_dump  # noqa: E402
from accept_scan import *  # noqa: E402,F401,F403
from accept_connect import *  # noqa: E402,F401,F403
from accept_probe import *  # noqa: E402,F401,F403
from accept_info import *  # noqa: E402,F401,F403
from accept_read import *  # noqa: E402,F401,F403
from accept_write import *  # noqa: E402,F401,F403
from accept_request import *  # noqa: E402,F401,F403
from accept_link import *  # noqa: E402,F401,F403
from accept_notify import *  # noqa: E402,F401,F403
from accept_filters import *  # noqa: E402,F401,F403
from accept_peripheral import *  # noqa: E402,F401,F403


TESTS = [
    test_adapter, test_scan, test_second_scan, test_two_scans_at_once, test_scan_service, test_connect,
    test_battery_default, test_version, test_version_vendor, test_battery_vendor, test_missing_device,
    test_battery_not_discoverable, test_info_not_discoverable, test_sweep_two_devices,
    test_sigint_connect_early, test_sigint_connect_linked, test_sigint_scan,
    test_scan_after_interrupt, test_sigterm_scan, test_two_connects_at_once,
    # The GATT toolbox (test_info removes blesim Real from bluetoothd first).
    test_adapters, test_info, test_devices, test_read_battery, test_read_device_information, test_read_offset,
    test_read_descriptor, test_read_gap, test_read_refused, test_read_unknown_device, test_write_vendor,
    test_write_claimed, test_write_refused,
    test_request, test_request_timeout, test_disconnect_held, test_disconnect_not_connected,
    test_unpair_connected, test_pair_unpair,
    test_notify_count, test_notify_timeout, test_notify_link_drop, test_notify_reconnect,
    test_request_after_failure, test_notify_after_failure, test_notify_acquired_in_vm, test_back_to_back, test_write_file_in_vm,
    # blectl as the peripheral, blesim Central (bumble) as the central.
    test_advertise_central, test_serve_central, test_serve_clone,
    test_bluetoothd_restart_during_connect,
    # Last: these restart bluetoothd without the battery plugin.
    test_battery_noplugin, test_connect_noplugin, test_read_descriptor_noplugin,
]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--blectl", required=True)
    p.add_argument("--bus", required=True)
    p.add_argument("--ctl")
    p.add_argument("-k", action="append", default=[], help="run tests whose name contains this")
    p.add_argument("-v", "--verbose", action="store_true")
    p.add_argument("--repeat", type=int, default=1, help="run the selected tests this many rounds (flake hunting); bluetoothd is restarted with its default plugins between rounds")
    p.add_argument("--versions", help="the image's versions file (build-image), printed with the results")
    p.add_argument("--dump-tree", metavar="FILE", help="first write the shape of bluetoothd's object tree (tree_dump.py) to FILE")
    p.add_argument("--no-tests", action="store_true", help="run no test (with --dump-tree)")
    args = rig.args = p.parse_args()
    packages = open(args.versions).read().splitlines() if args.versions else []
    rig.bluez = tree_dump.bluez_version()
    version_line = f"bluetoothd {rig.bluez[0]}.{rig.bluez[1]} (Adapter1.Modalias {rig.adapter_props()['Modalias']})" + \
        "".join(f"; {p}" for p in packages)
    print(version_line, flush=True)
    if args.dump_tree:
        if args.ctl:
            rig.wait_for_command_channel()
            rig.fixture("--dump-tree")
        d = tree_dump.write(args.dump_tree, packages)
        print(f"tree of bluetoothd {d['bluetoothd']['version']} written to {args.dump_tree}", flush=True)
        # The rig's own check that `btmgmt con` (assert_idle's kernel links) still answers
        # on this version: it listed the link held while the tree was taken.
        check_links = d["rig"]["btmgmt_con_with_a_link"]
        if args.ctl and not check_links:
            rig.note("rig: btmgmt con listed no link while one was held (assert_idle's kernel check is blind here)")
        # The tests start from a fresh boot's world: bluetoothd knows blesim Real from its
        # advertisements only (test_scan expects the advertised UUIDs, not the resolved ones).
        rig_gatt.remove_device()
        rig.wait_until(lambda: not rig.connected_devices(), 6.0, "no Connected device after the tree dump")
    selected = [t for t in TESTS if not args.k or any(k in t.__name__ for k in args.k)]
    if args.no_tests:
        selected = []
    rounds = max(1, args.repeat)
    t_all = time.monotonic()
    if args.ctl:
        dt = rig.wait_for_command_channel()
        if dt > 0.5:
            rig.note(f"the command channel answered {dt:.1f} s after hci0 was powered")
    for index in range(rounds * len(selected)):
        t = selected[index % len(selected)]
        if index and index % len(selected) == 0:
            # A new round starts from what a fresh boot has: bluetoothd with its default
            # plugins and no device objects (the earlier round may have left it running
            # --noplugin=battery, and with the peripheral's resolved services cached).
            print(f"=== round {index // len(selected) + 1} of {rounds}", flush=True)
            rig.restart_bluetoothd()
        print(f"--- {t.__name__}", flush=True)
        t0 = time.monotonic()
        try:
            try:
                rig.fixture(t.__name__)
            except Exception as e:
                raise rig.RigError(f"rig.fixture before the test: {e!r}") from e
            t0 = time.monotonic()
            t()
            rig.results.append((t.__name__, True, ""))
            print(f"PASS {t.__name__} ({time.monotonic() - t0:.1f} s)", flush=True)
        except rig.Skipped as e:
            rig.skipped.append((t.__name__, str(e)))
            print(f"SKIP {t.__name__}: {e}", flush=True)
        except rig.Failed as e:
            rig.results.append((t.__name__, False, str(e)))
            print(f"FAIL {t.__name__}: {e}", flush=True)
        except Exception as e:  # a broken test or rig, not a blectl verdict
            rig.results.append((t.__name__, False, f"error: {e!r}"))
            print(f"ERROR {t.__name__}: {e!r}", flush=True)
            traceback.print_exc()
        if not rig.results[-1][1] and args.ctl:
            try:
                _, log = ctl.command(args.ctl, "log", timeout=10)
                print("    VM log tail:\n      " + "\n      ".join(log.splitlines()[-25:]), flush=True)
            except Exception as e:
                print(f"    (no VM log: {e!r})")
    passed = sum(ok for _, ok, _ in rig.results)
    print(f"\n{version_line}")
    print(f"{passed}/{len(rig.results)} passed in {time.monotonic() - t_all:.0f} s"
          + (f", {len(rig.skipped)} skipped" if rig.skipped else ""))
    for name, ok, detail in rig.results:
        print(f"  {'PASS' if ok else 'FAIL'} {name}{': ' + detail if detail else ''}")
    for name, why in rig.skipped:
        print(f"  SKIP {name}: {why}")
    if rig.observations:
        print("rig.observations:\n  " + "\n  ".join(rig.observations))
    print(f"rig.fixture rig.repairs: {len(rig.repairs)}" + "".join(f"\n  before {t}: {what}" for t, what in rig.repairs))
    return 0 if passed == len(rig.results) else 1


if __name__ == "__main__":
    sys.exit(main())
