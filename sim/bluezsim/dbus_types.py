"""Python values and dbus-python values, by D-Bus signature: typed() for what is sent,
plain() for what is received, the checks of a value a client Sets."""

import dbus


def split_sig(sig):
    """Split a D-Bus signature into its complete types."""
    out, i = [], 0
    while i < len(sig):
        j = _end(sig, i)
        out.append(sig[i:j])
        i = j
    return out


def _end(sig, i):
    c = sig[i]
    if c == "a":
        return _end(sig, i + 1)
    if c in "({":
        close = ")" if c == "(" else "}"
        depth, j = 0, i
        while True:
            if sig[j] in "({":
                depth += 1
            elif sig[j] in ")}":
                depth -= 1
                if depth == 0:
                    return j + 1
            j += 1
    return i + 1


def variant_of(value):
    """Type a value placed in a 'v' slot: bytes -> ay, (sig, val) -> typed."""
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], str):
        return typed(value[0], value[1])
    if isinstance(value, (bytes, bytearray)):
        return dbus.Array([dbus.Byte(b) for b in value], signature="y")
    if isinstance(value, bool):
        return dbus.Boolean(value)
    if isinstance(value, int):
        return dbus.Int32(value)
    if isinstance(value, str):
        return dbus.String(value)
    return value


_SCALARS = {
    "b": dbus.Boolean, "y": dbus.Byte, "n": dbus.Int16, "q": dbus.UInt16,
    "i": dbus.Int32, "u": dbus.UInt32, "x": dbus.Int64, "t": dbus.UInt64,
    "d": dbus.Double, "s": dbus.String, "o": dbus.ObjectPath, "g": dbus.Signature,
}


def typed(sig, value):
    """Convert a Python value to dbus-python types following signature sig."""
    if sig in _SCALARS:
        return _SCALARS[sig](value)
    if sig == "v":
        return variant_of(value)
    if sig == "ay":
        return dbus.Array([dbus.Byte(b) for b in value], signature="y")
    if sig.startswith("a{"):
        ks, vs = split_sig(sig[2:-1])
        return dbus.Dictionary({typed(ks, k): typed(vs, v) for k, v in value.items()},
                               signature=ks + vs)
    if sig.startswith("a"):
        es = sig[1:]
        return dbus.Array([typed(es, e) for e in value], signature=es)
    if sig.startswith("("):
        parts = split_sig(sig[1:-1])
        return dbus.Struct([typed(s, v) for s, v in zip(parts, value)], signature=sig[1:-1])
    raise ValueError(f"unsupported signature {sig}")


def plain(value):
    """dbus-python value -> plain Python (for JSON and filters)."""
    if isinstance(value, dbus.Boolean):
        return bool(value)
    if isinstance(value, (dbus.ByteArray, bytes)):
        return bytes(value)
    if isinstance(value, (int,)):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, dict):
        return {plain(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def guess_sig(v):
    for sig, cls in _SCALARS.items():
        if type(v) is cls:
            return sig
    return getattr(v, "signature", None) and ("a" + str(v.signature)) or "?"


def value_matches(sig, v):
    if sig in _SCALARS:
        return type(v) is _SCALARS[sig]
    return True


def dbus_bytes(b):
    """bytes -> ay (a ReadValue answer)."""
    return dbus.Array([dbus.Byte(x) for x in b], signature="y")
