"""A bumble LE central on the VM's LocalLink: "blesim Central" (F0:5E:A1:00:00:C1, static
random), its own controller beside hci0's and the peripherals'. The acceptance tests drive
it through the control port (`central ...`, peripheral.py's docstring) to test blectl as
the peripheral: it scans for what bluetoothd advertises (hci0's advertiser), connects to
it, discovers, reads, writes, subscribes and disconnects, and answers each command with
one JSON line.

Commands (words after `central`; the init's command channel splits on spaces, so a name
is the rest of the line):
  scan-name TIMEOUT NAME...   active scan until an advertiser whose advertising data or
  scan-service TIMEOUT UUID   scan response has that complete/short name (or lists that
  scan-address TIMEOUT ADDR   service UUID, or has that address) has been heard with both
                              packets (advertising data and scan response), at most
                              TIMEOUT s -> {"found": true, "address", "address_type",
                              "connectable", "rssi", "adv_data", "scan_response" (hex),
                              "ad": [[type, hex]...], "scan_response_ad", "name",
                              "services", "manufacturer_data", "reports"} or
                              {"found": false, "heard": [addresses]}
  connect ADDRESS [public|random] [mtu N]  connect (the type the last scan saw by
                              default), exchange the ATT MTU (517 unless mtu 0), discover
                              every service, characteristic and descriptor
                              -> {"connected": true, "self", "peer", "mtu", "services"}
  read UUID                   -> {"value": hex} (the first characteristic with that UUID)
  read-descriptor UUID DESC   -> {"value": hex} (that characteristic's descriptor DESC)
  write UUID HEX request|command  -> {"written": hex, "type"}
  subscribe UUID [indicate]   enables notifications (or indications) in its CCC
                              -> {"subscribed": uuid}
  notifications UUID COUNT TIMEOUT  waits until COUNT values arrived since subscribe (at
                              most TIMEOUT s) -> {"values": [hex...]} (all of them)
  unsubscribe UUID            -> {"unsubscribed": uuid}
  disconnect                  LL_TERMINATE_IND from the central -> {"disconnected": true,
                              "reason"}
  state                       -> {"connected", "peer", "scanning", "disconnections"}
  reset                       (the fixture) stops a scan and drops a link -> {"reset": [...]}
An error answers {"error": "...", "att_error": code or null}.

Its controller answers an active scan with the advertiser's actual scan response: bumble
0.0.236's controller reports the ADV_IND's own data again as the SCAN_RSP (a LocalLink
carries no scan requests), which would lose what bluetoothd puts in the scan response
(LocalName).
"""

import asyncio
import logging
import time

from bumble import hci, ll
from bumble.att import ATT_Error
from bumble.core import UUID, AdvertisingData
from bumble.device import Device, Peer

from peripheral_fixes import HostController, clear_unsupported_features

CENTRAL_NAME = "blesim Central"
CENTRAL_ADDRESS = "F0:5E:A1:00:00:C1"
BASE_UUID_TAIL = "-0000-1000-8000-00805f9b34fb"

log = logging.getLogger("peripheral")


def uuid_text(uuid):
    """'180f' for a SIG (16-bit) UUID, else the lower-case 128-bit form, as blectl prints."""
    full = uuid.to_hex_str("-").lower() if len(uuid.uuid_bytes) == 16 else None
    if full is None:
        full = UUID.from_bytes(uuid.uuid_128_bytes).to_hex_str("-").lower()
    if full.startswith("0000") and full.endswith(BASE_UUID_TAIL):
        return full[4:8]
    return full


def uuid_arg(text):
    return UUID(text.lower())


def ad_structures(data):
    """[(type, bytes)] of an advertising payload (length, type, data), stopping at a zero
    length or a truncated structure."""
    out, i = [], 0
    while i < len(data):
        length = data[i]
        if length == 0 or i + 1 + length > len(data):
            break
        out.append((data[i + 1], bytes(data[i + 2:i + 1 + length])))
        i += 1 + length
    return out


def decoded(structures):
    """name, service UUIDs and manufacturer data of AD structures."""
    name, services, manufacturer = None, [], {}
    sizes = {AdvertisingData.INCOMPLETE_LIST_OF_16_BIT_SERVICE_CLASS_UUIDS: 2,
             AdvertisingData.COMPLETE_LIST_OF_16_BIT_SERVICE_CLASS_UUIDS: 2,
             AdvertisingData.INCOMPLETE_LIST_OF_32_BIT_SERVICE_CLASS_UUIDS: 4,
             AdvertisingData.COMPLETE_LIST_OF_32_BIT_SERVICE_CLASS_UUIDS: 4,
             AdvertisingData.INCOMPLETE_LIST_OF_128_BIT_SERVICE_CLASS_UUIDS: 16,
             AdvertisingData.COMPLETE_LIST_OF_128_BIT_SERVICE_CLASS_UUIDS: 16}
    for ad_type, data in structures:
        if ad_type in (AdvertisingData.COMPLETE_LOCAL_NAME, AdvertisingData.SHORTENED_LOCAL_NAME):
            name = data.decode(errors="replace")
        elif ad_type in sizes:
            n = sizes[ad_type]
            services += [uuid_text(UUID.from_bytes(data[i:i + n])) for i in range(0, len(data) - n + 1, n)]
        elif ad_type == AdvertisingData.MANUFACTURER_SPECIFIC_DATA and len(data) >= 2:
            manufacturer[f"{int.from_bytes(data[:2], 'little'):04x}"] = data[2:].hex()
    return name, services, manufacturer


def properties(flags):
    """['read', 'write-without-response', ...] of a characteristic's properties, in bit order."""
    return [p.name.lower().replace("_", "-") for p in type(flags) if p in flags and p.name]


class ScanningController(HostController):
    """The central's controller: legacy reports carry the advertiser's scan response (and
    LE Create Connection Cancel works, HostController's)."""

    def on_advertising_pdu(self, pdu):
        if (not self.le_scan_enable or not isinstance(pdu, ll.AdvInd)
                or self.le_features & hci.LeFeatureMask.LE_EXTENDED_ADVERTISING):
            return super().on_advertising_pdu(pdu)
        reports = [hci.HCI_LE_Advertising_Report_Event.Report(
            event_type=hci.HCI_LE_Advertising_Report_Event.EventType.ADV_IND,
            address_type=pdu.advertiser_address.address_type, address=pdu.advertiser_address,
            data=pdu.data, rssi=-50)]
        if self.le_scan_type == hci.HCI_LE_Set_Scan_Parameters_Command.ACTIVE_SCANNING:
            reports.append(hci.HCI_LE_Advertising_Report_Event.Report(
                event_type=hci.HCI_LE_Advertising_Report_Event.EventType.SCAN_RSP,
                address_type=pdu.advertiser_address.address_type, address=pdu.advertiser_address,
                data=self.scan_response_of(pdu.advertiser_address), rssi=-50))
        for report in reports:
            self.send_hci_packet(hci.HCI_LE_Advertising_Report_Event([report]))
        pending = self.pending_le_connection
        if pending and pending.peer_address == pdu.advertiser_address:
            self.create_le_connection(pdu.advertiser_address)

    def scan_response_of(self, address):
        for c in self.link.controllers:
            advertiser = c.le_legacy_advertiser
            if c is not self and advertiser.enabled and advertiser.address == address:
                return bytes(advertiser.scan_response_data)
        return b""


class Central:
    """blesim Central and its one link (the module docstring lists its commands)."""

    def __init__(self, link):
        self.controller = ScanningController("central", link=link)
        clear_unsupported_features(self.controller)
        self.device = Device.with_hci(CENTRAL_NAME, hci.Address(CENTRAL_ADDRESS), self.controller, self.controller)
        self.device.host.on("advertising_report", self.on_report)
        self.heard = {}  # address text -> {"address", "adv", "scan_response", "reports", ...} (this scan)
        self.address_types = {}  # address text -> hci.Address as last heard (any scan)
        self.connection = None
        self.peer = None
        self.disconnections = []  # {"peer", "reason"} of every link that ended, in order
        self.notifications = {}  # uuid text -> [hex]
        self.lock = asyncio.Lock()

    async def power_on(self):
        await self.device.power_on()

    def on_report(self, report):
        address = report.address.to_string(False)
        self.address_types[address] = report.address
        entry = self.heard.setdefault(address, {"address": report.address, "adv": None, "scan_response": None,
                                                "reports": 0, "connectable": False, "rssi": None})
        entry["reports"] += 1
        entry["rssi"] = report.rssi
        kind = hci.HCI_LE_Advertising_Report_Event.EventType
        if report.event_type == kind.SCAN_RSP:
            entry["scan_response"] = bytes(report.data)
        else:
            entry["adv"] = bytes(report.data)
            entry["connectable"] = report.event_type in (kind.ADV_IND, kind.ADV_DIRECT_IND)

    async def command(self, words):
        async with self.lock:
            try:
                return await self.run(words)
            except ATT_Error as e:
                log.info("central %s: %s", " ".join(words), e)
                return {"error": str(e), "att_error": e.error_code}
            except LookupError as e:
                return {"error": str(e), "att_error": None}
            except Exception as e:  # answered, not raised: the test reports it
                log.exception("central %s failed", " ".join(words))
                return {"error": f"{type(e).__name__}: {e}", "att_error": None}

    async def run(self, words):
        op, args = (words[0], words[1:]) if words else ("", [])
        if op == "scan-name" and len(args) >= 2:
            name = " ".join(args[1:])
            return await self.scan(float(args[0]), lambda n, s, a: n == name)
        if op == "scan-service" and len(args) == 2:
            wanted = uuid_text(uuid_arg(args[1]))
            return await self.scan(float(args[0]), lambda n, s, a: wanted in s)
        if op == "scan-address" and len(args) == 2:
            return await self.scan(float(args[0]), lambda n, s, a: a == args[1].upper())
        if op == "connect" and args:
            return await self.connect(args)
        if op == "state":
            return self.state()
        if op == "reset":
            return {"reset": await self.reset()}
        if op == "disconnect":
            return await self.disconnect()
        if self.peer is None:
            return {"error": "not connected", "att_error": None}
        if op == "read" and len(args) == 1:
            value = await self.peer.read_value(self.characteristic(args[0]))
            return {"value": bytes(value).hex()}
        if op == "read-descriptor" and len(args) == 2:
            c = self.characteristic(args[0])
            descriptor = c.get_descriptor(uuid_arg(args[1]))
            if descriptor is None:
                raise LookupError(f"no descriptor {args[1]} in {args[0]}")
            return {"value": bytes(await self.peer.read_value(descriptor)).hex()}
        if op == "write" and len(args) == 3 and args[2] in ("request", "command"):
            value = bytes.fromhex(args[1])
            await self.peer.write_value(self.characteristic(args[0]), value, with_response=(args[2] == "request"))
            return {"written": value.hex(), "type": args[2]}
        if op == "subscribe" and len(args) in (1, 2):
            c = self.characteristic(args[0])
            key = uuid_text(c.uuid)
            values = self.notifications[key] = []
            await self.peer.subscribe(c, lambda value: values.append(bytes(value).hex()),
                                      prefer_notify=(args[1:] != ["indicate"]))
            return {"subscribed": key}
        if op == "notifications" and len(args) == 3:
            key = uuid_text(uuid_arg(args[0]))
            values = self.notifications.get(key)
            if values is None:
                return {"error": f"not subscribed to {key}", "att_error": None}
            deadline = time.monotonic() + float(args[2])
            while len(values) < int(args[1]) and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            return {"values": list(values)}
        if op == "unsubscribe" and len(args) == 1:
            c = self.characteristic(args[0])
            await self.peer.unsubscribe(c)
            return {"unsubscribed": uuid_text(c.uuid)}
        return {"error": f"unknown central command: {' '.join(words)!r}", "att_error": None}

    async def scan(self, timeout, matches):
        """Active scan (legacy, duplicates reported) until an advertiser matches with both
        its advertising data and its scan response heard; the scan is stopped either way."""
        self.heard = {}
        await self.device.start_scanning(legacy=True, active=True, filter_duplicates=False)
        try:
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                for entry in self.heard.values():
                    if entry["adv"] is None or entry["scan_response"] is None:
                        continue
                    structures = ad_structures(entry["adv"]) + ad_structures(entry["scan_response"])
                    name, services, manufacturer = decoded(structures)
                    if matches(name, services, entry["address"].to_string(False)):
                        return {"found": True, "address": entry["address"].to_string(False),
                                "address_type": "public" if entry["address"].is_public else "random",
                                "connectable": entry["connectable"], "rssi": entry["rssi"],
                                "adv_data": entry["adv"].hex(), "scan_response": entry["scan_response"].hex(),
                                "ad": [[t, d.hex()] for t, d in ad_structures(entry["adv"])],
                                "scan_response_ad": [[t, d.hex()] for t, d in ad_structures(entry["scan_response"])],
                                "name": name, "services": services, "manufacturer_data": manufacturer,
                                "reports": entry["reports"]}
                await asyncio.sleep(0.05)
            return {"found": False, "heard": sorted(self.heard)}
        finally:
            await self.device.stop_scanning(legacy=True)

    async def connect(self, args):
        if self.connection is not None:
            return {"error": f"already connected to {self.connection.peer_address}", "att_error": None}
        address, rest = args[0], args[1:]
        mtu = 517
        if "mtu" in rest:
            mtu = int(rest[rest.index("mtu") + 1])
        seen = self.address_types.get(address.upper())
        public = "public" in rest or ("random" not in rest and seen is not None and seen.is_public)
        peer_address = hci.Address(address, hci.Address.PUBLIC_DEVICE_ADDRESS if public else hci.Address.RANDOM_DEVICE_ADDRESS)
        connection = await self.device.connect(peer_address, timeout=15)
        self.connection = connection
        connection.on("disconnection", lambda reason: self.on_disconnection(connection, reason))
        self.peer = Peer(connection)
        if mtu:
            await self.peer.request_mtu(mtu)
        await self.peer.discover_all()
        return {"connected": True, "self": CENTRAL_ADDRESS, "peer": connection.peer_address.to_string(False),
                "mtu": connection.att_mtu, "services": self.services()}

    def on_disconnection(self, connection, reason):
        log.info("central: disconnected from %s (%s)", connection.peer_address, reason)
        self.disconnections.append({"peer": connection.peer_address.to_string(False),
                                    "reason": hci.HCI_Constant.error_name(reason)})
        if self.connection is connection:
            self.connection = self.peer = None

    def services(self):
        return [{"uuid": uuid_text(s.uuid), "characteristics": [
            {"uuid": uuid_text(c.uuid), "properties": properties(c.properties),
             "descriptors": [uuid_text(d.type) for d in c.descriptors]}
            for c in s.characteristics]} for s in self.peer.services]

    def characteristic(self, text):
        found = self.peer.get_characteristics_by_uuid(uuid_arg(text))
        if not found:
            raise LookupError(f"no characteristic {text} on {self.connection.peer_address.to_string(False)}")
        return found[0]

    async def disconnect(self):
        connection = self.connection
        if connection is None:
            return {"error": "not connected", "att_error": None}
        count = len(self.disconnections)
        await asyncio.wait_for(connection.disconnect(), 5)
        for _ in range(100):
            if len(self.disconnections) > count:
                break
            await asyncio.sleep(0.02)
        return {"disconnected": len(self.disconnections) > count,
                "reason": self.disconnections[-1]["reason"] if len(self.disconnections) > count else None}

    def state(self):
        return {"connected": self.connection is not None,
                "peer": self.connection.peer_address.to_string(False) if self.connection else None,
                "scanning": bool(self.device.scanning), "disconnections": self.disconnections}

    async def reset(self):
        """What the fixture undoes between tests: a scan left running, a link left up."""
        done = []
        if self.device.scanning:
            await self.device.stop_scanning(legacy=True)
            done.append("stopped the central's scan")
        if self.connection is not None:
            peer = self.connection.peer_address
            await self.disconnect()
            done.append(f"dropped the central's link to {peer}")
        self.notifications = {}
        return done
