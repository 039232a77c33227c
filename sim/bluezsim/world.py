"""The simulated radio neighbourhood: device specs (the default world is a contract
with the Swift tests: addresses, names and values must not change)."""

from dataclasses import dataclass, field
from typing import Optional

BASE_UUID = "-0000-1000-8000-00805f9b34fb"
VENDOR_SVC = "5a1e0001-6c2d-4b8e-9f3a-0c1d2e3f4a5b"
VENDOR_CMD = "5a1e0002-6c2d-4b8e-9f3a-0c1d2e3f4a5b"
VENDOR_RSP = "5a1e0003-6c2d-4b8e-9f3a-0c1d2e3f4a5b"
ECHO_SVC = "ec400001-6c2d-4b8e-9f3a-0c1d2e3f4a5b"
ECHO_SINK = "ec400002-6c2d-4b8e-9f3a-0c1d2e3f4a5b"
ECHO_SOURCE = "ec400003-6c2d-4b8e-9f3a-0c1d2e3f4a5b"
# The GATT toolbox's test fixtures (fault toolbox_device): blectl read/write/request.
TOOLBOX_SVC = "5a1e0100-6c2d-4b8e-9f3a-0c1d2e3f4a5b"
TOOLBOX_TEXT = "5a1e0101-6c2d-4b8e-9f3a-0c1d2e3f4a5b"
TOOLBOX_COMMAND = "5a1e0102-6c2d-4b8e-9f3a-0c1d2e3f4a5b"
TOOLBOX_SECURE = "5a1e0103-6c2d-4b8e-9f3a-0c1d2e3f4a5b"
SECURE_SVC = "5ec00001-6c2d-4b8e-9f3a-0c1d2e3f4a5b"
SECURE_CHAR = "5ec00002-6c2d-4b8e-9f3a-0c1d2e3f4a5b"


def u16(x):
    return "%08x" % x + BASE_UUID


def norm_uuid(s):
    s = s.strip().lower()
    if len(s) <= 4:
        return u16(int(s, 16))
    if len(s) == 8:
        return s + BASE_UUID
    return s


@dataclass
class CharSpec:
    uuid: str
    flags: list
    value: bytes = b""
    role: Optional[str] = None     # "vendor_cmd", "vendor_rsp", "battery_level", "needs_pairing", "echo_sink", "echo_source"
    descriptors: list = field(default_factory=list)   # [(uuid, bytes)]: read-only, besides the CCC
    # What notify_every_ms sends, in turn, instead of the 4-byte counters (a sensor's readings).
    notify_values: list = field(default_factory=list)


@dataclass
class ServiceSpec:
    uuid: str
    chars: list


@dataclass
class DeviceSpec:
    address: str
    name: Optional[str] = None
    address_type: str = "public"
    # Device1.Alias as the user set it (bluetoothctl set-alias, a desktop's rename), kept by
    # bluetoothd in its storage; None: Alias is Name, else the address with '-' (device.c).
    alias: Optional[str] = None
    rssi: Optional[int] = None           # base RSSI while advertising
    uuids: list = field(default_factory=list)
    tx_power: Optional[int] = None
    manufacturer_data: dict = field(default_factory=dict)   # {company: bytes}
    service_data: dict = field(default_factory=dict)        # {uuid: bytes}
    appearance: Optional[int] = None
    services: list = field(default_factory=list)
    battery1: Optional[int] = None       # Battery1 Percentage when connected
    battery1_source: str = "GATT Battery Service"
    vendor: Optional[tuple] = None       # ((major, minor, patch), battery)
    connectable: bool = True
    advertises: bool = True
    group: str = "default"
    adv_flags: bytes = b"\x06"
    churn: bool = False
    # Kept by bluetoothd (world.bonded_devices): Class (BR/EDR), Device ID, pairing state.
    device_class: Optional[int] = None
    modalias: Optional[str] = None
    paired: bool = False
    bonded: bool = False
    trusted: bool = False
    blocked: bool = False
    # SMP IO capability the device pairs with: NoInputNoOutput (Just Works whatever the
    # agent) or DisplayOnly (it shows a passkey, fault pair_passkey, that a keyboard agent types).
    io_capability: str = "NoInputNoOutput"
    # Dual-mode (BR/EDR and LE, one public address; fault dual_mode_device): BlueZ 5.66 picks
    # the bearer of Device1.Connect by when it last saw each (src/device.c select_conn_bearer).
    dual: bool = False
    # What an SDP search of its BR/EDR side finds: none of them a profile bluetoothd connects.
    sdp_uuids: list = field(default_factory=list)


def gap(name, appearance=0):
    return ServiceSpec(u16(0x1800), [CharSpec(u16(0x2A00), ["read"], name.encode()),
                                     CharSpec(u16(0x2A01), ["read"], appearance.to_bytes(2, "little"))])


def gatt_svc():
    return ServiceSpec(u16(0x1801), [CharSpec(u16(0x2A05), ["indicate"], b"")])


def battery_svc(level):
    return ServiceSpec(u16(0x180F), [CharSpec(u16(0x2A19), ["read", "notify"], bytes([level]), "battery_level")])


def dis_svc(fw, mfr, model):
    return ServiceSpec(u16(0x180A), [CharSpec(u16(0x2A26), ["read"], fw.encode()),
                                     CharSpec(u16(0x2A29), ["read"], mfr.encode()),
                                     CharSpec(u16(0x2A24), ["read"], model.encode())])


def vendor_svc():
    return ServiceSpec(VENDOR_SVC, [CharSpec(VENDOR_CMD, ["write", "write-without-response"], b"", "vendor_cmd"),
                                    CharSpec(VENDOR_RSP, ["notify"], b"", "vendor_rsp")])


def echo_svc():
    """The echo/streaming service: the sink takes writes (with and without response,
    AcquireWrite) and records them (state "echo"); the source notifies each value the sink
    received (StartNotify or AcquireNotify)."""
    return ServiceSpec(ECHO_SVC, [CharSpec(ECHO_SINK, ["write", "write-without-response"], b"", "echo_sink"),
                                  CharSpec(ECHO_SOURCE, ["notify"], b"", "echo_source")])


def echo_devices():
    """Advertising only with the echo_device switch, so that the default world stays the ten
    advertisers the tests expect."""
    return [DeviceSpec("C0:FF:EE:00:00:08", "blesim Echo", rssi=-58, uuids=[ECHO_SVC],
                       services=[gatt_svc(), echo_svc()], group="echo")]
def secure_svc():
    return ServiceSpec(SECURE_SVC, [CharSpec(SECURE_CHAR, ["read"], b"blesim secret", "needs_pairing")])


def toolbox_svc():
    """A text characteristic (read, write) with a User Description, a write-without-response
    one, one that wants pairing (NotPermitted "Not paired" until Paired), and a second Battery
    Level 0x2A19 (99) so that 0x2A19 is in two services of the device."""
    return ServiceSpec(TOOLBOX_SVC, [
        CharSpec(TOOLBOX_TEXT, ["read", "write"], b"hello, toolbox", descriptors=[(u16(0x2901), b"Greeting")]),
        CharSpec(TOOLBOX_COMMAND, ["read", "write-without-response"], b""),
        CharSpec(TOOLBOX_SECURE, ["read", "write"], b"\x01", "needs_pairing"),
        CharSpec(u16(0x2A19), ["read"], b"\x63"),
    ])


def hidden_devices():
    """Advertising only with the hidden_device switch: a connectable sensor whose advertising
    flags say neither LE Limited nor LE General Discoverable (0x04: BR/EDR Not Supported)."""
    return [DeviceSpec("C0:FF:EE:00:00:0A", "blesim Hidden", rssi=-61, uuids=[u16(0x180F)], group="hidden",
                       adv_flags=b"\x04", services=[gatt_svc(), battery_svc(66)])]


def twin_dis_devices():
    """Advertising only with the twin_dis_device switch: a device with two Device Information
    Service instances, the first holding only a Model Number, the second the Firmware
    Revision and Manufacturer Name (as some vendors' stacks build it)."""
    return [DeviceSpec("C0:FF:EE:00:00:0B", "blesim Twin DIS", rssi=-63, uuids=[u16(0x180A)], group="twin",
                       services=[gatt_svc(),
                                 ServiceSpec(u16(0x180A), [CharSpec(u16(0x2A24), ["read"], b"Twin-1")]),
                                 ServiceSpec(u16(0x180A), [CharSpec(u16(0x2A26), ["read"], b"2.0.1"),
                                                           CharSpec(u16(0x2A29), ["read"], b"Blesim Twins")])])]


def toolbox_devices():
    return [DeviceSpec("C0:FF:EE:00:00:06", "blesim Toolbox", rssi=-58, uuids=[TOOLBOX_SVC], group="toolbox",
                       services=[gatt_svc(), battery_svc(33), toolbox_svc()])]


def battery_devices():
    """Advertising only with the battery_devices switch: five plain LE devices with a Battery
    Service (0x2A19 = 11, 22, 33, 44, 55), no Battery1, for loops over several devices
    (bench/prompt.py: every client reads the same GATT characteristic)."""
    return [DeviceSpec("C0:FF:EE:00:01:%02X" % i, "blesim Cell %d" % i, rssi=-60 - i, uuids=[u16(0x180F)],
                       services=[gatt_svc(), battery_svc(11 * i)], group="battery")
            for i in range(1, 6)]


def default_devices():
    return [
        DeviceSpec("C0:FF:EE:00:00:01", "blesim Probe", rssi=-55,
                   uuids=[u16(0x180F), u16(0x180A), VENDOR_SVC], tx_power=4,
                   manufacturer_data={0x05F1: b"\x01\x02"}, appearance=0x0540,
                   services=[gatt_svc(), battery_svc(87), dis_svc("1.4.2", "Blesim Labs", "Probe-1"), vendor_svc()],
                   battery1=87, vendor=((1, 4, 2), 87)),
        DeviceSpec("C0:FF:EE:00:00:02", "blesim Vendor", rssi=-60, uuids=[VENDOR_SVC],
                   services=[gatt_svc(), vendor_svc()], vendor=((2, 0, 7), 64)),
        DeviceSpec("C0:FF:EE:00:00:03", "blesim Battery1", rssi=-62, uuids=[],
                   services=[gatt_svc()], battery1=42, battery1_source="Battery Provider"),
        DeviceSpec("C0:FF:EE:00:00:04", "blesim GattBattery", rssi=-64, uuids=[u16(0x180F)],
                   services=[gatt_svc(), battery_svc(55)]),
        DeviceSpec("C0:FF:EE:00:00:05", "blesim Plain", rssi=-66, uuids=[],
                   services=[gap("blesim Plain"), gatt_svc()]),
    ]


def filler_devices():
    return [
        DeviceSpec("5E:3A:91:0C:44:21", None, "random", rssi=-78, manufacturer_data={0x004C: b"\x10\x05\x01\x18\x2d\x4e\x11"},
                   connectable=False, group="filler", adv_flags=b"\x1a"),
        DeviceSpec("6F:12:8B:DE:02:9A", None, "random", rssi=-86, connectable=False, group="filler", adv_flags=b"\x00"),
        DeviceSpec("4A:C2:7D:11:93:E0", "Tile", "random", rssi=-81, uuids=[u16(0xFEED)],
                   service_data={u16(0xFEED): b"\x02\x00\x31"}, connectable=False, group="filler"),
        DeviceSpec("7B:05:E6:40:BB:13", "LE-Bose Mini", "random", rssi=-72, tx_power=-8,
                   manufacturer_data={0x009E: b"\x00\x01"}, connectable=False, group="filler"),
        DeviceSpec("D4:8E:22:51:07:6C", None, "random", rssi=-90, tx_power=0,
                   service_data={u16(0xFE9F): b"\x00" * 8}, connectable=False, group="filler"),
    ]


def secure_devices():
    """Advertised with fault secure_device (kept out of the default world, whose scan the
    tests count)."""
    return [
        DeviceSpec("C0:FF:EE:00:00:07", "blesim Secure", rssi=-58, uuids=[SECURE_SVC], group="secure",
                   services=[gatt_svc(), secure_svc()], io_capability="DisplayOnly"),
    ]


def cached_devices():
    return [
        DeviceSpec("C0:FF:EE:00:00:A1", "blesim Stale", advertises=False, group="cached",
                   services=[gatt_svc()]),
        DeviceSpec("C0:FF:EE:00:00:A2", "blesim Stale Probe", advertises=False, group="cached",
                   uuids=[u16(0x180F)], services=[gatt_svc(), battery_svc(10)]),
    ]


def bonded_devices():
    """Devices paired earlier, loaded by bluetoothd from its storage at start-up; not in range
    (they never advertise). A BLE keyboard and a BR/EDR headset the user blocked."""
    return [
        DeviceSpec("C0:FF:EE:00:00:B1", "blesim Keys", uuids=[u16(0x1812), u16(0x180F), u16(0x180A)],
                   appearance=0x03C1, modalias="usb:v046Dp4023d0006", advertises=False, group="bonded",
                   paired=True, bonded=True, trusted=True, services=[gatt_svc(), battery_svc(73)], battery1=73),
        DeviceSpec("C0:FF:EE:00:00:B2", "blesim Headset", uuids=[u16(0x110B), u16(0x111E)], device_class=0x240404,
                   advertises=False, group="bonded", paired=True, bonded=True, blocked=True),
    ]


DUAL_ADDRESS = "C0:FF:EE:00:00:09"
DUAL_VARIANTS = ("inquiry", "no-class", "bredr-flag")


def dual_devices(variant="inquiry"):
    """Fault dual_mode_device: a dual-mode device (a watch-like wearable, Class 0x000704) that
    bluetoothd found by a BR/EDR inquiry, in the tree from start-up; it LE-advertises the
    Device Information Service. Its BR/EDR side offers only a serial port (SDP 0x1101 and PnP
    Information 0x1200), no profile bluetoothd connects. Variants: "inquiry" (Class
    exported; LE advertising flags 0x06, BR/EDR Not Supported, so an LE sighting refreshes
    only the LE bearer), "no-class" (the inquiry reported Class of Device 0: BlueZ exports
    no Class), "bredr-flag" (LE flags 0x1a: every LE sighting counts as a BR/EDR one too)."""
    return [DeviceSpec(DUAL_ADDRESS, "blesim Dual", rssi=-57, uuids=[u16(0x180A)], group="dual",
                       services=[gatt_svc(), dis_svc("3.1.0", "Blesim Wearables", "Dual-1")],
                       device_class=None if variant == "no-class" else 0x000704,
                       adv_flags=b"\x1a" if variant == "bredr-flag" else b"\x06",
                       dual=True, sdp_uuids=[u16(0x1101), u16(0x1200)])]


def icon_for(spec):
    """Device1.Icon as BlueZ 5.66 derives it (src/device.c get_icon): from Class when there is
    one (src/dbus-common.c class_to_icon, the major classes this world uses), else from
    Appearance (gap_appearance_to_icon); None (no property) when neither gives one."""
    if spec.device_class:
        major, minor = (spec.device_class & 0x1F00) >> 8, (spec.device_class & 0xFC) >> 2
        if major == 0x01:
            return "computer"
        if major == 0x02:
            return {0x01: "phone", 0x02: "phone", 0x03: "phone", 0x05: "phone", 0x04: "modem"}.get(minor)
        if major == 0x03:
            return "network-wireless"
        if major == 0x04:
            return {0x01: "audio-headset", 0x02: "audio-headset", 0x06: "audio-headphones",
                    0x0B: "camera-video", 0x0C: "camera-video", 0x0D: "camera-video"}.get(minor, "audio-card")
        return None
    if spec.appearance:
        category, sub = (spec.appearance & 0xFFC0) >> 6, spec.appearance & 0x3F
        if category == 0x0F:
            return {0x01: "input-keyboard", 0x02: "input-mouse", 0x03: "input-gaming", 0x04: "input-gaming",
                    0x05: "input-tablet", 0x08: "scanner"}.get(sub)
        return {0x00: "unknown", 0x01: "phone", 0x02: "computer", 0x05: "video-display",
                0x0A: "multimedia-player", 0x0B: "scanner"}.get(category)
    return None


def foreign_devices():
    return [
        DeviceSpec("C0:FF:EE:00:00:F1", "blesim Foreign A", rssi=-70, uuids=[u16(0x1812)], group="foreign",
                   services=[gatt_svc()]),
        DeviceSpec("C0:FF:EE:00:00:F2", "blesim Foreign B", rssi=-99, group="foreign", services=[gatt_svc()]),
    ]


def weird_devices():
    return [
        DeviceSpec("C0:FF:EE:00:00:E1", None, rssi=-75, group="weird", manufacturer_data={0xFFFF: b"\xde\xad"}),
        DeviceSpec("C0:FF:EE:00:00:E2", "", rssi=-76, group="weird"),
        DeviceSpec("C0:FF:EE:00:00:E3", "bad\x01\x1b[31mname\n", rssi=-77, group="weird"),
        DeviceSpec("C0:FF:EE:00:00:E4", "caf\ufffd probe", rssi=-78, group="weird"),
        DeviceSpec("C0:FF:EE:00:00:E5", None, rssi=-79, group="weird"),
    ]


# What the bench advertisers carry besides their name (fault advertisers_data): a BTHome v2
# frame (bthome.io/format: packet id, battery 95 %, temperature 25.00 C, humidity 50.55 %) in
# the service data of 0xFCD2, which blectl decodes, or the same 11 bytes under 0xFCD3, which
# no format blectl knows reads (both UUIDs named after a SIG member). Default: 2 bytes of
# manufacturer data of company 0xFFFF.
BENCH_BTHOME = bytes.fromhex("40" "0001" "015f" "02c409" "03bf13")
BENCH_DATA = ("", "bthome", "opaque")


def bench_devices(n, churn, data=""):
    out = []
    for i in range(n):
        addr = "D0:00:%02X:%02X:%02X:%02X" % ((i >> 24) & 0x3F, (i >> 16) & 0xFF, (i >> 8) & 0xFF, i & 0xFF)
        if data == "bthome":
            adv = {"service_data": {u16(0xFCD2): BENCH_BTHOME}}
        elif data == "opaque":
            adv = {"service_data": {u16(0xFCD3): BENCH_BTHOME}}
        else:
            adv = {"manufacturer_data": {0xFFFF: bytes([i & 0xFF, (i >> 8) & 0xFF])}}
        out.append(DeviceSpec(addr, "blesim Bench %04d" % i, "random", rssi=-60 - (i % 30),
                              connectable=False, group="bench", churn=churn, **adv))
    return out
