"""bleak's fleet sweep, for bench/fleet.py:
    fleet.py WIDTH TIMEOUT ADDRESS...

Every address probed as `blectl get-battery --parallel WIDTH` probes it: asyncio.gather over
the devices under an asyncio.Semaphore(WIDTH), each finding its device, connecting, reading
Battery Level 0x2A19 and disconnecting (bleak waits for BlueZ's reply), within TIMEOUT
seconds. The devices are found by one BleakScanner shared by all, each task waiting for its
address to be reported: BlueZ allows one discovery per client, so concurrent
BleakScanner.find_device_by_address calls fail all but the first with InProgress. One JSON line per
device on stdout, flushed as it is known: {"address", "percentage"} or {"address", "error"}.
Exit status 0 when every device succeeded, else 1.
"""
import asyncio
import json
import sys

from bleak import BleakClient, BleakScanner

BATTERY = "00002a19-0000-1000-8000-00805f9b34fb"


async def probe(address, found, timeout):
    try:
        device = await asyncio.wait_for(asyncio.shield(found), timeout)
    except asyncio.TimeoutError:
        raise LookupError(f"device {address} not found") from None
    async with BleakClient(device, timeout=timeout) as client:
        value = await client.read_gatt_char(BATTERY)
    return {"address": address, "percentage": value[0]}


async def main(width, timeout, addresses):
    slots = asyncio.Semaphore(width)
    loop = asyncio.get_running_loop()
    found = {a.upper(): loop.create_future() for a in addresses}

    def detected(device, _advertisement):
        future = found.get(device.address.upper())
        if future is not None and not future.done():
            future.set_result(device)

    async def one(address):
        async with slots:
            try:
                line = await asyncio.wait_for(probe(address, found[address.upper()], timeout), timeout)
            except Exception as error:  # noqa: BLE001 -- every failure is the device's line
                line = {"address": address, "error": f"{type(error).__name__}: {error}"}
        print(json.dumps(line), flush=True)
        return "error" not in line

    async with BleakScanner(detection_callback=detected):
        results = await asyncio.gather(*(one(a) for a in addresses))
    return 0 if all(results) else 1


try:
    sys.exit(asyncio.run(main(int(sys.argv[1]), float(sys.argv[2]), sys.argv[3:])))
except KeyboardInterrupt:
    sys.exit(130)
