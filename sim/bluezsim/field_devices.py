"""Devices met in the field that the default world lacks, each advertising only with its own
switch (so that the default world's scans stay what the tests count): a device its user
renamed (fault aliased_device), one with a writable characteristic inside a service
bluetoothd's own plugins claim (fault claimed_write_device), and an environmental sensor
whose characteristics carry the GATT Specification Supplement's formats (fault sensor_device)."""

from .world import CharSpec, DeviceSpec, ServiceSpec, battery_svc, gatt_svc, u16

ALIASED_ADDRESS = "C0:FF:EE:00:00:0C"
CLAIMED_WRITE_ADDRESS = "C0:FF:EE:00:00:0D"
# Inside the Battery Service (0x180F): a vendor's "low-battery threshold" setting.
CLAIMED_SETTING = "5a1e0201-6c2d-4b8e-9f3a-0c1d2e3f4a5b"
SENSOR_ADDRESS = "C0:FF:EE:00:00:0E"
# A vendor's temperature characteristic described by a Presentation Format descriptor (0x2904).
SENSOR_PRESENTED = "5e050001-6c2d-4b8e-9f3a-0c1d2e3f4a5b"


def aliased_devices():
    """A sensor that advertises the name "BLE-Probe" and that its user named "Kitchen"
    (Device1.Alias "Kitchen", Name "BLE-Probe"), as bluetoothctl and desktops show it."""
    return [DeviceSpec(ALIASED_ADDRESS, "BLE-Probe", alias="Kitchen", rssi=-62, uuids=[u16(0x180F)], group="aliased",
                       services=[gatt_svc(), battery_svc(71)])]


def claimed_write_devices():
    """A device whose Battery Service (0x180F, claimed by bluetoothd's battery plugin) holds,
    besides Battery Level, a writable vendor characteristic (read, write,
    write-without-response; value 0x14). bluetoothd 5.80+ refuses writes to it
    (claimed.py); 5.66 passes them on."""
    battery = battery_svc(64)
    battery = ServiceSpec(battery.uuid, battery.chars + [
        CharSpec(CLAIMED_SETTING, ["read", "write", "write-without-response"], b"\x14")])
    return [DeviceSpec(CLAIMED_WRITE_ADDRESS, "blesim Claimed", rssi=-60, uuids=[u16(0x180F)], group="claimed",
                       services=[gatt_svc(), battery])]


def sensor_devices():
    """An environmental sensor: Environmental Sensing (0x181A) with Temperature 0x2A6E
    (sint16, 0.01 degree Celsius) = 21.50 and Humidity 0x2A6F (uint16, 0.01 %) = 45.00, both
    read and notify; with notify_every_ms, Temperature notifies 21.50, 21.51, -5.25 and
    0x8000 ("value is not known") in turn. A vendor characteristic (read) = 0x0866 carries a
    Presentation Format descriptor (0x2904: sint16, exponent -2, degree Celsius 0x272F,
    namespace 1 Bluetooth SIG, description 0)."""
    temperature = CharSpec(u16(0x2A6E), ["read", "notify"], bytes.fromhex("6608"),
                           notify_values=[bytes.fromhex(h) for h in ("6608", "6708", "f3fd", "0080")])
    humidity = CharSpec(u16(0x2A6F), ["read", "notify"], bytes.fromhex("9411"))
    presented = CharSpec(SENSOR_PRESENTED, ["read"], bytes.fromhex("6608"),
                         descriptors=[(u16(0x2904), bytes.fromhex("0efe2f27010000"))])
    return [DeviceSpec(SENSOR_ADDRESS, "blesim Sensor", rssi=-59, uuids=[u16(0x181A)], group="sensor",
                       services=[gatt_svc(), ServiceSpec(u16(0x181A), [temperature, humidity, presented])])]
