"""A method call received on org.bluez and its answer, now or later (reply, error); the
error a handler raises to answer with a D-Bus error."""

import time

import dbus.lowlevel


class DBusError(Exception):
    def __init__(self, name, text):
        super().__init__(f"{name}: {text}")
        self.name = name
        self.text = text


class Call:
    """An incoming method call; reply() or error() answer it once, now or later."""

    def __init__(self, bus, msg, record):
        self.bus = bus
        self.msg = msg
        self.record = record
        self.sender = msg.get_sender()
        self.member = msg.get_member()
        self.interface = msg.get_interface()
        self.path = msg.get_path()
        self.done = False
        self.generation = bus.generation

    def reply(self, sig="", *values):
        if self.done:
            return
        self.done = True
        self.record["outcome"] = "reply"
        self.record["answered_at"] = time.monotonic()
        if not self.bus.alive or self.generation != self.bus.generation:
            return
        if self.msg.get_no_reply():
            return
        r = dbus.lowlevel.MethodReturnMessage(self.msg)
        if sig:
            r.append(*values, signature=sig)
        self.bus.conn.send_message(r)

    def error(self, name, text):
        if self.done:
            return
        self.done = True
        self.record["outcome"] = "error:" + name
        self.record["answered_at"] = time.monotonic()
        if not self.bus.alive or self.generation != self.bus.generation:
            return
        if self.msg.get_no_reply():
            return
        self.bus.conn.send_message(dbus.lowlevel.ErrorMessage(self.msg, name, text))

    def fail(self, exc):
        self.error(exc.name, exc.text)
