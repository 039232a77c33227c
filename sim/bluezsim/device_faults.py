"""Faults of one device, set at run time (control DeviceFault, `blectl-sim device ADDRESS
fault KIND`), mixed into core.Sim. They belong to the address, not to the device object:
they hold while the device leaves the tree and comes back, until cleared or Reset."""

from .call import DBusError

BAD_ARGS = "org.blectl.Simulator.Error.InvalidArguments"

# kind -> what it does (the man page and sim/README.md say the same)
DEVICE_FAULTS = {
    "abort-once": "its next LE connection fails: Connect answers Failed 'le-connection-abort-by-remote' "
                  "after the connection latency (the link never up); the one after succeeds",
    "drop-once": "its next link drops (remote) as the services would resolve: Connect succeeds, "
                 "ServicesResolved never turns true, Connected turns false; the link after stays up",
    "needs-pairing": "its characteristics answer ReadValue and WriteValue NotPermitted 'Not paired' "
                     "until it is paired, and Battery1 is not added (the battery plugin's read fails too)",
    "absent": "it stops advertising: discovery no longer reports it, a Connect fails Failed "
              "'le-connection-abort-by-local' after connect_timeout_ms; set while it is in the tree "
              "(and not paired), its link drops and its object is removed, as bluetoothd drops a "
              "temporary device gone out of range",
    "silent": "it stops advertising but stays in the tree (no RSSI or data changes, as a device "
              "out of range before bluetoothd's TemporaryTimeout removes it); cleared, it advertises again",
    "vanish-after-connect": "after each Connect reply its object is removed from the tree "
                            "(InterfacesRemoved, no Connected change); discovered again, it comes back",
}


class DeviceFaults:
    """Expects of the Sim: devices, device_faults (address -> set of kinds), find_spec()."""

    def _known_address(self, address):
        address = str(address).upper()
        if self.find_spec(address) is None:
            raise DBusError(BAD_ARGS, f"no device {address} in this world")
        return address

    def set_device_fault(self, address, kind, on=True):
        address = self._known_address(address)
        if kind not in DEVICE_FAULTS:
            raise DBusError(BAD_ARGS, f"unknown device fault '{kind}' (known: {', '.join(DEVICE_FAULTS)})")
        kinds = self.device_faults.setdefault(address, set())
        if not on:
            kinds.discard(kind)
            return
        kinds.add(kind)
        dev = self.devices.get(address)
        if kind == "absent" and dev is not None and not dev.paired and dev.connect_call is None:
            if dev.connected:
                dev.link_lost(reason="remote")
            dev.abort_everything()
            self.remove_device(dev)

    def clear_device_faults(self, address=None):
        if address:
            self.device_faults.pop(self._known_address(address), None)
        else:
            self.device_faults.clear()

    def has_device_fault(self, address, kind):
        return kind in self.device_faults.get(address, ())

    def take_device_fault(self, address, kind):
        """A one-shot fault: True once, then cleared."""
        if self.has_device_fault(address, kind):
            self.device_faults[address].discard(kind)
            return True
        return False

    def device_state(self, address):
        """What `blectl-sim device ADDRESS` prints."""
        address = self._known_address(address)
        dev = self.devices.get(address)
        rec = self.le_connector.records.get(dev) if dev is not None else None
        return {
            "address": address,
            "in_tree": dev is not None,
            "advertising": self.is_advertising(address),
            "connecting": "no" if rec is None else ("creating" if rec["start"] is not None else "queued"),
            "connected": bool(dev and dev.connected),
            "services_resolved": bool(dev and dev.services_resolved),
            "paired": bool(dev and dev.paired),
            "faults": sorted(self.device_faults.get(address, ())),
        }
