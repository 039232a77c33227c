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
    role: Optional[str] = None     # "vendor_cmd", "vendor_rsp", "battery_level", "echo_sink", "echo_source"


@dataclass
class ServiceSpec:
    uuid: str
    chars: list


@dataclass
class DeviceSpec:
    address: str
    name: Optional[str] = None
    address_type: str = "public"
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


def gap(name):
    return ServiceSpec(u16(0x1800), [CharSpec(u16(0x2A00), ["read"], name.encode()),
                                     CharSpec(u16(0x2A01), ["read"], b"\x00\x00")])


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
    return [DeviceSpec("C0:FF:EE:00:00:06", "blesim Echo", rssi=-58, uuids=[ECHO_SVC],
                       services=[gatt_svc(), echo_svc()], group="echo")]


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


def cached_devices():
    return [
        DeviceSpec("C0:FF:EE:00:00:A1", "blesim Stale", advertises=False, group="cached",
                   services=[gatt_svc()]),
        DeviceSpec("C0:FF:EE:00:00:A2", "blesim Stale Probe", advertises=False, group="cached",
                   uuids=[u16(0x180F)], services=[gatt_svc(), battery_svc(10)]),
    ]


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


def bench_devices(n, churn):
    out = []
    for i in range(n):
        addr = "D0:00:%02X:%02X:%02X:%02X" % ((i >> 24) & 0x3F, (i >> 16) & 0xFF, (i >> 8) & 0xFF, i & 0xFF)
        out.append(DeviceSpec(addr, "blesim Bench %04d" % i, "random", rssi=-60 - (i % 30),
                              manufacturer_data={0xFFFF: bytes([i & 0xFF, (i >> 8) & 0xFF])},
                              connectable=False, group="bench", churn=churn))
    return out
