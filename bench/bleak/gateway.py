"""A bleak + paho-mqtt gateway, the peer of `blectl scan --updates --mqtt` in bench/gateway.py:
    gateway.py --port PORT --seconds S [--host H] [--prefix P] [--gateway G] [--min-interval S]

BleakScanner with a detection callback, the discovery filter blectl asks for with --updates
(RSSI -127, DuplicateData true), and one JSON record per advertisement published with QoS 1,
retained, to PREFIX/GATEWAY/ADDRESS/advertisement; PREFIX/GATEWAY/status is `online`, then
`offline` (also the last will), as blectl's topics (README, "Gateways"). paho runs the
network on its own thread (loop_start), as libmosquitto does for blectl; up to QUEUE records
wait for their PUBACK, and records beyond are dropped and counted.

--min-interval S is blectl's throttle: a sighting in which more than RSSI changed since the
device's last record is published at once; an RSSI-only one only when S seconds have passed
since that record, else held (a newer one replaces it) and published when the interval ends,
checked every 250 ms.

Ends after S seconds, on SIGINT or SIGTERM: publishes `offline`, waits up to 3 s for the
broker's acknowledgements, and writes {"event":"mqtt_summary","dropped":N,"unacknowledged":M}
to stderr.
"""
import argparse
import asyncio
import collections
import json
import signal
import sys
import time

import paho.mqtt.client as mqtt
from bleak import BleakScanner
from bleak.args.bluez import BlueZScannerArgs

QUEUE = 10000
TICK = 0.25


class Clock:
    """RFC 3339 UTC times with milliseconds, the date and time of day made once per second."""

    def __init__(self):
        self.second = None
        self.prefix = ""

    def now(self):
        t = time.time()
        second = int(t)
        if second != self.second:
            self.second = second
            self.prefix = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))
        return f"{self.prefix}.{int((t - second) * 1000):03d}Z"


class Device:
    """What the gateway keeps per device: first sighting, the content of its last record
    (everything but RSSI and the times), when that record went out, and a record held."""

    __slots__ = ("first_seen", "content", "published_at", "held")

    def __init__(self, first_seen):
        self.first_seen = first_seen
        self.content = None
        self.published_at = 0.0
        self.held = None


class Gateway:
    def __init__(self, client, prefix, gateway, min_interval):
        self.client = client
        self.topic = f"{prefix}/{gateway}"
        self.min_interval = min_interval
        self.clock = Clock()
        self.devices = {}
        self.due = collections.deque()  # (time the interval ends, address), in time order
        self.published = 0
        self.dropped = 0

    def publish(self, address, record, device, now):
        device.published_at = now
        info = self.client.publish(f"{self.topic}/{address}/advertisement", json.dumps(record), qos=1, retain=True)
        self.published += 1
        if info.rc == mqtt.MQTT_ERR_QUEUE_SIZE:
            self.dropped += 1
        if self.min_interval:
            self.due.append((now + self.min_interval, address))

    def detected(self, device, adv):
        address = device.address
        stamp = self.clock.now()
        known = self.devices.get(address)
        if known is None:
            known = self.devices[address] = Device(stamp)
        content = (adv.local_name, adv.tx_power, tuple(adv.service_uuids),
                   tuple(adv.manufacturer_data.items()), tuple(adv.service_data.items()))
        record = {
            "address": address,
            "address_type": device.details.get("props", {}).get("AddressType"),
            "name": adv.local_name,
            "rssi": adv.rssi,
            "tx_power": adv.tx_power,
            "uuids": adv.service_uuids,
            "manufacturer_data": {f"{company:04x}": data.hex() for company, data in adv.manufacturer_data.items()},
            "service_data": {uuid: data.hex() for uuid, data in adv.service_data.items()},
            "time": stamp,
            "first_seen": known.first_seen,
            "last_seen": stamp,
        }
        now = time.monotonic()
        changed = content != known.content
        known.content = content
        if not self.min_interval or changed or now - known.published_at >= self.min_interval:
            known.held = None
            self.publish(address, record, known, now)
        else:
            known.held = record

    async def release_held(self):
        """Every TICK: the records held by devices whose interval has ended."""
        while True:
            await asyncio.sleep(TICK)
            now = time.monotonic()
            while self.due and self.due[0][0] <= now:
                _, address = self.due.popleft()
                device = self.devices[address]
                if device.held is not None and now - device.published_at >= self.min_interval:
                    record, device.held = device.held, None
                    self.publish(address, record, device, now)


async def scan(gateway, seconds):
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    bluez = BlueZScannerArgs(filters={"RSSI": -127, "DuplicateData": True})
    ticker = asyncio.create_task(gateway.release_held()) if gateway.min_interval else None
    async with BleakScanner(gateway.detected, bluez=bluez):
        try:
            await asyncio.wait_for(stop.wait(), seconds)
        except asyncio.TimeoutError:
            pass
    if ticker:
        ticker.cancel()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--prefix", default="bench")
    parser.add_argument("--gateway", default="bleak")
    parser.add_argument("--seconds", type=float, required=True)
    parser.add_argument("--min-interval", type=float, default=0)
    args = parser.parse_args()

    client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=f"bench-{args.gateway}")
    client.max_queued_messages_set(QUEUE)
    acknowledged = [0]  # PUBACKs, counted on paho's thread

    def on_publish(_client, _userdata, _mid, _reason, _properties):
        acknowledged[0] += 1

    client.on_publish = on_publish
    status = f"{args.prefix}/{args.gateway}/status"
    client.will_set(status, "offline", qos=1, retain=True)
    client.connect(args.host, args.port)
    client.loop_start()
    client.publish(status, "online", qos=1, retain=True)

    gateway = Gateway(client, args.prefix, args.gateway, args.min_interval)
    asyncio.run(scan(gateway, args.seconds))

    client.publish(status, "offline", qos=1, retain=True)
    sent = gateway.published + 2 - gateway.dropped  # and the two status messages
    deadline = time.monotonic() + 3
    while acknowledged[0] < sent and time.monotonic() < deadline:
        time.sleep(0.01)
    unacknowledged = sent - acknowledged[0]
    client.disconnect()
    client.loop_stop()
    print(json.dumps({"event": "mqtt_summary", "dropped": gateway.dropped, "unacknowledged": unacknowledged}),
          file=sys.stderr)


if __name__ == "__main__":
    main()
