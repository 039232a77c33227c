"""The control port of peripheral.py (its docstring lists the commands): state, notify,
drop, the vendor write stream's record, the between-test fixture repair, blesim Central."""

import asyncio
import json
import logging

from bumble import hci

from peripheral_devices import VENDOR_NOTIFY

log = logging.getLogger("peripheral")


def links(controller):
    """'handle 0x0001 peer XX:..:XX self YY:..:YY role central' for each LE link."""
    return [f"handle 0x{c.handle:04X} peer {c.peer_address} self {c.self_address} "
            f"role {hci.Role(c.role).name.lower()}" for c in controller.le_connections.values()]


class Control:
    """The control port: state and the between-test fixture repair (module docstring)."""

    def __init__(self, host_controller, advertisers, central):
        self.host_controller = host_controller
        self.advertisers = advertisers  # [(Device, start_advertising kwargs)]
        self.central = central  # peripheral_central.Central
        self.lock = asyncio.Lock()

    async def serve(self, reader, writer):
        try:
            line = (await asyncio.wait_for(reader.readline(), 10)).decode().strip()
            words = line.split()
            if words[:1] == ["central"]:
                # The central's own lock: a scan or a wait for notifications does not hold
                # up the peripherals' commands.
                out = [json.dumps(await self.central.command(words[1:]))]
            else:
                async with self.lock:
                    if line == "state":
                        out = self.state()
                    elif words[:1] == ["notify"] and len(words) in (2, 3):
                        out = await self.notify(int(words[1]), int(words[2]) if len(words) == 3 else 1)
                    elif words[:1] == ["notify-when-subscribed"] and len(words) == 3:
                        out = self.notify_when_subscribed(int(words[1]), int(words[2]))
                    elif line == "drop":
                        out = await self.drop()
                    elif line == "stream":
                        out = [self.peripheral.blesim_received["stream"].line()]
                    elif line == "reset-stream":
                        self.peripheral.blesim_received["stream"].reset()
                        out = ["reset"]
                    elif line in ("fixture", "fixture no-power-cycle"):
                        out = await self.fixture(power_cycle=(line == "fixture"))
                    else:
                        out = [f"unknown control command: {line!r}"]
        except Exception as e:  # answer with it rather than drop the connection
            log.exception("control command failed")
            out = [f"error: {e!r}"]
        writer.write(("\n".join(out) + "\n").encode())
        await writer.drain()
        writer.close()

    def state(self):
        hc = self.host_controller
        pending = hc.pending_le_connection
        out = [f"hci0 (host controller {hc.public_address}): links {links(hc) or 'none'}; "
               f"pending LE create connection: {pending.peer_address if pending else 'none'}; "
               f"advertising on air: {hc.le_legacy_advertiser.enabled}"]
        for device, _ in self.advertisers:
            c = self.controller_of(device)
            out.append(f"{device.random_address} {device.name or '(no name)'}: "
                       f"links {links(c) or 'none'}; advertising on air: "
                       f"{c.le_legacy_advertiser.enabled}")
            received = getattr(device, "blesim_received", None)
            if received is not None:
                out.append(f"{device.name} received: commands {len(received['commands'])} "
                           f"{' '.join(received['commands'])}".rstrip() + f"; pairings {received['pairings']}")
                out.append(f"{device.name} claimed-service writes: {len(received['claimed'])} "
                           f"{' '.join(received['claimed'])}".rstrip())
        c = self.central.controller
        out.append(f"{self.central.device.random_address} {self.central.device.name}: links {links(c) or 'none'}; "
                   f"pending LE create connection: {c.pending_le_connection.peer_address if c.pending_le_connection else 'none'}")
        return out

    @property
    def peripheral(self):
        return self.advertisers[0][0]

    async def notify(self, count, first):
        """Values first..first+count-1, each 4 bytes big-endian, notified on 5a1e0003-... to
        every link whose CCC enables notifications, in order, each sent before the next.
        -> "notified N (FIRST..LAST) on K link(s)"; nothing is sent without a subscriber."""
        device = self.peripheral
        characteristic = device.blesim_vendor_notify
        subscribers = [c for c in device.connections.values() if self.subscribed(device, c, characteristic)]
        if not subscribers:
            return [f"notified 0: no link subscribed to {VENDOR_NOTIFY}"]
        for value in range(first, first + count):
            for c in subscribers:
                await device.notify_subscriber(c, characteristic, value.to_bytes(4, "big"))
        log.info("notified %d (%d..%d) on %d link(s)", count, first, first + count - 1, len(subscribers))
        return [f"notified {count} ({first}..{first + count - 1}) on {len(subscribers)} link(s)"]

    def notify_when_subscribed(self, count, first, limit=60.0):
        """notify(count, first) once a link has subscribed (looked at every 0.1 s, for up to
        `limit` s), in the background: for a subscriber the control port cannot be asked
        alongside (blectl run in the VM holds the init's command loop while it runs).
        -> "scheduled N (FIRST..LAST)"; what it sent is in the bumble log."""
        async def later():
            loop = asyncio.get_running_loop()
            deadline = loop.time() + limit
            device = self.peripheral
            while loop.time() < deadline:
                if any(self.subscribed(device, c, device.blesim_vendor_notify) for c in device.connections.values()):
                    async with self.lock:
                        log.info("notify-when-subscribed: %s", (await self.notify(count, first))[0])
                    return
                await asyncio.sleep(0.1)
            log.warning("notify-when-subscribed: no link subscribed within %g s", limit)
        self.scheduled = asyncio.ensure_future(later())  # a reference, so the task is not collected
        return [f"scheduled {count} ({first}..{first + count - 1})"]

    @staticmethod
    def subscribed(device, connection, characteristic):
        subscribers = device.gatt_server.subscribers.get(connection, {})
        cccd = subscribers.get(characteristic.handle)
        return bool(cccd) and bool(cccd[0] & 1)

    async def drop(self):
        """blesim Real's links dropped from the peripheral side (LL_TERMINATE_IND, reason
        Remote User Terminated Connection), as a device going out of range or off would.
        -> "dropped N link(s)"."""
        device = self.peripheral
        connections = list(device.connections.values())
        for c in connections:
            await asyncio.wait_for(c.disconnect(hci.HCI_ErrorCode.REMOTE_USER_TERMINATED_CONNECTION_ERROR), 5)
        log.info("dropped %d link(s)", len(connections))
        return [f"dropped {len(connections)} link(s)"]

    @staticmethod
    def controller_of(device):
        # Device.with_hci(name, address, controller, controller): the controller is the sink.
        return device.host.hci_sink

    @staticmethod
    async def run(*argv):
        # stdin an empty pipe: btmgmt 5.7x and later (bt_shell) attaches its stdin even
        # with a command given, and never exits on a /dev/null it cannot poll (bluez#700).
        p = await asyncio.create_subprocess_exec(
            *argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT)
        out, _ = await asyncio.wait_for(p.communicate(b""), 15)
        return p.returncode, out.decode(errors="replace")

    async def host_view(self):
        """-> (btmgmt con text upper-cased, [hcitool con lines]): the links bluetoothd was
        told about (mgmt Device Connected) and every hci_conn the kernel holds."""
        _, mgmt = await self.run("btmgmt", "--index", "0", "con")
        _, hcitool = await self.run("hcitool", "-i", "hci0", "con")
        return mgmt.upper(), [l.strip() for l in hcitool.splitlines()[1:] if l.strip()]

    @staticmethod
    def unknown_to_mgmt(mgmt, kernel_links):
        return [l for l in kernel_links
                if not any(w.upper() in mgmt for w in l.split() if w.count(":") == 5)]

    async def fixture(self, power_cycle=True):
        mgmt, kernel_links = await self.host_view()
        before = self.state() + [f"hcitool con: {' | '.join(kernel_links) or 'none'}"]
        repairs = []
        # 0. blesim Central: a scan or a link a test left behind.
        answer = await self.central.command(["reset"])
        if "error" in answer:
            raise RuntimeError(f"central reset: {answer['error']}")
        repairs += answer["reset"]
        # 1. bumble: links of an advertiser that the host does not know.
        for device, params in self.advertisers:
            c = self.controller_of(device)
            address = str(device.random_address)
            for link in list(c.le_connections.values()):
                if address.upper() in mgmt:
                    continue  # the host knows this link: not ours to drop
                repairs.append(f"dropped {address}'s link 0x{link.handle:04X} to "
                               f"{link.peer_address} (not in btmgmt con)")
                reason = hci.HCI_ErrorCode.REMOTE_USER_TERMINATED_CONNECTION_ERROR
                connection = device.lookup_connection(link.handle)
                if connection is not None:
                    await asyncio.wait_for(connection.disconnect(reason), 5)
                else:
                    await device.host.send_command(hci.HCI_Disconnect_Command(
                        connection_handle=link.handle, reason=reason))
            for _ in range(100):  # the link's end and the advertiser's auto-restart
                if not c.le_connections and c.le_legacy_advertiser.enabled:
                    break
                await asyncio.sleep(0.02)
            if c.le_connections:
                repairs.append(f"{address} still has links: {links(c)}")
            if not c.le_legacy_advertiser.enabled:
                repairs.append(f"restarted {address}'s advertising")
                await device.start_advertising(**params)
        # 2. kernel: after the race that left bumble's link (step 1), the kernel also
        # keeps an hci_conn bluetoothd was never told about (hcitool con: state 5 =
        # BT_CONNECT, handle 65535 = unset) and every later connection to that address
        # waits on it (exit 124). Only a power cycle of hci0 frees it (hci_dev_close
        # flushes the connection hash). Such an hci_conn *without* a bumble link is far
        # more common and did not fail the next test in any measured run (the next
        # connect reuses it); a power cycle behind bluetoothd's back is a bigger change
        # to the next test's world than that, so it is only reported ("observed").
        # A link that is just going away gets 2 s first.
        for _ in range(10):
            mgmt, kernel_links = await self.host_view()
            stale = self.unknown_to_mgmt(mgmt, kernel_links)
            if not stale:
                break
            await asyncio.sleep(0.2)
        observed = []
        if stale and (not repairs or not power_cycle):
            observed.append(f"kernel link(s) unknown to mgmt left alone: {' | '.join(stale)}")
        elif stale:
            for state in ("off", "on"):
                rc, out = await self.run("btmgmt", "--index", "0", "power", state)
                if rc != 0:
                    raise RuntimeError(f"btmgmt power {state}: {rc} {out.strip()}")
            mgmt, kernel_links = await self.host_view()
            repairs.append(f"power-cycled hci0 for kernel link(s) unknown to mgmt: "
                           f"{' | '.join(stale)}; hcitool con after: "
                           f"{' | '.join(kernel_links) or 'none'}")
        if observed and not repairs:
            return ["observed: " + "; ".join(observed)]
        if not repairs:
            return ["clean"]
        log.warning("fixture repair: %s", "; ".join(repairs))
        return ["repaired: " + "; ".join(repairs), "before:", *before, "after:", *self.state()]
