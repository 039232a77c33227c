"""The shape of bluetoothd's object tree, for the simulator's per-version profiles:
`acceptance.py --dump-tree FILE` (realbluez/trees/<version>.json).

With "blesim Real" connected by another client (Device1.Connect, as bluetoothctl would)
and its services resolved (and Battery1 there), for each kind of object: the interfaces
GetManagedObjects reports and the sorted property names of each, as bluetoothd exports
them with its default options (the run's bluetoothd arguments are recorded). Also, from
introspection, each interface's methods and signals (Device1's `Disconnected` signal
among them), Adapter1's Modalias and the version it encodes, and the image's packages.

Format:
  {"bluetoothd": {"version": "5.82", "modalias": "usb:v1D6Bp0246d0552",
                  "arguments": "", "packages": [...], "device_disconnected_signal": bool},
   "adapter": {INTERFACE: [PROPERTY...]}, "device": {...}, "service": {...},
   "characteristic": {...}, "descriptor": {...},
   "gatt": [{"uuid", "primary", "characteristics": [{"uuid", "flags", "descriptors"}]}],
   "introspection": {KIND: {INTERFACE: {"methods": [...], "signals": [...]}}}}
A kind's entry is the union over its objects (the device is blesim Real alone); every
object of a kind is listed under "objects" with its own interfaces when they differ from
the union.
"""
import json
import os
import xml.etree.ElementTree as ET

import dbus

import rig
from rig import PERIPHERAL, adapter_props, bus, device_path, managed_objects
from rig_gatt import HeldLink

KINDS = {
    "org.bluez.Adapter1": "adapter",
    "org.bluez.Device1": "device",
    "org.bluez.GattService1": "service",
    "org.bluez.GattCharacteristic1": "characteristic",
    "org.bluez.GattDescriptor1": "descriptor",
}


def bluez_version(modalias=None):
    """bluetoothd's version from Adapter1.Modalias: usb:v1D6Bp0246dMMmm, the device
    release MM.mm with each byte the number (0x0542 = 5.66, 0x0552 = 5.82, 0x0557 = 5.87);
    -> (major, minor)."""
    modalias = modalias or str(adapter_props()["Modalias"])
    release = int(modalias.rsplit("d", 1)[1][:4], 16)
    return release >> 8, release & 0xFF


def kind_of(path, interfaces):
    for iface, kind in KINDS.items():
        if iface in interfaces:
            return kind
    return "other:" + str(path)


def introspect(path):
    b = bus()
    try:
        xml = dbus.Interface(b.get_object("org.bluez", path), "org.freedesktop.DBus.Introspectable").Introspect()
    finally:
        b.close()
    out = {}
    for i in ET.fromstring(str(xml)).findall("interface"):
        out[i.get("name")] = {"methods": sorted(m.get("name") for m in i.findall("method")),
                              "signals": sorted(s.get("name") for s in i.findall("signal")),
                              "properties": sorted(p.get("name") for p in i.findall("property"))}
    return out


def gatt_of(objects, device):
    """blesim Real's exported GATT tree: services by UUID with their characteristics'
    UUIDs, Flags and descriptors (what bluetoothd hides or changes per version)."""
    def under(parent, iface):
        return sorted((str(p), objects[p][iface]) for p in objects
                      if iface in objects[p] and str(p).startswith(parent + "/") and "/" not in str(p)[len(parent) + 1:])
    return [{"uuid": str(sp["UUID"]), "primary": bool(sp["Primary"]),
             "characteristics": [{"uuid": str(cp["UUID"]), "flags": [str(f) for f in cp["Flags"]],
                                  "descriptors": [str(dp["UUID"]) for _, dp in under(c, "org.bluez.GattDescriptor1")]}
                                 for c, cp in under(s, "org.bluez.GattCharacteristic1")]}
            for s, sp in under(device, "org.bluez.GattService1")]


def shape(packages=None):
    """The dump, taken with blesim Real connected and resolved (rig_gatt.HeldLink)."""
    with HeldLink():
        objects = managed_objects()
        device = device_path(PERIPHERAL)
        tree, samples, per_object = {}, {}, {}
        for path in sorted(objects):
            path = str(path)
            if path.startswith("/org/bluez/hci0/dev_") and not path.startswith(device):
                continue  # the fillers: the device kind is blesim Real's
            ifs = objects[dbus.ObjectPath(path)]
            kind = kind_of(path, ifs)
            props = {str(i): sorted(str(p) for p in ifs[i]) for i in ifs}
            per_object[path] = props
            merged = tree.setdefault(kind, {})
            for i, names in props.items():
                merged[i] = sorted(set(merged.get(i, [])) | set(names))
            samples.setdefault(kind, path)
        gatt = gatt_of(objects, device)
        links = rig.kernel_connections() if rig.args and rig.args.ctl else None
        intro = {kind: introspect(path) for kind, path in samples.items()}
        for extra in ("/", "/org/bluez"):
            intro["root" if extra == "/" else "bluez"] = introspect(extra)
    modalias = str(adapter_props()["Modalias"])
    major, minor = bluez_version(modalias)
    device_intro = intro.get("device", {}).get("org.bluez.Device1", {})
    dump = {
        "bluetoothd": {
            "version": f"{major}.{minor}",
            "modalias": modalias,
            "arguments": rig.bluetoothd_args or "",
            "packages": packages or [],
            "device_disconnected_signal": "Disconnected" in device_intro.get("signals", []),
        },
        **{k: tree[k] for k in ("adapter", "device", "service", "characteristic", "descriptor") if k in tree},
        "gatt": gatt,
        "rig": {"btmgmt_con_with_a_link": links},
        "introspection": intro,
        "objects": {p: props for p, props in per_object.items()
                    if props != tree[kind_of(p, objects[dbus.ObjectPath(p)])]},
    }
    return dump


def write(path, packages=None):
    dump = shape(packages)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        json.dump(dump, f, indent=1, sort_keys=False)
        f.write("\n")
    return dump
