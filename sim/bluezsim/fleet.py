"""The fleet (setting `fleet=N`): N connectable sensors with a Battery Service, Battery1 and a
Device Information Service, whose addresses and values follow from their number alone, so
that tests and benchmarks can compute them (sim/README.md, man/blectl-sim.1):

    device i, i = 1..N (N at most 65535)
    address   C0:FF:EE:F1:HH:LL    HH:LL = i as 16 bits, big-endian, upper-case hex
    name      "blesim Fleet NNNN"  i in four decimal digits at least
    battery   i % 101              0x2A19 and Battery1 Percentage
    firmware  "1.0.<i>"            0x2A26; manufacturer 0x2A29 "Blesim Fleet", model 0x2A24 "Fleet-1"
    RSSI      -50 - (i % 40)       dBm; UUIDs 180f, 180a; AdvertisingFlags 0x06; public address
"""

from functools import lru_cache

from .world import DeviceSpec, battery_svc, dis_svc, gatt_svc, u16

PREFIX = "C0:FF:EE:F1:"
MAX = 0xFFFF
MANUFACTURER = "Blesim Fleet"
MODEL = "Fleet-1"


def address(i):
    return PREFIX + "%02X:%02X" % (i >> 8, i & 0xFF)


def battery(i):
    return i % 101


def firmware(i):
    return "1.0.%d" % i


def index(addr):
    """The fleet number of an address of the scheme, else None."""
    if not addr.upper().startswith(PREFIX):
        return None
    try:
        hi, lo = addr[len(PREFIX):].split(":")
        i = int(hi, 16) << 8 | int(lo, 16)
    except ValueError:
        return None
    return i if 1 <= i <= MAX else None


def spec(i):
    level = battery(i)
    return DeviceSpec(address(i), "blesim Fleet %04d" % i, rssi=-50 - (i % 40), uuids=[u16(0x180F), u16(0x180A)],
                      services=[gatt_svc(), battery_svc(level), dis_svc(firmware(i), MANUFACTURER, MODEL)],
                      battery1=level, group="fleet")


@lru_cache(maxsize=4)
def devices(n):
    """Devices 1..n, in order (the specs are shared: nothing changes a spec)."""
    return tuple(spec(i) for i in range(1, min(n, MAX) + 1))
