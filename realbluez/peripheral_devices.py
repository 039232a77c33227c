"""The bumble devices on the link (peripheral.py's docstring): "blesim Real" with its GATT
database and the record of what it received, and the two filler advertisers."""

import asyncio
import hashlib
import logging

from bumble import hci
from bumble.controller import Controller
from bumble.core import AdvertisingData
from bumble.device import Device
from bumble.gatt import (
    GATT_BATTERY_LEVEL_CHARACTERISTIC,
    GATT_BATTERY_SERVICE,
    GATT_DEVICE_INFORMATION_SERVICE,
    GATT_FIRMWARE_REVISION_STRING_CHARACTERISTIC,
    GATT_MANUFACTURER_NAME_STRING_CHARACTERISTIC,
    GATT_MODEL_NUMBER_STRING_CHARACTERISTIC,
    Characteristic,
    CharacteristicValue,
    Service,
)

from peripheral_fixes import clear_unsupported_features

NAME = "blesim Real"
PERIPHERAL_ADDRESS = "F0:5E:A1:00:00:01"
BATTERY = 73
FIRMWARE = (3, 1, 4)
VENDOR_SERVICE = "5a1e0001-6c2d-4b8e-9f3a-0c1d2e3f4a5b"
VENDOR_WRITE = "5a1e0002-6c2d-4b8e-9f3a-0c1d2e3f4a5b"
VENDOR_NOTIFY = "5a1e0003-6c2d-4b8e-9f3a-0c1d2e3f4a5b"
# A writable characteristic inside Device Information 0x180A, a service bluetoothd's
# deviceinfo plugin claims: 5.80 and later export it read-only (ExportClaimedServices).
CLAIMED_WRITE = "5a1e0004-6c2d-4b8e-9f3a-0c1d2e3f4a5b"
QUIET_NAME = "blesim Quiet"
QUIET_ADDRESS = "F0:5E:A1:00:00:02"
QUIET_BATTERY = 42
COMPANY_ID = 0x05F1

log = logging.getLogger("peripheral")


def adv_data(*fields):
    return bytes(AdvertisingData(list(fields)))


def build_peripheral(link):
    controller = Controller("peripheral", link=link)
    clear_unsupported_features(controller)
    device = Device.with_hci(NAME, hci.Address(PERIPHERAL_ADDRESS), controller, controller)

    battery_level = Characteristic(
        GATT_BATTERY_LEVEL_CHARACTERISTIC,
        Characteristic.Properties.READ | Characteristic.Properties.NOTIFY,
        Characteristic.READABLE,
        bytes([BATTERY]),
    )
    device_information = [
        Characteristic(uuid, Characteristic.Properties.READ, Characteristic.READABLE, value.encode())
        for uuid, value in (
            (GATT_MANUFACTURER_NAME_STRING_CHARACTERISTIC, "Bumble Labs"),
            (GATT_MODEL_NUMBER_STRING_CHARACTERISTIC, "Real-1"),
            (GATT_FIRMWARE_REVISION_STRING_CHARACTERISTIC, ".".join(map(str, FIRMWARE))),
        )
    ]
    # What the acceptance tests check arrived (or did not): the control port's `state`.
    # "stream": every value written to 5a1e0002-... since the last `reset-stream`, as one
    # byte stream (bytes, packets, sha256) with the ATT MTU of the link each came over.
    received = {"commands": [], "pairings": 0, "stream": StreamRecord(), "claimed": []}
    vendor_notify = Characteristic(
        VENDOR_NOTIFY, Characteristic.Properties.NOTIFY, Characteristic.READABLE, b""
    )

    def on_command(connection, value):
        value = bytes(value)
        log.info("vendor command %s from %s", value.hex(), connection.peer_address)
        received["commands"].append(value.hex())
        received["stream"].add(value, connection.att_mtu)
        if len(value) > 1:
            return  # a file streamed by write --file: no answer per packet
        if value == b"\x01":
            answer = bytes([0x81, *FIRMWARE])
        elif value == b"\x02":
            answer = bytes([0x82, BATTERY])
        else:
            answer = bytes([0xEE, value[0] if value else 0])

        async def send():
            await asyncio.sleep(0.01)  # after the write response, as a real device would
            await device.notify_subscriber(connection, vendor_notify, answer, force=True)

        asyncio.get_running_loop().create_task(send())

    vendor_write = Characteristic(
        VENDOR_WRITE,
        Characteristic.Properties.WRITE | Characteristic.Properties.WRITE_WITHOUT_RESPONSE,
        Characteristic.WRITEABLE,
        CharacteristicValue(write=on_command),
    )
    def on_claimed_write(connection, value):
        log.info("claimed-service write %s from %s", bytes(value).hex(), connection.peer_address)
        received["claimed"].append(bytes(value).hex())

    claimed_write = Characteristic(
        CLAIMED_WRITE, Characteristic.Properties.WRITE, Characteristic.WRITEABLE,
        CharacteristicValue(write=on_claimed_write),
    )
    device.add_services([
        Service(GATT_BATTERY_SERVICE, [battery_level]),
        Service(GATT_DEVICE_INFORMATION_SERVICE, [*device_information, claimed_write]),
        Service(VENDOR_SERVICE, [vendor_write, vendor_notify]),
    ])
    def on_connection(c):
        log.info("connection from %s", c.peer_address)
        # bumble's default pairing config (Just Works: NoInputNoOutput, SC, bonding,
        # keys kept in memory) answers the host's pairing; logged for the pair test.
        def on_pairing(keys):
            received["pairings"] += 1
            log.info("paired with %s (sc %s)", c.peer_address, c.sc)

        c.on("pairing", on_pairing)
        c.on("pairing_failure", lambda reason: log.info("pairing with %s failed: %s", c.peer_address, reason))

    device.on("connection", on_connection)
    device.on("disconnection", lambda reason: log.info("disconnection (%s)", reason))
    data = adv_data(
        (AdvertisingData.FLAGS, bytes([0x06])),
        (AdvertisingData.COMPLETE_LOCAL_NAME, NAME.encode()),
        (AdvertisingData.COMPLETE_LIST_OF_16_BIT_SERVICE_CLASS_UUIDS, bytes.fromhex("0f180a18")),
        (AdvertisingData.MANUFACTURER_SPECIFIC_DATA, COMPANY_ID.to_bytes(2, "little") + b"\x01\x02"),
        (AdvertisingData.TX_POWER_LEVEL, bytes([4])),
    )
    device.blesim_received = received
    device.blesim_vendor_notify = vendor_notify
    return device, data


class StreamRecord:
    """What arrived on the vendor write characteristic, as one stream."""

    def __init__(self):
        self.reset()

    def reset(self):
        self.hash = hashlib.sha256()
        self.bytes = 0
        self.packets = 0
        self.largest = 0
        self.mtus = set()

    def add(self, value, mtu):
        self.hash.update(value)
        self.bytes += len(value)
        self.packets += 1
        self.largest = max(self.largest, len(value))
        self.mtus.add(mtu)

    def line(self):
        return (f"bytes {self.bytes}; packets {self.packets}; largest {self.largest}; "
                f"sha256 {self.hash.hexdigest()}; mtu {' '.join(map(str, sorted(self.mtus))) or 'none'}")


def build_quiet(link):
    """"blesim Quiet": connectable, with Battery 0x180F (0x2A19 = 42), advertising its name
    and manufacturer data but no Flags AD at all, so neither LE General nor Limited
    Discoverable: bluetoothd 5.83 and later (FilterDiscoverable, on by default) drop it
    from a discovery they count as unfiltered."""
    controller = Controller("quiet", link=link)
    clear_unsupported_features(controller)
    device = Device.with_hci(QUIET_NAME, hci.Address(QUIET_ADDRESS), controller, controller)
    device.add_services([Service(GATT_BATTERY_SERVICE, [Characteristic(
        GATT_BATTERY_LEVEL_CHARACTERISTIC,
        Characteristic.Properties.READ | Characteristic.Properties.NOTIFY,
        Characteristic.READABLE,
        bytes([QUIET_BATTERY]),
    )])])
    device.on("connection", lambda c: log.info("quiet: connection from %s", c.peer_address))
    return device, adv_data(
        (AdvertisingData.COMPLETE_LOCAL_NAME, QUIET_NAME.encode()),
        (AdvertisingData.MANUFACTURER_SPECIFIC_DATA, COMPANY_ID.to_bytes(2, "little") + b"\x02"),
    )


def build_filler(link, index, name):
    controller = Controller(f"filler{index}", link=link)
    clear_unsupported_features(controller)
    device = Device.with_hci(name or "", hci.Address(f"F0:5E:A1:00:00:{0x10 + index:02X}"), controller, controller)
    fields = [(AdvertisingData.FLAGS, bytes([0x06]))]
    if name:
        fields.append((AdvertisingData.COMPLETE_LOCAL_NAME, name.encode()))
    fields.append((AdvertisingData.MANUFACTURER_SPECIFIC_DATA, COMPANY_ID.to_bytes(2, "little") + bytes([0x10 + index])))
    return device, adv_data(*fields)
