"""org.bluez.GattManager1 on the adapter, as bluetoothd 5.66 implements it
(src/gatt-database.c manager_register_app, client_ready_cb, manager_unregister_app,
client_disconnect_cb): RegisterApplication reads the application with GetManagedObjects on
its root and answers once it is in the local database (gatt_app.py builds it);
UnregisterApplication; the application dropped when its client leaves the bus. 5.66 calls
no Release on a GATT application (only on GattProfile1 objects, profile_release). While an
application is registered, a PropertiesChanged of Value on its notifying characteristics is
a notification to the subscribed central (property_changed_cb). One idea: the registered
applications and their attributes."""

import dbus

from . import gatt_app
from .app_calls import OM, PROPS, unwatch
from .call import DBusError
from .ifaces import ERR


class App:
    def __init__(self, owner, path, call):
        self.owner, self.path, self.call = owner, path, call
        self.services, self.profiles = [], []
        self.watch = None

    def attrs(self):
        for s in self.services:
            for c in s.chars:
                yield c
            for d in s.descs:
                yield d


class GattServer:
    """Expects of the Sim: bus, app_calls, central (told of notifications and of
    attributes going away)."""

    def __init__(self, sim):
        self.sim = sim
        self.apps = []           # registered and registering, in order (database->apps)
        self.refused = []        # {"client", "path", "error", "reason"}

    def _find(self, owner, path):
        return next((a for a in self.apps if a.owner == owner and a.path == path), None)

    # ------------------------------------------------------------ methods
    def m_RegisterApplication(self, call, path, options):
        path = str(path)
        if self._find(call.sender, path) is not None:
            raise DBusError(ERR + "AlreadyExists", "Already Exists")
        app = App(call.sender, path, call)
        self.apps.append(app)
        # GDBusClient: GetManagedObjects on the application's root; its ready callback runs
        # on the reply, an error included (then no object was received).
        self.sim.app_calls.call(app.owner, path, OM, "GetManagedObjects", "", (),
                                lambda objects: self._ready(app, objects),
                                lambda *_: self._ready(app, {}), purpose="application")

    def m_UnregisterApplication(self, call, path):
        app = self._find(call.sender, str(path))
        if app is None:
            raise DBusError(ERR + "DoesNotExist", "Does Not Exist")
        self._remove(app)
        call.reply()

    # ------------------------------------------------------------ registration
    def _taken(self):
        ranges = [(a, b) for a, b, _ in gatt_app.CORE_RANGES]
        for app in self.apps:
            ranges += [(s.handle, s.end) for s in app.services]
        return ranges

    def _ready(self, app, objects):
        if app not in self.apps or app.call is None:
            return                            # unregistered, or its client gone
        call, app.call = app.call, None
        try:
            app.services, app.profiles = gatt_app.build(objects, self._taken())
        except gatt_app.Refused as e:
            self.apps.remove(app)
            self.refused.append({"client": app.owner, "path": app.path, "error": ERR + "Failed: " + e.text,
                                 "reason": e.reason})
            call.error(ERR + "Failed", e.text)
            return
        for path, iface, handle in gatt_app.written_back(app.services):
            self.sim.app_calls.call(app.owner, path, PROPS, "Set", "ssv",
                                    (iface, "Handle", dbus.UInt16(handle, variant_level=1)),
                                    lambda *_: None, lambda *_: None, purpose="application")
        app.watch = self.sim.app_calls.watch_properties(app.owner, app.path, lambda *a: self._changed(app, *a))
        call.reply()

    def _changed(self, app, path, iface, changed, invalidated):
        """property_changed_cb: only a notifying/indicating characteristic's Value counts."""
        if iface != gatt_app.CHRC or "Value" not in changed or app not in self.apps:
            return
        for c in app.attrs():
            if c.kind == "characteristic" and c.path == path and c.ccc_handle is not None:
                self.sim.central.value_changed(c, bytes(changed["Value"]))

    def _remove(self, app):
        """app_free: the services leave the database (requests in flight on them answered
        Request Not Supported, gatt-database.c cancel_pending_read/write), Release to each
        GattProfile1 object (profile_release); nothing to the services themselves."""
        unwatch(app.watch)
        app.watch = None
        if app in self.apps:
            self.apps.remove(app)
        self.sim.central.attributes_gone(list(app.attrs()))
        for path in app.profiles:
            self.sim.app_calls.send(app.owner, path, gatt_app.PROFILE, "Release", purpose="application")

    def client_left(self, owner):
        for app in [a for a in self.apps if a.owner == owner]:
            if app.call is not None:
                app.call.done = True
                app.call.record["outcome"] = "dropped"
                app.call = None
            self._remove(app)

    def forget(self):
        for app in self.apps:
            unwatch(app.watch)
        self.apps.clear()

    def clear(self):
        self.forget()
        self.refused.clear()

    # ------------------------------------------------------------ the central's view
    def find(self, target):
        """A characteristic or descriptor by its object path, handle (0x0015 or 21) or UUID
        (the first in handle order); None when there is none. Digits alone ("2901") name a
        handle when one has that number, else a 16-bit UUID."""
        attrs = sorted((a for app in self.apps if app.call is None for a in app.attrs()), key=lambda a: a.handle)
        text = target.strip()
        for a in attrs:
            if a.path == text:
                return a
        try:
            h = int(text, 0)
            if text.lower().startswith("0x") or text.isdigit():
                found = next((a for a in attrs if a.handle == h), None)
                if found is not None or text.lower().startswith("0x"):
                    return found
        except ValueError:
            pass
        from .adv_data import parse_uuid
        u = parse_uuid(text)
        return next((a for a in attrs if u is not None and a.uuid == u), None)

    def owner_of(self, attr):
        return next((app for app in self.apps if any(a is attr for a in app.attrs())), None)

    def state(self):
        return [{"client": a.owner, "path": a.path, "services": [s.describe() for s in a.services],
                 "profiles": list(a.profiles)} for a in self.apps if a.call is None]
