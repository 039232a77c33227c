"""The Introspect XML of an object path: its interfaces (methods with their arguments,
properties with their access), the standard ones, and its child nodes."""

from .dbus_types import split_sig


def introspection_xml(objects, iface_table, path):
    obj = objects.get(path)
    parts = ['<!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"\n'
             '"http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">\n<node>']
    parts.append('<interface name="org.freedesktop.DBus.Introspectable">'
                 '<method name="Introspect"><arg name="xml" type="s" direction="out"/></method></interface>')
    if path == "/":
        parts.append('<interface name="org.freedesktop.DBus.ObjectManager">'
                     '<method name="GetManagedObjects"><arg name="objects" type="a{oa{sa{sv}}}" direction="out"/></method>'
                     '<signal name="InterfacesAdded"><arg name="object" type="o"/><arg name="interfaces" type="a{sa{sv}}"/></signal>'
                     '<signal name="InterfacesRemoved"><arg name="object" type="o"/><arg name="interfaces" type="as"/></signal>'
                     '</interface>')
    if obj is not None:
        for iname, table in obj.ifaces.items():
            parts.append(f'<interface name="{iname}">')
            spec = iface_table.get(iname, {})
            for m, (i, o) in spec.get("methods", {}).items():
                parts.append(f'<method name="{m}">')
                for n, s in enumerate(split_sig(i)):
                    parts.append(f'<arg name="arg{n}" type="{s}" direction="in"/>')
                for n, s in enumerate(split_sig(o)):
                    parts.append(f'<arg name="ret{n}" type="{s}" direction="out"/>')
                parts.append('</method>')
            writable = obj.writable.get(iname, {})
            for pname, (psig, _) in table.items():
                access = "readwrite" if pname in writable else "read"
                parts.append(f'<property name="{pname}" type="{psig}" access="{access}"/>')
            parts.append('</interface>')
        parts.append('<interface name="org.freedesktop.DBus.Properties">'
                     '<method name="Get"><arg name="interface" type="s" direction="in"/><arg name="name" type="s" direction="in"/><arg name="value" type="v" direction="out"/></method>'
                     '<method name="Set"><arg name="interface" type="s" direction="in"/><arg name="name" type="s" direction="in"/><arg name="value" type="v" direction="in"/></method>'
                     '<method name="GetAll"><arg name="interface" type="s" direction="in"/><arg name="properties" type="a{sv}" direction="out"/></method>'
                     '<signal name="PropertiesChanged"><arg name="interface" type="s"/><arg name="changed_properties" type="a{sv}"/><arg name="invalidated_properties" type="as"/></signal>'
                     '</interface>')
    prefix = path.rstrip("/") + "/"
    kids = sorted({p[len(prefix):].split("/")[0] for p in objects if p.startswith(prefix)})
    for k in kids:
        parts.append(f'<node name="{k}"/>')
    parts.append("</node>")
    return "".join(parts)
