"""bleak scanner for bench/run: one JSON line per device the first time it is detected.
Output is flushed once per event-loop turn (batch-like, as blectl does). Ends on
SIGINT (asyncio.run cancels main, the scanner stops) or SIGTERM, or after argv[1] s."""
import asyncio
import json
import signal
import sys

from bleak import BleakScanner

seen = set()
out = sys.stdout
flush_pending = False


def flush():
    global flush_pending
    flush_pending = False
    out.flush()


def detected(device, adv):
    global flush_pending
    if device.address in seen:
        return
    seen.add(device.address)
    out.write(json.dumps({"address": device.address, "name": adv.local_name, "rssi": adv.rssi}) + "\n")
    if not flush_pending:
        flush_pending = True
        asyncio.get_running_loop().call_soon(flush)


async def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 600
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    async with BleakScanner(detected):
        try:
            await asyncio.wait_for(stop.wait(), seconds)
        except asyncio.TimeoutError:
            pass
    out.flush()


try:
    asyncio.run(main())
except KeyboardInterrupt:
    sys.exit(130)
