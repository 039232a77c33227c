"""The simulator's state as the control interface reports it (State, `simctl state`): the
adapter, discovery sessions, connections, calls pending, notify sessions, faults, counters,
sockets, pairing and timings (mixed into core.Sim; the JSON is described in sim/README.md)."""

import json


class SimState:
    """Expects of the Sim: bus, adapter, discovery, devices, faults, agents, and the counters
    and records it keeps."""

    # ------------------------------------------------------------ state
    def state(self):
        conns, pend, gatt, notif, pairings = [], [], [], [], []
        for dev in self.devices.values():
            if dev.connected:
                conns.append({"address": dev.spec.address, "connected_by": dev.connected_by,
                              "preconnected": dev.preconnected, "disconnecting": dev.disconnecting})
            if dev.connect_call is not None:
                pend.append(dev.spec.address)
            if dev.pairing is not None:
                pairings.append(dev.pairing.state())
            for ch in dev.chars():
                if ch.busy is not None:
                    gatt.append({"op": ch.busy.member, "path": ch.path, "client": ch.busy.sender})
                for c in ch.pending_notify.values():
                    gatt.append({"op": c.member, "path": ch.path, "client": c.sender})
                for c in sorted(ch.notify_clients):
                    notif.append({"path": ch.path, "client": c, "acquired": False})
                if ch.notify_io is not None:
                    # bluetoothd keeps an AcquireNotify client among the notify clients too.
                    notif.append({"path": ch.path, "client": ch.notify_io.client, "acquired": True})
        return {
            "bluez_running": self.bus.alive,
            "bluez": f"{self.bluez[0]}.{self.bluez[1]}",
            "adapter": self.adapter is not None,
            "second_adapter": self.second_adapter is not None,
            "powered": bool(self.adapter and self.adapter.powered),
            "discovering": bool(self.adapter and self.adapter.discovering),
            "discovery_sessions": [{"client": c, "filter": f} for c, f in self.discovery.sessions.items()],
            "pending_start_discovery": sorted(self.discovery.pending),
            "connections": conns,
            "pending_connects": pend,
            "pending_gatt": gatt,
            "notify_sessions": notif,
            "devices": sorted(self.devices),
            "faults": self.faults.as_json(),
            "sightings": self.sightings,
            "bus_pid": self.bus_pid,
            "blinks": self.blinks,
            "holds": self.holds,
            "acquired": [s.describe() for s in self.acquired],
            "echo": self.echo.as_json(),
            "notify_rate": {"sent": self.rate_stats["sent"], "batches": self.rate_stats["batches"],
                            "seconds": (self.rate_stats["last"] - self.rate_stats["first"])
                            if self.rate_stats["first"] is not None else None},
            "agents": self.agents.state(),
            "pairings": pairings,
            "agent_calls": list(self.agents.requests),
            "paired": sorted(a for a, d in self.devices.items() if d.paired),
            "connects": list(self.connects),
            "le_connect": self.le_connector.state(),
            "le_creations": [dict(r) for r in self.le_connector.log],
            "device_faults": {a: sorted(k) for a, k in sorted(self.device_faults.items()) if k},
            "advertisements": self.advertising.state(),
            "advertisements_refused": list(self.advertising.refused),
            "applications": self.gatt_server.state(),
            "applications_refused": list(self.gatt_server.refused),
            "central": self.central.state(),
            "app_calls": list(self.app_calls.log),
            "resolved_at": dict(self.resolved_at),
            "added_at": dict(self.added_at),
        }

    def state_json(self):
        return json.dumps(self.state())
