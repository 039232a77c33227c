"""Faults at run time (mixed into core.Sim): a fault set while running takes effect at once
(a held call released, the adapter powered off or removed, tickers restarted, ...), and the
faults that act on an incoming call before it is handled (interception)."""

from .faults import FAULTS
from .ifaces import ERR


class RuntimeFaults:
    """Expects of the Sim: faults, bus, adapter, devices, discovery, start_discovery_busy_left,
    and its adapter, device and bluetoothd methods."""

    # ------------------------------------------------------------ faults at run time
    def set_fault(self, name, value):
        if name not in FAULTS:
            raise KeyError(name)
        old = self.faults.get(name)
        self.faults.set(name, value)
        if name == "start_discovery_in_progress":
            self.start_discovery_busy_left = value
        if not self.bus.alive:
            return
        if name == "start_discovery_held" and not value:
            self.discovery.release_held()
        elif name == "connect_held" and not value:
            for dev in list(self.devices.values()):
                dev.release_held_connect()
        elif name == "le_create_held" and not value:
            for dev in list(self.devices.values()):
                dev.release_held_creation()
        elif name == "pair_held" and not value:
            for dev in list(self.devices.values()):
                dev.release_held_pair()
        elif name == "disconnect_held" and not value:
            for dev in list(self.devices.values()):
                dev.release_held_disconnect()
        elif name == "start_notify_held" and not value:
            for dev in list(self.devices.values()):
                for ch in dev.chars():
                    ch.release_held()
        elif name == "adapter_powered_off" and self.adapter is not None and old != value:
            self.adapter.set_powered(not value)
        elif name == "adapter_rfkill_blocked" and self.adapter is not None and old != value:
            self.adapter.set_powered(False)
        elif name == "no_adapter" and old != value:
            if value:
                self.remove_adapter()
            else:
                self.create_adapter()
        elif name == "cached_devices" and value and self.adapter is not None:
            self.add_cached_devices()
        elif name == "bonded_devices" and value and self.adapter is not None:
            self.add_bonded_devices()
        elif name == "second_adapter" and old != value:
            if value:
                self.create_second_adapter()
            else:
                self.remove_second_adapter()
        elif name == "dual_mode_device" and value and self.adapter is not None:
            self.add_dual_device()
        elif name == "preconnected" and value and self.adapter is not None:
            self.preconnect(value)
        elif name == "att_mtu" and old != value:
            for dev in self.devices.values():
                for ch in dev.chars():
                    ch.set(MTU=value)
        elif name in ("notify_every_ms", "notify_every_char", "notify_rate_hz", "notify_rate_total"):
            for dev in self.devices.values():
                dev.gatt.restart_tickers()

    # ------------------------------------------------------------ interception
    def _intercept(self, call):
        if self.faults.get("access_denied"):
            call.error("org.freedesktop.DBus.Error.AccessDenied",
                       'Rejected send message, 1 matched rules; type="method_call", sender="%s" '
                       '(uid=1000 pid=0 comm="") interface="%s" member="%s" error name="(unset)" '
                       'requested_reply="0" destination="org.bluez" (uid=0 pid=0 comm="/usr/libexec/bluetooth/bluetoothd ")'
                       % (call.sender, call.interface, call.member))
            return True
        if self.faults.get("get_managed_objects_held") and call.member == "GetManagedObjects":
            return True     # left unanswered
        target = self.faults.get("bluez_exit_on")
        if target and call.member == target:
            self.exit_bluez()
            return True
        target = self.faults.get("bluez_blink_on")
        if target and call.member == target:
            self.blink_bluez(hold=[call.sender])     # then the call is handled as usual
        target = self.faults.get("bluez_stop_on")
        if target and call.member == target:
            self.stop_bluez()
            return True
        target = self.faults.get("power_off_on")
        if target and call.member == target and self.adapter is not None:
            self.adapter.set_powered(False)
            call.error(ERR + "Failed", "Operation failed")
            return True
        target = self.faults.get("rfkill_block_on")
        if target and call.member == target and self.adapter is not None:
            self.adapter.set_powered(False, blocked=True)
            call.error(ERR + "Failed", "Operation failed")
            return True
        target = self.faults.get("remove_adapter_on")
        if target and call.member == target and self.adapter is not None:
            for dev in list(self.devices.values()):
                dev.link_lost(reason="power")   # links dropped, calls in flight failed
            call.error(ERR + "Failed", "Operation failed")
            self.remove_adapter()
            return True
        return False
