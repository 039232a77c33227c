"""bluetoothd itself going away or blinking (mixed into core.Sim): stopping as on SIGTERM
(links dropped first), crashing (off the bus, nothing answered), and releasing and taking
org.bluez back at once with every object announced again."""

from gi.repository import GLib
import dbus
import dbus.lowlevel

from .call import DBusError


class BluetoothdLife:
    """Expects of the Sim: bus, devices, discovery, agents, blinks (a counter), later(),
    cancel_all(), hold_clients()."""

    # ------------------------------------------------------------ bluetoothd
    def stop_bluez(self):
        """Like bluetoothd stopping on SIGTERM: links dropped first, then off the bus."""
        for dev in list(self.devices.values()):
            dev.link_lost(reason="local")
        self.advertising.release_all()     # adapter_remove -> btd_adv_manager_destroy
        self.later(100, self.exit_bluez)

    def exit_bluez(self):
        """Like bluetoothd crashing: the org.bluez connection goes away, nothing is answered."""
        self.cancel_all()
        self.bus.alive = False      # nothing below is signalled any more
        self.discovery.clear()
        self.agents.forget()
        self.advertising.forget()
        self.gatt_server.forget()
        self.central.clear()
        for dev in self.devices.values():
            dev.forget_calls()
            dev.drop_link_silently()    # the kernel drops links nobody uses any more
        GLib.idle_add(lambda: (self.bus.detach(), False)[1], priority=GLib.PRIORITY_HIGH)

    def blink_bluez(self, hold=()):
        """bluetoothd "blinks": org.bluez is released and requested again at once (same
        connection, so the same unique name), then InterfacesAdded for every object, parents
        first, as a bluetoothd registering its adapter sends them; all messages are sent back
        to back, so a client reads NameOwnerChanged(old -> ""), NameOwnerChanged("" -> new)
        and the InterfacesAdded in one batch. Links, sessions and calls in flight are kept."""
        if not self.bus.alive:
            raise DBusError("org.blectl.Simulator.Error.Failed", "bluetoothd is not running")
        conn = self.bus.conn

        def driver(member, sig, *args):
            m = dbus.lowlevel.MethodCallMessage("org.freedesktop.DBus", "/org/freedesktop/DBus",
                                                "org.freedesktop.DBus", member)
            m.append(*args, signature=sig)
            return m

        paths = sorted(self.bus.objects, key=lambda p: (p.count("/"), p))
        msgs = [driver("ReleaseName", "s", "org.bluez"),
                driver("RequestName", "su", "org.bluez", dbus.UInt32(4))]      # DO_NOT_QUEUE
        msgs += [self.bus.added_message(self.bus.objects[p]) for p in paths]
        resume = self.hold_clients(hold)
        self.bus.send_back_to_back(msgs)
        resume()

        def check():
            if self.bus.alive and self.bus.conn is conn and conn.get_name_owner("org.bluez") != conn.get_unique_name():
                import sys
                print("bluez-sim: blink: org.bluez was not taken back", file=sys.stderr)
            return False
        GLib.idle_add(check)
        self.blinks += 1
