"""The attribute handles of a device's GATT database and the object paths that follow from
them, as BlueZ numbers its objects. Pure (no D-Bus): sim/impostor uses it too."""


FIRST_HANDLE = 0x000A


def has_ccc(char_spec):
    return "notify" in char_spec.flags or "indicate" in char_spec.flags


def layout(services, first=None):
    """The attribute handles of a device's GATT database, as BlueZ numbers its objects:
    [(service handle, ServiceSpec, [(char handle, CharSpec)])]. A characteristic takes its
    declaration and value handles, plus one for the CCC descriptor when it can notify and
    one for each other descriptor.
    Pure: the object paths follow from it (see object_paths), for sim/impostor too."""
    out, h = [], FIRST_HANDLE if first is None else first
    for s in services:
        sh, h = h, h + 1
        chars = []
        for cs in s.chars:
            chars.append((h, cs))
            h += (3 if has_ccc(cs) else 2) + len(cs.descriptors)
        out.append((sh, s, chars))
        h += 1
    return out


def service_path(device_path, handle):
    return "%s/service%04x" % (device_path, handle)


def char_path(service_path_, handle):
    return "%s/char%04x" % (service_path_, handle)


def characteristic_paths(device_path, services):
    """{(service uuid, characteristic uuid): object path} of a device's characteristics."""
    out = {}
    for sh, s, chars in layout(services):
        sp = service_path(device_path, sh)
        for h, cs in chars:
            out[(s.uuid, cs.uuid)] = char_path(sp, h)
    return out
