"""bleak's write-without-response loop, the baseline of blectl's `write --file`, for bench/run:
    write.py ADDRESS CHARACTERISTIC FILE
finds the device, connects, writes FILE with write_gatt_char(..., response=False) in chunks of
max_write_without_response_size (MTU - 3, from the characteristic's MTU property; bleak sends
each as WriteValue with type "command"), disconnects, and prints one JSON line
{"bytes", "packets", "mtu", "seconds"} (seconds: the write loop alone).
"""
import asyncio
import json
import sys
import time

from bleak import BleakClient, BleakScanner


async def main(address, uuid, path):
    with open(path, "rb") as f:
        data = f.read()
    device = await BleakScanner.find_device_by_address(address, timeout=20)
    if device is None:
        print("not found", file=sys.stderr)
        return 1
    async with BleakClient(device, timeout=60) as client:
        char = client.services.get_characteristic(uuid)
        size = char.max_write_without_response_size
        packets = 0
        t0 = time.perf_counter()
        for i in range(0, len(data), size):
            await client.write_gatt_char(char, data[i:i + size], response=False)
            packets += 1
        seconds = time.perf_counter() - t0
        print(json.dumps({"bytes": len(data), "packets": packets, "mtu": size + 3, "seconds": seconds}), flush=True)
    return 0


try:
    sys.exit(asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3])))
except KeyboardInterrupt:
    sys.exit(130)
