"""An LEAdvertisement1 object's properties as BlueZ 5.66 reads them, and the bytes that go on
air: src/advertising.c (the parsers table, parse_advertisement, get_adv_flags,
generate_adv_data, generate_scan_rsp), src/shared/ad.c (bt_ad_* and bt_ad_generate) and the
Linux kernel's share of the packet (net/bluetooth/eir.c: the Flags and TX Power fields it
adds, the local name in the scan response). One idea: an advertisement's data.

A parser returns False where BlueZ's does; parse() then fails as parse_advertisement does
("Failed to parse advertisement."). Values arrive typed by dbus-python (byte_arrays=True)."""

import dbus

AD_MAX = 31                      # BT_AD_MAX_DATA_LEN, and a legacy controller's advertising data
# MGMT advertising flags (lib/mgmt.h)
CONNECTABLE, DISCOV, LIMITED_DISCOV, MANAGED_FLAGS = 0x01, 0x02, 0x04, 0x08
TX_POWER, APPEARANCE, LOCAL_NAME = 0x10, 0x20, 0x40
INCLUDES = (("tx-power", TX_POWER), ("appearance", APPEARANCE), ("local-name", LOCAL_NAME))
# AD flags (src/shared/ad.h)
FLAG_LIMITED, FLAG_GENERAL, FLAG_NO_BREDR = 0x01, 0x02, 0x04
# AD types bt_ad_add_data refuses: those other properties (or the kernel) own (type_reject_list)
REJECTED_TYPES = {0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0d, 0x0e, 0x0f, 0x10,
                  0x11, 0x12, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f,
                  0x20, 0x21, 0x22, 0x23, 0x27, 0x28, 0x29, 0x2a, 0x2b, 0x3d, 0xff}
BASE = "-0000-1000-8000-00805f9b34fb"
ADV_TX_POWER = 0                 # the simulated controller's advertising TX power (dBm)


def parse_uuid(text):
    """lib/uuid.c bt_string_to_uuid: (bits, int value) or None. A 128-bit UUID on the Base
    UUID with a 16-bit value shortens to 16 bits; 4/6 characters are 16-bit, 8/10 32-bit
    (strtol/strtoul base 16: an 0x prefix is taken)."""
    s = str(text)
    hexdig = "0123456789abcdefABCDEF"
    if len(s) == 36 and all(s[i] == "-" for i in (8, 13, 18, 23)):
        body = s.replace("-", "")
        if len(body) != 32 or any(c not in hexdig for c in body):
            return None
        if s[:4] == "0000" and s[8:].lower() == BASE:
            return 16, int(s[4:8], 16)
        return 128, int(body, 16)
    for bits, lengths in ((32, (8, 10)), (16, (4, 6))):
        if len(s) in lengths:
            try:
                v = int(s, 16)
            except ValueError:
                return None
            return (bits, v) if v < (1 << bits) else None
    return None


def uuid_bytes(u):
    bits, v = u
    return v.to_bytes(bits // 8, "little")


def uuid_text(u):
    bits, v = u
    if bits == 128:
        h = "%032x" % v
        return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
    return "%08x" % v + BASE


def _bytes_variant(v):
    """The variant holds an array of bytes with at least one byte: BlueZ checks the type of
    the first element, so an empty array is refused too."""
    return isinstance(v, (bytes, bytearray)) and len(v) > 0


class Advertisement:
    """What bluetoothd keeps of one registered advertisement (struct btd_adv_client)."""

    def __init__(self, experimental=False):
        self.experimental = experimental
        self.type = "broadcast"          # AD_TYPE_BROADCAST (0) until Type says otherwise
        self.service_uuids = []
        self.solicit_uuids = []
        self.manufacturer_data = {}      # id -> bytes, in order
        self.service_data = []           # [(uuid, bytes)]
        self.data = {}                   # AD type -> bytes (Flags from Discoverable kept here, as bt_ad does)
        self.flags = 0                   # MGMT flags from Includes
        self.name = None
        self.appearance = None
        self.duration = 0
        self.timeout = 0
        self.discoverable_timeout = None  # set: BlueZ's disc_to_id timer is armed
        self.min_interval = self.max_interval = 0
        self.tx_power = None

    # ------------------------------------------------------------ parsers (advertising.c)
    def p_Type(self, v):
        if not isinstance(v, dbus.String) or str(v) not in ("broadcast", "peripheral"):
            return False
        self.type = str(v)
        return True

    def _uuid_list(self, v, target):
        if not isinstance(v, dbus.Array):
            return False
        target.clear()
        for s in v:
            if not isinstance(s, dbus.String):
                break                    # the loop runs while the elements are strings
            u = parse_uuid(s)
            if u is None:
                target.clear()
                return False
            target.append(u)
        return True

    def p_ServiceUUIDs(self, v):
        return self._uuid_list(v, self.service_uuids)

    def p_SolicitUUIDs(self, v):
        return self._uuid_list(v, self.solicit_uuids)

    def p_ManufacturerData(self, v):
        if not isinstance(v, dbus.Dictionary):
            return False
        self.manufacturer_data = {}
        for key, data in v.items():
            if not isinstance(key, dbus.UInt16) or not _bytes_variant(data) or len(data) > AD_MAX - 4:
                self.manufacturer_data = {}
                return False
            self.manufacturer_data[int(key)] = bytes(data)
        return True

    def p_ServiceData(self, v):
        if not isinstance(v, dbus.Dictionary):
            return False
        self.service_data = []
        for key, data in v.items():
            u = parse_uuid(key) if isinstance(key, dbus.String) else None
            if u is None or not _bytes_variant(data) or len(data) > AD_MAX - 2 - u[0] // 8:
                self.service_data = []
                return False
            self.service_data = [(k, d) for k, d in self.service_data if k != u] + [(u, bytes(data))]
        return True

    def p_Includes(self, v, supported=TX_POWER | APPEARANCE | LOCAL_NAME):
        if not isinstance(v, dbus.Array):
            return False
        self.flags = 0
        for s in v:
            if not isinstance(s, dbus.String):
                break
            for name, flag in INCLUDES:     # unknown or unsupported names are left out quietly
                if str(s) == name and supported & flag:
                    self.flags |= flag
        return True

    def p_LocalName(self, v):
        if not isinstance(v, dbus.String) or self.flags & LOCAL_NAME:
            return False                  # "Local name already included"
        self.name = str(v) or None        # an empty name is no name
        return True

    def p_Appearance(self, v):
        if not isinstance(v, dbus.UInt16) or self.flags & APPEARANCE:
            return False                  # "Appearance already included"
        self.appearance = int(v)
        return True

    def p_Duration(self, v):
        if not isinstance(v, dbus.UInt16):
            return False
        self.duration = int(v)
        return True

    def p_Timeout(self, v):
        if not isinstance(v, dbus.UInt16):
            return False
        self.timeout = int(v)             # a timer from now on when > 0 (parse_timeout)
        return True

    def p_Data(self, v):
        if not isinstance(v, dbus.Dictionary):
            return False
        self.data = {}
        for key, data in v.items():
            if not isinstance(key, dbus.Byte) or not _bytes_variant(data) or len(data) > AD_MAX - 2 \
                    or int(key) in REJECTED_TYPES:
                self.data = {}
                return False
            self.data[int(key)] = bytes(data)
        return True

    def p_Discoverable(self, v):
        if not isinstance(v, dbus.Boolean):
            return False
        self._set_flags(FLAG_GENERAL if v else 0)
        return True

    def p_DiscoverableTimeout(self, v):
        if not isinstance(v, dbus.UInt16):
            return False
        # The timer is armed whatever the value, 0 included (timeout_add_seconds(0) fires
        # at once): the Flags go when it fires.
        self.discoverable_timeout = int(v)
        return True

    def p_SecondaryChannel(self, v):
        # The simulated controller has no extended advertising: no secondary channel is
        # supported, so any value (even "1M") is refused (parse_secondary).
        return False

    def _interval(self, v, name):
        if not self.experimental:
            return True                   # considered only with bluetoothd --experimental
        if not isinstance(v, dbus.UInt32):
            return False
        slots = int(int(v) / 0.625)
        if slots < 0x20 or slots > 0xFFFFFF:
            return False
        setattr(self, name, slots)
        return True

    def p_MinInterval(self, v):
        return self._interval(v, "min_interval")

    def p_MaxInterval(self, v):
        return self._interval(v, "max_interval")

    def p_TxPower(self, v):
        if not self.experimental:
            return True
        if not isinstance(v, dbus.Int16) or not -127 <= int(v) <= 20:
            return False
        self.tx_power = int(v)
        return True

    PARSERS = ("Type", "ServiceUUIDs", "SolicitUUIDs", "ManufacturerData", "ServiceData", "Includes",
               "LocalName", "Appearance", "Duration", "Timeout", "Data", "Discoverable",
               "DiscoverableTimeout", "SecondaryChannel", "MinInterval", "MaxInterval", "TxPower")

    # ------------------------------------------------------------ flags
    def _set_flags(self, flags):
        """set_flags: no flags clears the Flags field (bt_ad keeps it with the Data types);
        finish_flags adds what depends on the adapter."""
        if not flags:
            self.data.pop(0x01, None)
            return
        self.data[0x01] = bytes([flags])

    def finish_flags(self, bredr, adapter_discoverable):
        """The adapter-dependent part of set_flags, applied once the adapter is known."""
        if 0x01 not in self.data:
            return
        f = self.data[0x01][0]
        if not bredr or (f & (FLAG_GENERAL | FLAG_LIMITED) and not adapter_discoverable):
            f |= FLAG_NO_BREDR
        self.data[0x01] = bytes([f])

    def parse(self, props, bredr, adapter_discoverable):
        """parse_advertisement: every parser on the properties there, then the checks across
        them. Returns None when it is valid, else the reason bluetoothd logs."""
        for name in self.PARSERS:
            if name in props and not getattr(self, "p_" + name)(props[name]):
                return f"Error parsing {name} property"
        self.finish_flags(bredr, adapter_discoverable)
        if 0x01 in self.data:
            if self.type == "broadcast":
                return "Broadcast cannot set flags"
            if self.discoverable_timeout is not None:
                self._set_flags(FLAG_LIMITED)
                self.finish_flags(bredr, adapter_discoverable)
        elif self.discoverable_timeout is not None:
            self.discoverable_timeout = None      # ignored when not discoverable
        if self.timeout and self.discoverable_timeout is not None and self.timeout < self.discoverable_timeout:
            return "DiscoverableTimeout > Timeout"
        if self.min_interval > self.max_interval:
            return "MinInterval must be less than MaxInterval"
        return None

    # ------------------------------------------------------------ bytes (ad.c, eir.c)
    def mgmt_flags(self, adapter_discoverable):
        """get_adv_flags: connectable for a peripheral, general discoverable when the adapter
        is discoverable and the data have no Flags of their own, and the Includes."""
        flags = 0
        if self.type == "peripheral":
            flags = CONNECTABLE
            if adapter_discoverable and 0x01 not in self.data:
                flags |= DISCOV
        return flags | self.flags

    def bluetoothd_adv(self, flags):
        """bt_ad_generate of the advertising data (generate_adv_data puts an Appearance in
        when it is set or included: 0x0000 for an include), or None when it is over 31."""
        appearance = self.appearance
        if appearance is None and flags & APPEARANCE:
            appearance = 0x0000
        out = bytearray()
        for uuids, types in ((self.service_uuids, (0x03, 0x05, 0x07)), (self.solicit_uuids, (0x14, 0x1f, 0x15))):
            for bits, ad_type in zip((16, 32, 128), types):
                chosen = [u for u in uuids if u[0] == bits]
                if chosen:
                    body = b"".join(uuid_bytes(u) for u in chosen)
                    out += bytes([len(body) + 1, ad_type]) + body
        for company, data in self.manufacturer_data.items():
            out += bytes([len(data) + 3, 0xff]) + company.to_bytes(2, "little") + data
        for u, data in self.service_data:
            ad_type = {16: 0x16, 32: 0x20, 128: 0x21}[u[0]]
            out += bytes([len(data) + u[0] // 8 + 1, ad_type]) + uuid_bytes(u) + data
        if appearance is not None:
            out += bytes([3, 0x19]) + appearance.to_bytes(2, "little")
        for ad_type, data in self.data.items():
            out += bytes([len(data) + 1, ad_type]) + data
        return bytes(out) if len(out) <= AD_MAX else None

    def bluetoothd_scan(self):
        """generate_scan_rsp: the LocalName (Complete, or Shortened to fit 31 bytes)."""
        if self.name is None:
            return b""
        name = self.name.encode()
        if len(name) > AD_MAX - 2:
            return bytes([AD_MAX - 1, 0x08]) + name[: AD_MAX - 2]
        return bytes([len(name) + 1, 0x09]) + name


def name_field(name):
    """The kernel's local name in a scan response (eir_append_local_name): Complete when it
    fits, else Shortened."""
    raw = name.encode()
    if len(raw) <= AD_MAX - 2:
        return bytes([len(raw) + 1, 0x09]) + raw
    return bytes([AD_MAX - 1, 0x08]) + raw[: AD_MAX - 2]


def on_air(ad, bredr, adapter_discoverable, adapter_name):
    """What the controller sends: (advertising data, scan response), or (None, reason) when
    it does not fit. The kernel's budget (mgmt.c tlv_data_max_len, reported to bluetoothd in
    Add Extended Advertising Parameters' reply) leaves room for the fields it adds itself:
    Flags (3) when it manages them, TX Power (3), and in the scan response the local name and
    Appearance (4) when included. bluetoothd 5.66 refuses data over it with Failed "Failed to
    register advertisement" (add_adv_params_callback)."""
    flags = ad.mgmt_flags(adapter_discoverable)
    data = ad.bluetoothd_adv(flags)
    if data is None:
        return None, "Advertising data too long or couldn't be generated."
    budget = AD_MAX - (3 if flags & (DISCOV | LIMITED_DISCOV | MANAGED_FLAGS) else 0) \
        - (3 if flags & TX_POWER else 0)
    if len(data) > budget:
        return None, "Advertising data too long or couldn't be generated."
    scan = ad.bluetoothd_scan()
    scan_budget = AD_MAX - (len(name_field(adapter_name)) if flags & LOCAL_NAME else 0) \
        - (4 if flags & APPEARANCE else 0)
    if len(scan) > scan_budget:
        return None, "Scan data couldn't be generated."
    # eir_create_adv_data: Flags unless the data have them, then the data, then TX Power.
    head = b""
    if 0x01 not in ad.data:
        f = (FLAG_GENERAL if flags & DISCOV else 0) | (FLAG_LIMITED if flags & LIMITED_DISCOV else 0)
        if not bredr:
            f |= FLAG_NO_BREDR
        if f:
            head = bytes([2, 0x01, f])
    tail = bytes([2, 0x0a, ADV_TX_POWER & 0xff]) if flags & TX_POWER else b""
    # eir_create_scan_rsp: (the adapter's Appearance, 0 here: left out), the data, the name.
    scan_tail = name_field(adapter_name) if flags & LOCAL_NAME and ad.name is None else b""
    return (head + data + tail, scan + scan_tail), None


def structures(raw):
    """AD structures of a packet as [{"type": "0x09", "data": hex}] (for the state)."""
    out, i = [], 0
    while i < len(raw) and raw[i]:
        n = raw[i]
        out.append({"type": "0x%02x" % raw[i + 1], "data": raw[i + 2: i + 1 + n].hex()})
        i += n + 1
    return out
