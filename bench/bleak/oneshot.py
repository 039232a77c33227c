"""bleak equivalents of blectl's one-shot commands, for bench/run:
    oneshot.py battery ADDRESS   scan for it, connect, read 0x2A19, print JSON (flushed: its
                                 time to result), disconnect (bleak waits for BlueZ's reply)
    oneshot.py version ADDRESS   same, reading the Device Information strings
    oneshot.py connect ADDRESS   connect and list services (for the Ctrl-C test)
"""
import asyncio
import json
import sys

from bleak import BleakClient, BleakScanner

DIS = {"00002a26-0000-1000-8000-00805f9b34fb": "firmware_revision",
       "00002a27-0000-1000-8000-00805f9b34fb": "hardware_revision",
       "00002a28-0000-1000-8000-00805f9b34fb": "software_revision",
       "00002a29-0000-1000-8000-00805f9b34fb": "manufacturer",
       "00002a24-0000-1000-8000-00805f9b34fb": "model_number"}
BATTERY = "00002a19-0000-1000-8000-00805f9b34fb"


async def main(what, address):
    device = await BleakScanner.find_device_by_address(address, timeout=20)
    if device is None:
        print("not found", file=sys.stderr)
        return 1
    async with BleakClient(device, timeout=60) as client:
        if what == "battery":
            value = await client.read_gatt_char(BATTERY)
            print(json.dumps({"address": address, "percentage": value[0]}), flush=True)
        elif what == "version":
            result = {"address": address}
            for service in client.services:
                for char in service.characteristics:
                    if char.uuid in DIS:
                        result[DIS[char.uuid]] = (await client.read_gatt_char(char)).decode()
            print(json.dumps(result), flush=True)
        else:
            print(json.dumps({"address": address, "services": [s.uuid for s in client.services]}))
    return 0


try:
    sys.exit(asyncio.run(main(sys.argv[1], sys.argv[2])))
except KeyboardInterrupt:
    sys.exit(130)
