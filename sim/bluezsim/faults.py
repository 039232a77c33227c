"""Fault and scenario switches: names, types, defaults, and parsing of NAME=VALUE."""

import json

# name -> (type, default, help)
FAULTS = {
    "connect_never_answers": (bool, False, "Connect is never answered; Disconnect still cancels it (br-connection-canceled)"),
    "connect_abort_once": (bool, False, "Connected=true briefly, then false; Connect fails Failed le-connection-abort-by-local; next Connect succeeds"),
    "connect_held": (bool, False, "Connect stays pending (no Connected change, no reply) until this fault is cleared; then it goes on as usual; a second client's Connect meanwhile fails Failed 'Operation already in progress'"),
    "connect_in_progress": (bool, False, "Connect answers org.bluez.Error.InProgress"),
    "connect_fail": (str, "", "Connect answers org.bluez.Error.Failed with this message (empty = off)"),
    "connect_fail_once": (str, "", "the next Connect answers org.bluez.Error.Failed with this message (after 100 ms), as connect_fail; once (the fault clears itself): a transient failure such as le-connection-abort-by-remote"),
    "services_resolved_never": (bool, False, "GATT discovery never completes: no GATT objects, ServicesResolved stays false"),
    "services_resolved_before_gatt_ms": (int, 0, "ServicesResolved=true first, GATT InterfacesAdded this many ms later (0 = off)"),
    "uuids_in_scan_response": (bool, False, "advertisers first appear without their service UUIDs, which follow 100 ms later as a UUIDs change (advertisement and scan response reported separately: Linux merges them only when the scan response comes right after its advertisement)"),
    "uuids_lost_after_failed_resolution": (bool, False, "a link that goes down before ServicesResolved leaves Device1.UUIDs empty, and advertised UUIDs are ignored, until a connection resolves the services (seen on a real bluetoothd 5.66: device_svc_resolved marks the LE services resolved even when GATT discovery fails, and UUIDs then lists the empty resolved set)"),
    "remove_device_during_connect_once": (bool, False, "the first Connect is never answered; 300 ms later BlueZ removes the device object (as 5.66 does when a cancelled LE connection attempt times out: connect_failed_callback on a temporary device); it reappears when discovered again"),
    "remove_device_during_connect_times": (int, 0, "as remove_device_during_connect_once, for the next N Connects (-1 = every one)"),
    "connect_abort_times": (int, 0, "as connect_abort_once, for the next N Connects (-1 = every one): Connected=true for 60 ms, then false, Connect fails le-connection-abort-by-local"),
    "remove_device_during_resolve": (bool, False, "after the Connect reply the device is removed (InterfacesRemoved), no Connected change"),
    "read_never_answers": (bool, False, "ReadValue is never answered"),
    "descriptor_read_never_answers": (bool, False, "a descriptor's ReadValue (other than the CCC's) is never answered"),
    "disconnect_mid_read": (bool, False, "ReadValue stays pending, then the link drops; the read fails Failed 'Operation failed'"),
    "drop_link_on": (str, "", "this GATT method (ReadValue, WriteValue, StartNotify) is left unanswered; 200 ms later the link drops, then the call fails"),
    "service_changed_on": (str, "", "this GATT method (ReadValue, WriteValue, StartNotify) on a characteristic makes the device change its GATT database (Service Changed): the call is never answered (a write is not applied), the objects of that characteristic's service are removed (InterfacesRemoved, children first; its notify sessions end with them) and 100 ms later added again at new handles (new object paths, values kept); the old paths answer org.freedesktop.DBus.Error.UnknownObject; once (the fault clears itself)"),
    "service_changed_at_resolution": (str, "", "this service (UUID, short or full form) changes as the device's services resolve: its objects are removed (InterfacesRemoved, children first) just before ServicesResolved turns true, and added again 100 ms later at new handles (new object paths, values kept), as a Service Changed right after GATT discovery; once (the fault clears itself)"),
    "service_changed_removes": (bool, False, "a Service Changed (service_changed_on, control ServiceChanged) removes the service for good: its objects are not added again (the device dropped it from its database)"),
    "start_notify_held": (bool, False, "StartNotify is held unanswered (pending_gatt lists it, StopNotify answers InProgress) until this fault is cleared, then answered and the session started; the client leaving drops it"),
    "start_notify_delay_ms": (int, 0, "delay the StartNotify reply (and the notify session)"),
    "start_notify_never_answers": (bool, False, "StartNotify is registered but never answered (the CCC write got no response); StopNotify answers InProgress; the client leaving drops it"),
    "notify_burst": (int, 0, "right after a StartNotify reply (on notify_burst_char), N distinct notifications back to back: value i = i as 4 bytes big-endian, i = 1..N (0 = off)"),
    "notify_burst_char": (str, "", "the characteristic UUID notify_burst applies to (short or full form; empty = any)"),
    "notify_every_ms": (int, 0, "while a characteristic (notify_every_char) has notify sessions and its link is up, a notification every N ms: value k = k as 4 bytes big-endian, k counting on from 1 per characteristic, over link losses too; BlueZ's cached Value changes, what ReadValue answers does not (0 = off; set at run time, it applies at once)"),
    "notify_every_char": (str, "", "the characteristic UUID notify_every_ms applies to (short or full form; empty = any)"),
    "notify_rate_hz": (int, 0, "like notify_every_ms (same characteristic, same values k counting on), at N notifications per second: every 5 ms the notifications due by then are sent back to back; the state's notify_rate says how many were sent and over how long (0 = off; set at run time, it applies at once)"),
    "notify_rate_total": (int, 0, "notify_rate_hz stops after this many notifications in all, counted in the state's notify_rate.sent (0 = no limit; reset clears the count)"),
    "unsolicited_after_answer": (bool, False, "the vendor answer notification is followed at once, in the same main-loop callback, by an unrelated notification 7f 00 on the same characteristic (both reach a client in one read)"),
    "response_readable": (bool, False, "the vendor response characteristic is also readable (read gives the last answer; Value changes after the read)"),
    "write_never_answers": (bool, False, "WriteValue (with response) is never answered"),
    "write_in_progress_once": (bool, False, "the first WriteValue answers org.bluez.Error.InProgress"),
    "notify_before_write_reply": (bool, False, "the vendor answer notification is emitted before the WriteValue reply"),
    "no_status_notification": (bool, False, "the vendor response characteristic sends no unsolicited 90 00 status while notifying (read at StartNotify)"),
    "no_notification": (bool, False, "vendor commands are never answered"),
    "adapter_powered_off": (bool, False, "adapter Powered=false"),
    "adv_instances": (int, 5, "advertising instances the controller offers (LEAdvertisingManager1.SupportedInstances when none is registered; the Linux kernel's 5 for a controller without extended advertising); set at start-up"),
    "central_att_timeout_ms": (int, 30000, "how long the simulated central waits for an answer to a read or write before it gives up (outcome timeout) and ends the link (the ATT transaction timeout, 30 s)"),
    "no_adapter": (bool, False, "no /org/bluez/hci0 at all"),
    "adapter_roles": (str, "central,peripheral", "hci0's Adapter1.Roles, comma-separated ('' for none; 'peripheral' for a controller that cannot scan or connect as an LE central)"),
    "power_off_mid_scan_ms": (int, 0, "that long after StartDiscovery the adapter powers off (0 = off)"),
    "start_discovery_in_progress": (int, 0, "answer InProgress to that many StartDiscovery calls; -1 = always"),
    "start_discovery_delay_ms": (int, 0, "delay the StartDiscovery reply"),
    "start_discovery_reply_delay_ms": (int, 0, "the client's discovery starts at once (Discovering true, devices reported) but the StartDiscovery reply comes that much later; StopDiscovery answers InProgress until then. What a client sees when its own reading of the reply lags behind the signals"),
    "start_discovery_held": (bool, False, "StartDiscovery is held unanswered (no session yet, StopDiscovery answers InProgress) until this fault is cleared, then answered and the session started; the client leaving drops it"),
    "start_discovery_unanswered": (bool, False, "StartDiscovery starts the client's discovery (Discovering true, devices reported) but is never answered; StopDiscovery answers InProgress; the session ends when the client leaves the bus. BlueZ 5.66 keeps one pending start per adapter (adapter.c start_discovery: adapter->client), so of two clients starting at once the first is never answered (seen on a real bluetoothd)"),
    "access_denied": (bool, False, "every org.bluez call answers org.freedesktop.DBus.Error.AccessDenied"),
    "get_managed_objects_held": (bool, False, "GetManagedObjects (on /) is never answered: a client opening its session waits"),
    "bluez_exit_on": (str, "", "when this method is called, the org.bluez connection closes without replying"),
    "bluez_blink_on": (str, "", "when this method is called, bluetoothd blinks first (org.bluez released and taken again at once, then InterfacesAdded for every object, all back to back), then handles the call as usual"),
    "bluez_stop_on": (str, "", "when this method is called, bluetoothd stops as on SIGTERM: every link dropped first (Connected false, pending GATT calls failed), then it leaves the bus 100 ms later; the call is not answered (seen on a real bluetoothd: a restart during service resolution)"),
    "power_off_on": (str, "", "when this method is called, the adapter powers off: links dropped (Connected false), then Powered false; the call fails org.bluez.Error.Failed 'Operation failed'"),
    "rfkill_block_on": (str, "", "when this method is called, rfkill blocks the adapter: links dropped (Connected false), then Powered false (PowerState 'off-blocked' with experimental); the call fails org.bluez.Error.Failed 'Operation failed'"),
    "remove_adapter_on": (str, "", "when this method is called, the adapter goes away (USB unplugged): links dropped, the call fails org.bluez.Error.Failed 'Operation failed', then the adapter's objects are removed"),
    "adapter_rfkill_blocked": (bool, False, "the adapter is powered off and blocked by rfkill (PowerState 'off-blocked' with experimental); at run time: blocked / unblocked (still off)"),
    "adapter_powering_on_ms": (int, 0, "at start-up the adapter is still powering on (bluetoothd just started with AutoEnable): Powered false (PowerState 'off-enabling' with experimental; none without, as bluetoothd 5.66 shows it), and Powered true (PowerState 'on') that many ms later (0 = off)"),
    "cached_devices": (bool, False, "the tree holds stale devices from an earlier scan (no RSSI, not advertising)"),
    "bonded_devices": (bool, False, "the tree holds devices paired earlier, loaded from bluetoothd's storage: :B1 'blesim Keys' (LE keyboard: paired, bonded, trusted; Appearance 0x03C1, Icon input-keyboard, Modalias; Battery1 73 when connected) and :B2 'blesim Headset' (BR/EDR: Class 0x240404, Icon audio-headset; paired, bonded, blocked); neither advertises"),
    "second_adapter": (bool, False, "a second adapter /org/bluez/hci1 (00:1A:7D:DA:71:14, 'blesim-host #2', Roles central), powered off and blocked by rfkill: powering it on fails org.bluez.Error.Blocked, discovery answers NotReady"),
    "experimental": (bool, False, "bluetoothd runs with --experimental: Adapter1.PowerState is there ('on'/'off' with Powered; 'off-blocked' for hci1). Set at start-up"),
    "empty_filter_is_regular": (bool, False, "bluetoothd 5.67 and later (de8e7cfce): a discovery filter with nothing but Transport the adapter's scan type (le on an LE-only adapter, see le_only_adapter; auto) and DuplicateData false counts as a regular (unfiltered) discovery, which reports LE devices only when they advertise as discoverable (the filler 6F:12:8B:DE:02:9A, flags 0x00, and hidden_device are then left out). Without it (5.66), any filter set makes a filtered discovery"),
    "le_only_adapter": (bool, False, "hci0 is LE-only (as the real-bluetoothd rig's controller): no BR/EDR inquiry, and a filter's Transport le is its scan type (see empty_filter_is_regular)"),
    "uuid_filter_crash": (bool, False, "bluetoothd 5.87: an advertisement that lists service UUIDs, heard while the newest discovery session's filter has UUIDs, crashes bluetoothd (SIGSEGV in is_filter_match, bluez#2282; when every session has UUIDs, only an advertisement listing one of them reaches it): org.bluez leaves the bus, nothing pending is answered"),
    "twin_dis_device": (bool, False, "C0:FF:EE:00:00:0B 'blesim Twin DIS' advertises: GATT 0x1801 and two Device Information Services, the first with only 0x2A24 Model Number 'Twin-1', the second with 0x2A26 Firmware Revision '2.0.1' and 0x2A29 Manufacturer Name 'Blesim Twins'"),
    "aliased_device": (bool, False, "C0:FF:EE:00:00:0C advertises the name 'BLE-Probe'; its user named it 'Kitchen' (Device1.Alias 'Kitchen', Name 'BLE-Probe'): GATT 0x1801 and Battery 0x2A19 = 71"),
    "claimed_write_device": (bool, False, "C0:FF:EE:00:00:0D 'blesim Claimed' advertises: GATT 0x1801 and a Battery Service 0x180F holding Battery Level (64) and a writable vendor characteristic 5a1e0201-... (read, write, write-without-response; 0x14). With --bluez 5.82 or later, writes into the claimed service fail org.bluez.Error.NotAuthorized and reach nothing"),
    "sensor_device": (bool, False, "C0:FF:EE:00:00:0E 'blesim Sensor' advertises: GATT 0x1801 and Environmental Sensing 0x181A with Temperature 0x2A6E = 21.50 degree Celsius and Humidity 0x2A6F = 45.00 % (read, notify; Temperature notifies 21.50, 21.51, -5.25, not known in turn with notify_every_ms) and a vendor characteristic 5e050001-... = 0x0866 with a Presentation Format descriptor 0x2904 (sint16, exponent -2, degree Celsius)"),
    "beacons": (bool, False, "seven beacon advertisers (sim/bluezsim/beacons.py), not connectable: C0:FF:EE:00:00:C1 iBeacon, :C2 Eddystone UID, :C3 Eddystone URL, :C4 Eddystone TLM, :C5 'blesim BTHome' BTHome v2 (temperature, humidity, battery), :C6 'blesim BTHome Cut' BTHome v2 cut short (undecodable), :C7 'blesim BTHome Lock' BTHome v2 encrypted (bind key 5ec12e7b1d0a4c3f8e6b2d9a7c4f1e03)"),
    "hidden_device": (bool, False, "C0:FF:EE:00:00:0A 'blesim Hidden' advertises, connectable, without the discoverable flags (AdvertisingFlags 0x04, BR/EDR Not Supported only), with a Battery Service (0x2A19 = 66): found only by a filtered discovery"),
    "foreign_filter": (bool, False, "discovery also reports devices another client's filter let through"),
    "preconnected": (str, "", "this address is connected and resolved at start-up by another client"),
    "dual_mode_device": (str, "", "C0:FF:EE:00:00:09 'blesim Dual', a dual-mode device bluetoothd found by a BR/EDR inquiry, is in the tree and LE-advertises; Device1.Connect takes the bearer BlueZ 5.66 saw last (select_conn_bearer, whole seconds, a tie going to BR/EDR), and over BR/EDR it brings the ACL up (Connected true), finds no profile by SDP (ServicesResolved true, no GATT objects) and fails NotAvailable 'br-connection-profile-unavailable'; the idle ACL drops 2 s later. Variants: inquiry (Class 0x000704; LE flags 0x06), no-class (no Class exported), bredr-flag (LE flags 0x1a: every LE sighting refreshes BR/EDR too, so Connect always goes BR/EDR)"),
    "bredr_seen_ago_s": (int, 0, "dual_mode_device: how many seconds before the fault took effect bluetoothd last saw the device over BR/EDR (0 = at that moment; over 300 = not recently, BlueZ's SEEN_TRESHHOLD)"),
    "toolbox_device": (bool, False, "C0:FF:EE:00:00:06 'blesim Toolbox' advertises too: the GATT toolbox's fixtures (sim/README.md)"),
    "battery_devices": (bool, False, "five more advertisers, C0:FF:EE:00:01:01..05 'blesim Cell 1..5', each with a Battery Service (0x2A19 = 11 x N) and no Battery1: loops over several devices (bench/prompt.py)"),
    "weird_names": (bool, False, "extra advertisers with odd names (none, empty, control chars, U+FFFD)"),
    "disconnect_held": (bool, False, "Disconnect stops midway (still connected and resolved, no reply) until this fault is cleared, then completes"),
    "disconnect_delay_ms": (int, 2000, "Disconnect delay (BlueZ DISCONNECT_TIMER = 2 s)"),
    "advertisers": (int, 0, "N extra advertisers reported as fast as possible on StartDiscovery"),
    "rssi_back_to_back": (str, "", "this address, 300 ms after discovery first reports devices: RSSI -70 then -40 as two PropertiesChanged back to back (one client read)"),
    "hold_client_ms": (int, 0, "for the back-to-back groups meant to reach a client in one read (unsolicited_after_answer, rssi_back_to_back, bluez_blink_on), the receiving clients' processes are stopped (SIGSTOP, waited for) before the group is sent and continued (SIGCONT) this many ms after: the group is then certainly in one read, as for a client that did not get the CPU for a moment (0 = off)"),
    "rssi_churn": (bool, False, "keep changing the extra advertisers' RSSI"),
    "advertisers_data": (str, "", "what the extra advertisers carry: bthome (service data 0xFCD2, a BTHome v2 frame blectl decodes), opaque (the same 11 bytes under 0xFCD3, which no decoder reads); empty: 2 bytes of manufacturer data of company 0xFFFF. Set at start-up"),
    "connect_timeout_ms": (int, 20000, "how long Connect to a device that does not advertise takes to fail"),
    # Fleets: many connectable devices, LE connection creation and the link cap (fleet.py, le_connector.py)
    "fleet": (int, 0, "N connectable sensors advertise (1..65535): device i is C0:FF:EE:F1:HH:LL (HH:LL = i, big-endian hex), 'blesim Fleet NNNN' (i, 4 digits), RSSI -50 - i % 40, UUIDs 180f 180a; GATT 0x1801, 0x180F/0x2A19 = i % 101 and Battery1 i % 101, 0x180A (0x2A26 '1.0.<i>', 0x2A29 'Blesim Fleet', 0x2A24 'Fleet-1'). Set at start-up (0 = none)"),
    "le_connect_serial": (bool, False, "LE connections are created one at a time per adapter, in the order the Connects came, as the kernel does (one LE connection attempt at a time): a Connect waits, unanswered, for the creations before it; a device that does not advertise holds no turn (state le_connect, le_creations). Off: every creation starts at once (the default world's timings)"),
    "le_create_held": (bool, False, "an LE connection creation that starts (its turn come) stays under way (creating in State, the Connect unanswered) until this fault is cleared; then it takes connect_latency_ms from then; Disconnect gives it up as usual"),
    "connect_latency_ms": (int, 100, "how long the creation of one LE connection takes (Connect called, or its turn come, to Connected true and the reply)"),
    "le_max_links": (int, 7, "LE links the controller holds at once (a link counts until it is down, through the disconnect timer); a creation beyond it fails at once: Connect answers Failed 'le-connection-abort-by-local'. 7: on-board UART controllers hold about seven, common USB ones five (0 = no cap)"),
    # AcquireWrite / AcquireNotify and the echo device (acquire.py)
    "echo_device": (bool, False, "the echo device C0:FF:EE:00:00:08 'blesim Echo' advertises (echo service: a sink that records what it is written, a source that notifies it back)"),
    "att_mtu": (int, 247, "the ATT MTU: every characteristic's MTU property and what AcquireWrite/AcquireNotify return (23..517)"),
    "acquire_write_drain_bps": (int, 131072, "bytes per second the simulated bluetoothd takes from an acquired write socket (0 = all there is, whenever readable)"),
    "acquire_write_sndbuf": (int, 4096, "SO_SNDBUF set on the client's end of an acquired write socket (the sender's buffer limits a Unix socket; the kernel doubles it, minimum about 4.6 KB)"),
    "acquire_write_refused": (str, "", "AcquireWrite answers this org.bluez.Error (NotSupported, NotPermitted, Failed, ...; empty = off): a client falls back to WriteValue (NotPermitted says 'Write acquired': another client holds it, and bluetoothd would refuse WriteValue too)"),
    "echo_drop_link_after_bytes": (int, 0, "once the echo sink has received this many bytes the link drops (remote): acquired sockets shut (HUP), unread datagrams lost, Connected false; once (0 = off)"),
    "secure_device": (bool, False, "C0:FF:EE:00:00:07 'blesim Secure' advertises: pairs with a passkey it displays (a keyboard agent is asked RequestPasskey; Just Works with a NoInputNoOutput agent); its characteristic 5ec00002-... reads only once paired (NotPermitted 'Not paired' before)"),
    "pair_held": (bool, False, "Pair is held before bluetoothd looks at the device (as if still on its way): pairings lists it at stage held; once the fault is cleared it is handled as a Pair just called (the link brought up when down)"),
    "pair_passkey": (int, 123456, "the passkey blesim Secure displays (0..999999); another answer to RequestPasskey fails Pair with AuthenticationFailed"),
    "pair_never_completes": (bool, False, "Pair never completes after the agent step (the device stops answering SMP): pending until CancelPairing (AuthenticationCanceled), the link dropping, or the caller leaving the bus"),
}


class FaultError(ValueError):
    pass


def parse_value(name, text):
    if name not in FAULTS:
        raise FaultError(f"unknown fault '{name}' (known: {', '.join(sorted(FAULTS))})")
    typ = FAULTS[name][0]
    if not isinstance(text, str):
        text = json.dumps(text) if not isinstance(text, bool) else ("true" if text else "false")
    t = text.strip()
    if typ is bool:
        if t.lower() in ("1", "true", "yes", "on", ""):
            return True
        if t.lower() in ("0", "false", "no", "off"):
            return False
        raise FaultError(f"fault '{name}' wants a boolean, got '{text}'")
    if typ is int:
        try:
            return int(t, 0)
        except ValueError:
            raise FaultError(f"fault '{name}' wants an integer, got '{text}'") from None
    return text


def parse_assignment(arg):
    if "=" in arg:
        name, value = arg.split("=", 1)
    else:
        name, value = arg, "true"
    return name.strip(), parse_value(name.strip(), value)


class Faults:
    def __init__(self):
        self.values = {}

    def get(self, name):
        return self.values.get(name, FAULTS[name][1])

    def set(self, name, value):
        if value == FAULTS[name][1]:
            self.values.pop(name, None)
        else:
            self.values[name] = value

    def consume_count(self, name):
        """A counted fault: True (and one fewer left) while N > 0; always True for -1."""
        left = self.get(name)
        if left == 0:
            return False
        if left > 0:
            self.set(name, left - 1)
        return True

    def consume_once(self, name):
        if self.get(name):
            self.set(name, FAULTS[name][1])
            return True
        return False

    def clear(self):
        self.values.clear()

    def as_json(self):
        return dict(self.values)
