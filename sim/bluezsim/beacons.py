"""Beacon advertisers, with fault beacons: devices whose manufacturer or service data is in a
beacon format blectl decodes (scan's, info's and devices' `decoded`): iBeacon (Apple's Proximity
Beacon Specification), Eddystone UID, URL and TLM (google/eddystone), BTHome v2 unencrypted
(bthome.io/format), one BTHome frame cut short (undecodable), and one BTHome v2 encrypted with
a known bind key (bthome.io/encryption). Kept out of the default world, whose scan the tests
count. Each frame below is the one sim/README.md documents."""

from .world import DeviceSpec, u16

EDDYSTONE = u16(0xFEAA)
BTHOME = u16(0xFCD2)

# iBeacon: type 0x02, length 0x15, proximity UUID e2c56db5-dffb-48d2-b060-d0f5a71096e0,
# major 1, minor 2, measured power -59 dBm.
IBEACON = bytes.fromhex("0215" "e2c56db5dffb48d2b060d0f5a71096e0" "0001" "0002" "c5")
# Eddystone UID: ranging data -20 dBm, namespace 00112233445566778899, instance aabbccddeeff, 2 RFU.
EDDYSTONE_UID = bytes.fromhex("00" "ec" "00112233445566778899" "aabbccddeeff" "0000")
# Eddystone URL: TX power -21 dBm, https:// (0x03) "example" .org/ (0x01): https://example.org/
EDDYSTONE_URL = bytes.fromhex("10" "eb" "03") + b"example" + b"\x01"
# Eddystone TLM (plain, version 0): VBATT 3000 mV, TEMP 21.5 C (0x1580), ADV_CNT 100, SEC_CNT 1234 (123.4 s).
EDDYSTONE_TLM = bytes.fromhex("20" "00" "0bb8" "1580" "00000064" "000004d2")
# BTHome v2, unencrypted, regular: packet id 1, battery 95 %, temperature 25.00 C, humidity 50.55 %.
BTHOME_PLAIN = bytes.fromhex("40" "0001" "015f" "02c409" "03bf13")
# BTHome v2 with its humidity cut short: undecodable.
BTHOME_TRUNCATED = bytes.fromhex("40" "02c409" "03bf")

# BTHome v2 encrypted (device information 0x41) by C0:FF:EE:00:00:C7 with the bind key below:
# packet id 7, temperature 21.50 C, humidity 45.00 %; counter bytes 2a000000 (42).
BTHOME_ENCRYPTED_ADDRESS = "C0:FF:EE:00:00:C7"
BTHOME_BINDKEY = bytes.fromhex("5ec12e7b1d0a4c3f8e6b2d9a7c4f1e03")
BTHOME_ENCRYPTED_PLAINTEXT = bytes.fromhex("0007" "026608" "039411")
BTHOME_ENCRYPTED_COUNTER = bytes.fromhex("2a000000")
# The frame as the sim's encryption below makes it, for a Python without `cryptography`.
BTHOME_ENCRYPTED_PRECOMPUTED = bytes.fromhex("41055633f5f74bc0d62a0000006539608e")


def bthome_encrypt(key, address, info, counter, plaintext):
    """A BTHome v2 encrypted frame: info, AES-128-CCM ciphertext (nonce: address, d2 fc, info,
    counter; 4-byte tag), counter, MIC (bthome.io/encryption). Needs `cryptography`
    (Debian's python3-cryptography)."""
    from cryptography.hazmat.primitives.ciphers.aead import AESCCM
    nonce = bytes.fromhex(address.replace(":", "")) + b"\xd2\xfc" + bytes([info]) + counter
    sealed = AESCCM(key, tag_length=4).encrypt(nonce, plaintext, None)
    return bytes([info]) + sealed[:-4] + counter + sealed[-4:]


def bthome_encrypted_frame():
    try:
        return bthome_encrypt(BTHOME_BINDKEY, BTHOME_ENCRYPTED_ADDRESS, 0x41, BTHOME_ENCRYPTED_COUNTER,
                              BTHOME_ENCRYPTED_PLAINTEXT)
    except ImportError:
        return BTHOME_ENCRYPTED_PRECOMPUTED


def beacon_devices():
    return [
        DeviceSpec("C0:FF:EE:00:00:C1", None, "random", rssi=-67, manufacturer_data={0x004C: IBEACON},
                   connectable=False, group="beacons"),
        DeviceSpec("C0:FF:EE:00:00:C2", None, "random", rssi=-68, uuids=[EDDYSTONE],
                   service_data={EDDYSTONE: EDDYSTONE_UID}, connectable=False, group="beacons"),
        DeviceSpec("C0:FF:EE:00:00:C3", None, "random", rssi=-69, uuids=[EDDYSTONE],
                   service_data={EDDYSTONE: EDDYSTONE_URL}, connectable=False, group="beacons"),
        DeviceSpec("C0:FF:EE:00:00:C4", None, "random", rssi=-70, uuids=[EDDYSTONE],
                   service_data={EDDYSTONE: EDDYSTONE_TLM}, connectable=False, group="beacons"),
        DeviceSpec("C0:FF:EE:00:00:C5", "blesim BTHome", "random", rssi=-71,
                   service_data={BTHOME: BTHOME_PLAIN}, connectable=False, group="beacons"),
        DeviceSpec("C0:FF:EE:00:00:C6", "blesim BTHome Cut", "random", rssi=-72,
                   service_data={BTHOME: BTHOME_TRUNCATED}, connectable=False, group="beacons"),
        DeviceSpec(BTHOME_ENCRYPTED_ADDRESS, "blesim BTHome Lock", "random", rssi=-73,
                   service_data={BTHOME: bthome_encrypted_frame()}, connectable=False, group="beacons"),
    ]
