"""Pairing: org.bluez.AgentManager1 (agents per client, the default-agent queue) and
Device1.Pair / CancelPairing driving the caller's org.bluez.Agent1, as BlueZ 5.66 does
(src/agent.c, src/device.c pair_device, device_confirm_passkey, new_authentication_return).

One idea: who answers the pairing questions, and how a pairing ends."""

import dbus
import dbus.lowlevel

from .call import DBusError
from .ifaces import ERR

AGENT_IFACE = "org.bluez.Agent1"
CAPABILITIES = ("DisplayOnly", "DisplayYesNo", "KeyboardOnly", "NoInputNoOutput", "KeyboardDisplay")
AGENT_TIMEOUT_S = 60          # src/agent.c REQUEST_TIMEOUT
START_MS = 50                 # from the link being up to the SMP exchange
EXCHANGE_MS = 100             # the SMP exchange after the last answer
INVALID_PASSKEY = 0xFFFFFFFF  # what bluetoothd sends the kernel when the agent failed (passkey_cb)


def capability_of(text):
    """RegisterAgent's capability string -> the IO capability ("" is KeyboardDisplay), or None."""
    if text == "":
        return "KeyboardDisplay"
    return text if text in CAPABILITIES else None


def pairing_method(host_io, device_io):
    """LE legacy pairing's choice (Core spec Vol 3 Part H 2.3.5.1), for the cases the world
    has: the host types the passkey the device displays when the device can display and
    the host has a keyboard; anything else is Just Works."""
    device_displays = device_io in ("DisplayOnly", "DisplayYesNo", "KeyboardDisplay")
    host_types = host_io in ("KeyboardOnly", "KeyboardDisplay")
    return "passkey" if device_displays and host_types else "just_works"


def auth_error(kind):
    """src/device.c new_authentication_return: the error a failed bonding answers Pair with."""
    name, text = {
        "failed": ("AuthenticationFailed", "Authentication Failed"),
        "canceled": ("AuthenticationCanceled", "Authentication Canceled"),
        "rejected": ("AuthenticationRejected", "Authentication Rejected"),
        "connect": ("ConnectionAttemptFailed", "Page Timeout"),
    }[kind]
    return DBusError(ERR + name, text)


class Agent:
    def __init__(self, client, path, capability):
        self.client = client
        self.path = path
        self.capability = capability


class Agents:
    """AgentManager1 on /org/bluez: one agent per client (unique name), dropped when the
    client leaves the bus; a queue of default agents whose head answers pairings started by
    clients without an agent of their own. As in src/agent.c agent_create, an agent
    registered while there is no default agent becomes the default."""

    def __init__(self, sim):
        self.sim = sim
        self.by_client = {}       # unique name -> Agent
        self.defaults = []        # the default-agent queue, head first
        self.requests = []        # log of the calls made to agents (state "agent_calls")

    def clear(self):
        self.forget()
        self.requests.clear()

    def forget(self):
        """bluetoothd is gone: no agent is registered any more (the log is kept)."""
        self.by_client.clear()
        self.defaults.clear()

    def register(self, call, path, capability):
        if call.sender in self.by_client:
            raise DBusError(ERR + "AlreadyExists", "Already Exists")
        cap = capability_of(str(capability))
        if cap is None:
            raise DBusError(ERR + "InvalidArguments", "Invalid arguments in method call")
        agent = Agent(call.sender, str(path), cap)
        self.by_client[call.sender] = agent
        self.defaults.append(agent)      # head only when the queue was empty
        call.reply()

    def _own(self, call, path):
        agent = self.by_client.get(call.sender)
        if agent is None or agent.path != str(path):
            raise DBusError(ERR + "DoesNotExist", "Does Not Exist")
        return agent

    def unregister(self, call, path):
        agent = self._own(call, path)
        self._drop(agent)
        call.reply()

    def request_default(self, call, path):
        agent = self._own(call, path)
        self.defaults.remove(agent)
        self.defaults.insert(0, agent)
        call.reply()

    def _drop(self, agent):
        self.by_client.pop(agent.client, None)
        if agent in self.defaults:
            self.defaults.remove(agent)

    def client_left(self, name):
        agent = self.by_client.get(name)
        if agent is not None:
            self._drop(agent)

    def for_pairing(self, sender):
        """src/agent.c agent_get: the caller's own agent, else the default one, else None."""
        return self.by_client.get(sender) or (self.defaults[0] if self.defaults else None)

    def ask(self, agent, member, sig, args, on_reply, on_error):
        """Calls a method of an agent (reply handlers run later on the main loop); the call
        is logged with its outcome. Returns the log entry."""
        entry = {"member": member, "agent": agent.client, "path": agent.path,
                 "device": str(args[0]) if args else None, "outcome": "pending"}
        self.requests.append(entry)
        bus = self.sim.bus
        if not bus.alive:
            return entry

        def ok(*values):
            entry["outcome"] = "reply" + ("" if not values else ":" + ",".join(str(v) for v in values))
            on_reply(*values)

        def err(e):
            entry["outcome"] = "error:" + (e.get_dbus_name() or "?")
            on_error(e)
        bus.conn.call_async(agent.client, agent.path, AGENT_IFACE, member, sig, args, ok, err,
                            timeout=AGENT_TIMEOUT_S)
        return entry

    def cancel(self, agent, device_path):
        """Agent1.Cancel (src/agent.c send_cancel_request): no reply expected."""
        entry = {"member": "Cancel", "agent": agent.client, "path": agent.path, "device": device_path,
                 "outcome": "sent"}
        self.requests.append(entry)
        if self.sim.bus.alive:
            m = dbus.lowlevel.MethodCallMessage(agent.client, agent.path, AGENT_IFACE, "Cancel")
            m.set_no_reply(True)
            self.sim.bus.conn.send_message(m)

    def state(self):
        head = self.defaults[0] if self.defaults else None
        return [{"client": a.client, "path": a.path, "capability": a.capability, "default": a is head}
                for a in self.by_client.values()]


class _ConnectStep:
    """Stands in for a Connect call while Pair brings the link up (Device.m_Connect and its
    faults drive it): reply() means the link is up, error() that it failed."""
    member = "Pair"

    def __init__(self, pairing):
        self.pairing = pairing
        self.sender = pairing.call.sender
        self.done = False

    def reply(self, *_):
        if not self.done:
            self.done = True
            self.pairing.link_up()

    def error(self, name, text):
        if not self.done:
            self.done = True
            self.pairing.connect_failed(text)


class Pairing:
    """One Pair call in progress on a device (BlueZ's device->bonding). Stages: connecting
    (Pair brings the link up first, as 5.66 does for LE), agent (waiting for the agent's
    answer), exchange (the SMP exchange), resolving (paired; Pair is answered once the
    services are resolved, src/device.c device_bonding_complete)."""

    def __init__(self, dev, call):
        self.dev = dev
        self.sim = dev.sim
        self.call = call
        self.agent = self.sim.agents.for_pairing(call.sender)
        self.host_io = self.agent.capability if self.agent is not None else "NoInputNoOutput"
        self.stage = "connecting"
        self.timers = []
        self.agent_request = None     # the log entry of the agent call in flight
        self.connect_step = None

    # ------------------------------------------------------------ steps
    def start(self):
        dev = self.dev
        if dev.connected and not dev.disconnecting:
            self.link_up()
            return
        self.connect_step = _ConnectStep(self)
        try:
            dev.m_Connect(self.connect_step)
        except DBusError as e:
            self.connect_step.done = True
            self.finish(e)

    def link_up(self):
        self.connect_step = None
        self.stage = "exchange"
        self._later(START_MS, self._exchange)

    def connect_failed(self, text):
        # A Disconnect cancelling the connection cancels the bonding; any other failure is
        # BlueZ's att_connect_cb during a bonding: MGMT_STATUS_CONNECT_FAILED.
        self.connect_step = None
        self.finish(auth_error("canceled" if text == "br-connection-canceled" else "connect"))

    def _exchange(self):
        method = pairing_method(self.host_io, self.dev.spec.io_capability)
        if method == "just_works":
            # Pair-initiated Just Works is confirmed by bluetoothd itself: the agent is not
            # asked (src/device.c device_confirm_passkey, confirm_hint with device->bonding).
            self._complete_later(True)
            return
        if self.agent is None:
            # No agent to ask (new_auth fails): the kernel gets a negative reply.
            self._complete_later(False)
            return
        self.stage = "agent"

        def answered(passkey):
            if self.agent_request is None:
                return            # cancelled meanwhile
            self.agent_request = None
            self.stage = "exchange"
            self._complete_later(int(passkey) == self.sim.faults.get("pair_passkey"))

        def failed(_err):
            if self.agent_request is None:
                return
            self.agent_request = None
            self.stage = "exchange"
            self._complete_later(False)     # passkey_cb: INVALID_PASSKEY -> authentication failure
        self.agent_request = self.sim.agents.ask(self.agent, "RequestPasskey", "o",
                                                 (dbus.ObjectPath(self.dev.path),), answered, failed)

    def _complete_later(self, ok):
        self.stage = "exchange"
        if self.sim.faults.get("pair_never_completes"):
            return
        self._later(EXCHANGE_MS, self._complete, ok)

    def _complete(self, ok):
        if not ok:
            self.finish(auth_error("failed"))
            return
        dev = self.dev
        dev.paired = True
        dev.set(Bonded=True, Paired=True)
        self.stage = "resolving"
        if dev.services_resolved:
            self.finish(None)
        # else Device._resolved calls services_resolved()

    def services_resolved(self):
        if self.stage == "resolving":
            self.finish(None)

    # ------------------------------------------------------------ endings
    def cancel(self, kind="canceled"):
        """CancelPairing, the link going down, the device removed: the agent's question (if
        one is open) gets Cancel, Pair fails."""
        if self.agent_request is not None and self.agent is not None:
            self.agent_request = None
            self.sim.agents.cancel(self.agent, self.dev.path)
        if self.connect_step is not None:
            step, self.connect_step = self.connect_step, None
            step.done = True
            self.dev.abandon_connect()
        self.finish(auth_error(kind))

    def requester_left(self):
        """create_bond_req_exit: the caller left the bus; the bonding is dropped and the link
        disconnected (nobody is answered)."""
        if self.agent_request is not None and self.agent is not None and self.agent.client != self.call.sender:
            self.sim.agents.cancel(self.agent, self.dev.path)
        self.agent_request = None
        if self.connect_step is not None:
            self.connect_step.done = True
            self.connect_step = None
            self.dev.abandon_connect()
        self.finish(None, answer=False)
        if self.dev.connected and not self.dev.removed:
            self.dev.request_disconnect(None)

    def finish(self, error, answer=True):
        for t in self.timers:
            self.sim.cancel(t)
        self.timers.clear()
        if self.dev.pairing is self:
            self.dev.pairing = None
        if not answer:
            self.call.done = True
            self.call.record["outcome"] = "dropped"
        elif error is None:
            self.call.reply()
        else:
            self.call.fail(error)

    def _later(self, ms, fn, *args):
        self.timers.append(self.sim.later(ms, fn, *args))

    def state(self):
        return {"address": self.dev.spec.address, "client": self.call.sender, "stage": self.stage}
