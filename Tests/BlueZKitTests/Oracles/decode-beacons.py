#!/usr/bin/env python3
"""The decoders Home Assistant uses, as the oracle of AdvertisedFormatOracleTests.

Reads lines `bthome HEX` (the service data of 0xFCD2), `ibeacon HEX` (Apple's manufacturer
data) or `bthome-encrypt KEY DECRYPT_KEY ADDRESS COUNTER HEX` (an unencrypted BTHome frame that
this script encrypts with KEY for the device ADDRESS, the 4 counter bytes COUNTER, as
bthome.io/encryption says, with `cryptography`'s AESCCM, then has bthome-ble decode with
DECRYPT_KEY) on stdin; writes one JSON line per input line:
  bthome:  {"sensors": {key: number|string}, "binary": {key: bool}, "events": {key: [type, props]},
            "firmware": "4.2.1.0"|null, "device_type_id": int|null, "trigger_based": bool}
           keyed as bthome-ble keys them (device class, `_1`, `_2` after repeated formats);
           {"none": true} when bthome-ble decodes nothing.
  ibeacon: {"uuid": "...", "major": int, "minor": int, "power": int}, or {"none": true}.
  bthome-encrypt: as bthome, with "frame": the encrypted service data (hex) and "decrypted":
           whether bthome-ble's MIC check passed.
Needs the venv with bthome-ble and ibeacon-ble (make oracles).
"""

import json
import logging
import sys
from datetime import datetime

from bthome_ble import BTHomeBluetoothDeviceData
from cryptography.hazmat.primitives.ciphers.aead import AESCCM
from habluetooth.models import BluetoothServiceInfoBleak
from ibeacon_ble import APPLE_MFR_ID, iBeaconParser

logging.disable(logging.CRITICAL)
BTHOME_UUID = "0000fcd2-0000-1000-8000-00805f9b34fb"


def info(manufacturer_data=None, service_data=None, address="AABBCCDDEEFF"):
    # An address without colons: ibeacon-ble looks up a vendor only for those with them.
    return BluetoothServiceInfoBleak(name="beacon", address=address, rssi=-60,
                                     manufacturer_data=manufacturer_data or {}, service_data=service_data or {},
                                     service_uuids=list((service_data or {}).keys()), source="local", device=None,
                                     advertisement=None, connectable=False, time=0.0, tx_power=None)


def plain(value):
    if isinstance(value, datetime):
        return int(value.timestamp())
    return value


def bthome(data, bindkey=None, address="AABBCCDDEEFF"):
    parser = BTHomeBluetoothDeviceData(bindkey)
    update = parser.update(info(service_data={BTHOME_UUID: data}, address=address))
    if bindkey is not None and not parser.bindkey_verified:
        return {"none": True}
    if update is None or (not update.entity_values and not update.binary_entity_values and not update.events
                          and parser.device_type_id is None and not update.devices):
        return {"none": True}
    device = update.devices.get(None)
    firmware = device.sw_version if device is not None else None
    return {
        "sensors": {k.key: plain(v.native_value) for k, v in update.entity_values.items()},
        "binary": {k.key: v.native_value for k, v in update.binary_entity_values.items()},
        "events": {k.key: [v.event_type, v.event_properties] for k, v in update.events.items()},
        "firmware": firmware if firmware and not firmware.startswith("BTHome") else None,
        "device_type_id": parser.device_type_id,
        "trigger_based": bool(parser.sleepy_device),
    }


def ibeacon(data):
    advertisement = iBeaconParser().parse(info(manufacturer_data={APPLE_MFR_ID: data}))
    if advertisement is None:
        return {"none": True}
    return {"uuid": str(advertisement.uuid), "major": advertisement.major, "minor": advertisement.minor,
            "power": advertisement.power}


def encrypt(key, address, counter, frame):
    """The frame encrypted: device information with bit 0 set, ciphertext, counter, MIC."""
    info_byte = frame[0] | 0x01
    nonce = bytes.fromhex(address.replace(":", "")) + b"\xd2\xfc" + bytes([info_byte]) + counter
    sealed = AESCCM(key, tag_length=4).encrypt(nonce, frame[1:], None)
    return bytes([info_byte]) + sealed[:-4] + counter + sealed[-4:]


def bthome_encrypted(arguments):
    key, decrypt_key, address, counter, plain = arguments.split(" ")
    frame = encrypt(bytes.fromhex(key), address, bytes.fromhex(counter), bytes.fromhex(plain))
    answer = bthome(frame, bindkey=bytes.fromhex(decrypt_key), address=address)
    return {**answer, "frame": frame.hex(), "decrypted": "none" not in answer}


for line in sys.stdin:
    kind, _, hex_data = line.strip().partition(" ")
    if kind == "bthome-encrypt":
        print(json.dumps(bthome_encrypted(hex_data)), flush=True)
        continue
    data = bytes.fromhex(hex_data)
    print(json.dumps(bthome(data) if kind == "bthome" else ibeacon(data)), flush=True)
