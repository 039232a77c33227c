"""What the control interface makes a device in the tree do (mixed into core.Sim): a burst
of notifications, a change of its GATT database (Service Changed), its link dropping."""

from .call import DBusError
from . import world


class DeviceActions:
    """Expects of the Sim: devices (address -> Device)."""

    # ------------------------------------------------------------ control actions on a device
    def notify_burst(self, address, uuid, count):
        """Control: count distinct notifications on a notifying characteristic, back to back."""
        dev = self.devices.get(address.upper())
        if dev is None:
            raise DBusError("org.blectl.Simulator.Error.InvalidArguments", f"no device {address} in the tree")
        want = world.norm_uuid(uuid)
        for ch in dev.chars():
            if ch.spec.uuid == want:
                if not ch.burst(int(count)):
                    raise DBusError("org.blectl.Simulator.Error.Failed", f"{ch.path} is not notifying")
                return
        raise DBusError("org.blectl.Simulator.Error.InvalidArguments", f"no characteristic {uuid} on {address}")

    def service_changed(self, address, uuid):
        """Control: the device changes its GATT database: the service `uuid` is removed and
        added again at new handles (see GattTree.service_changed)."""
        dev = self.devices.get(address.upper())
        if dev is None:
            raise DBusError("org.blectl.Simulator.Error.InvalidArguments", f"no device {address} in the tree")
        index = dev.gatt.service_uuid_index(world.norm_uuid(uuid))
        if index is None:
            raise DBusError("org.blectl.Simulator.Error.InvalidArguments", f"no service {uuid} on {address}")
        if not dev.connected or not dev.gatt_exported:
            raise DBusError("org.blectl.Simulator.Error.Failed", f"{address} is not connected with its services resolved")
        dev.gatt.service_changed(index)

    def drop_link(self, address, remove=False):
        """Control: the device's link drops (see Device.drop_link)."""
        dev = self.devices.get(address.upper())
        if dev is None:
            raise DBusError("org.blectl.Simulator.Error.InvalidArguments", f"no device {address} in the tree")
        if not dev.drop_link(remove):
            raise DBusError("org.blectl.Simulator.Error.Failed", f"{address} is not connected")
