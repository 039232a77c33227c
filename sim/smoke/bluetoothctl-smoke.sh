#!/bin/bash
# bluetoothctl (BlueZ 5.66) against the simulator at $DBUS_SYSTEM_BUS_ADDRESS:
# scan finds "blesim Probe", connect, read 0x2A19 = 87 (0x57), notify on the vendor
# response characteristic and see [81 01 04 02] after writing 0x01 to the command one.
# bluetoothctl prints value changes only for its selected attribute, so one instance
# (A) holds the response characteristic with notify on, another (B) writes the command.
set -uo pipefail
case "${1:-}" in
    "") ;;
    -h|--help)
        echo "Usage: DBUS_SYSTEM_BUS_ADDRESS=... sim/smoke/bluetoothctl-smoke.sh"
        echo
        echo "bluetoothctl against the simulator on that bus: scan finds \"blesim Probe\", connect,"
        echo "read 0x2A19 = 87, notify on the vendor response after writing 0x01. Exits 0 when it passes."
        exit 0 ;;
    *) echo "bluetoothctl-smoke.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
esac
: "${DBUS_SYSTEM_BUS_ADDRESS:?set DBUS_SYSTEM_BUS_ADDRESS (see sim/start)}"
ADDR=C0:FF:EE:00:00:01
RSP=5a1e0003-6c2d-4b8e-9f3a-0c1d2e3f4a5b
CMD=5a1e0002-6c2d-4b8e-9f3a-0c1d2e3f4a5b
work="$(mktemp -d)"
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
    exec 3>&- 4>&- 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT

start_ctl() {   # name fd
    mkfifo "$work/$1.in"
    stdbuf -oL bluetoothctl <"$work/$1.in" >"$work/$1.raw" 2>&1 &
    pids+=($!)
    eval "exec $2>\"$work/$1.in\""
}
clean() { sed -e 's/\x1b\[[0-9;]*[A-Za-z]//g' -e 's/[\x01\x02\r]//g' "$work/$1.raw"; }
wait_for() {   # name regex seconds
    local deadline=$((SECONDS + $3))
    while ((SECONDS <= deadline)); do
        clean "$1" | grep -Eq "$2" && return 0
        sleep 0.1
    done
    echo "FAIL: bluetoothctl $1: no /$2/ within $3 s; output:" >&2
    clean "$1" | tail -40 >&2
    exit 1
}
fail() { echo "FAIL: $*" >&2; exit 1; }

start_ctl a 3
wait_for a "Agent registered|\[bluetooth\]" 5
echo "scan on" >&3
wait_for a "\[NEW\] Device $ADDR blesim Probe" 5
echo "scan off" >&3
wait_for a "Discovery stopped|Discovering: no" 5
echo "connect $ADDR" >&3
wait_for a "Connection successful" 5
wait_for a "ServicesResolved: yes" 5
echo "menu gatt" >&3
echo "select-attribute 00002a19-0000-1000-8000-00805f9b34fb" >&3
echo "read" >&3
wait_for a " 57 +W" 5
echo "ok: read 0x2A19 = 0x57 (87)"
echo "select-attribute $RSP" >&3
echo "notify on" >&3
wait_for a "Notify started" 5

start_ctl b 4
wait_for b "\[blesim Probe\]|Agent registered|\[bluetooth\]" 5
echo "menu gatt" >&4
echo "select-attribute $CMD" >&4
echo 'write "0x01"' >&4
wait_for b "Attempting to write" 5
wait_for a " 81 01 04 02 " 5
echo "ok: notification 81 01 04 02 after writing 0x01"
echo "quit" >&4

echo "notify off" >&3
echo "back" >&3
echo "disconnect $ADDR" >&3
wait_for a "Successful disconnected" 10
echo "quit" >&3
echo "PASS: bluetoothctl smoke"
