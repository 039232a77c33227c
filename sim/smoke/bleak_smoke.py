"""bleak against the simulator at $DBUS_SYSTEM_BUS_ADDRESS: scan finds "blesim Probe",
connect, read 0x2A19 = 87, notify on the vendor response characteristic and see
[0x81, 1, 4, 2] after writing 0x01. Run with the venv python (see sim/README.md)."""

import asyncio
import sys

if __name__ == "__main__" and sys.argv[1:] in (["-h"], ["--help"]):
    print("Usage: DBUS_SYSTEM_BUS_ADDRESS=... <venv>/bin/python sim/smoke/bleak_smoke.py\n\n" + __doc__)
    sys.exit(0)

from bleak import BleakClient, BleakScanner  # noqa: E402

NAME = "blesim Probe"
BATTERY = "00002a19-0000-1000-8000-00805f9b34fb"
CMD = "5a1e0002-6c2d-4b8e-9f3a-0c1d2e3f4a5b"
RSP = "5a1e0003-6c2d-4b8e-9f3a-0c1d2e3f4a5b"


async def main():
    dev = await BleakScanner.find_device_by_name(NAME, timeout=5.0)
    if dev is None:
        print(f"FAIL: scan did not find {NAME!r}", file=sys.stderr)
        return 1
    print(f"ok: found {dev.address} {dev.name}")
    async with BleakClient(dev, timeout=10.0) as client:
        level = await client.read_gatt_char(BATTERY)
        if list(level) != [87]:
            print(f"FAIL: battery level {list(level)} != [87]", file=sys.stderr)
            return 1
        print("ok: read 0x2A19 = 87")
        got = asyncio.get_running_loop().create_future()

        def on_notify(_char, data):
            if data and data[0] == 0x81 and not got.done():
                got.set_result(bytes(data))

        await client.start_notify(RSP, on_notify)
        await client.write_gatt_char(CMD, b"\x01", response=True)
        data = await asyncio.wait_for(got, 5.0)
        if list(data) != [0x81, 1, 4, 2]:
            print(f"FAIL: version notification {list(data)}", file=sys.stderr)
            return 1
        print("ok: notification 81 01 04 02")
        await client.stop_notify(RSP)
    print("PASS: bleak smoke")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
