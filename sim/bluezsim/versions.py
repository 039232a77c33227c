"""The bluetoothd version the simulator models (bluez-sim --bluez, blectl-sim start --bluez).

Where BlueZ's D-Bus surface differs between the versions users run, the simulator asks
`sim.bluez_at_least("5.80")` and behaves as that version does (checked against real
bluetoothd in realbluez/). The default is the version the simulator was first written
against.
"""

SUPPORTED = ("5.66", "5.82", "5.87")
DEFAULT = "5.66"


class VersionError(ValueError):
    pass


def parse(text):
    """'5.82' -> (5, 82), for one of SUPPORTED."""
    text = (text or DEFAULT).strip()
    if text not in SUPPORTED:
        raise VersionError(f"unsupported BlueZ version '{text}' (supported: {', '.join(SUPPORTED)})")
    major, minor = text.split(".")
    return int(major), int(minor)


def as_text(version):
    return f"{version[0]}.{version[1]}"
