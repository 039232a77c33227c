"""The test VM's Bluetooth world, in one bumble (PyPI) process.

One bumble LocalLink carries:
  * the controller behind /dev/vhci, i.e. the VM's hci0 (public address, LE only);
  * "blesim Real" (F0:5E:A1:00:00:01, static random), a connectable LE peripheral with
    Battery 0x180F (0x2A19 = 73, read + notify), Device Information 0x180A (0x2A26
    "3.1.4", 0x2A29 "Bumble Labs", 0x2A24 "Real-1") and the vendor command service
    5a1e0001-... (write 5a1e0002-..., notify 5a1e0003-...: 01 -> 81 03 01 04,
    02 -> 82 49, other -> EE cmd);
  * two filler advertisers, F0:5E:A1:00:00:11 "blesim Filler" and :12 unnamed (no GATT
    of interest; connectable, as bumble 0.0.236 sends only ADV_IND on a LocalLink);
  * "blesim Central" (F0:5E:A1:00:00:C1, static random), an LE central that scans for,
    connects to and uses what bluetoothd advertises and serves (peripheral_central.py).

Usage: python3 peripheral.py [--transport vhci] [--address 00:1A:7D:DA:71:13]
Prints "PERIPHERAL-READY" once everything advertises.

Control port (127.0.0.1:7778 inside the VM, one command line per TCP connection, the
answer is text lines; the init's command channel relays it as `fixture` / `bumble-state`):
  notify N [FIRST]  notifies FIRST..FIRST+N-1 (FIRST 1 by default), each as 4 bytes
            big-endian, on 5a1e0003-... to every link subscribed to it, in order;
            "notified N (FIRST..LAST) on K link(s)" ("notified 0: ..." without a subscriber)
  drop      blesim Real's links terminated from the peripheral side; "dropped N link(s)"
  stream    what 5a1e0002-... received since `reset-stream`, as one stream: "bytes N;
            packets P; largest L; sha256 HEX; mtu M" (the ATT MTU of the links it came over)
  reset-stream  starts that record again
  central COMMAND...  blesim Central (peripheral_central.py lists its commands: scan-name,
            scan-service, scan-address, connect, read, read-descriptor, write, subscribe,
            notifications, unsubscribe, disconnect, state, reset); one JSON line
  state     every bumble controller's LE links, pending connection and advertising state;
            "blesim Real received: commands N HEX...; pairings N" (vendor commands written
            to 5a1e0002-..., in order, and pairings completed, since the start)
  fixture   the acceptance tests' between-test repair: a link a bumble advertiser has
            that the host does not know (not in `btmgmt con`) is terminated from the
            peripheral side (the host controller gets LL_TERMINATE_IND and sends the
            kernel a Disconnection Complete), every advertiser that is not on air is
            started again, a scan or link blesim Central still has is ended; when it
            dropped such a link and the kernel still holds an hci_conn that mgmt never
            reported (`hcitool con` but not `btmgmt con`),
            hci0 is powered off and on (btmgmt). First answer line: "clean",
            "repaired: <what>" or "observed: <what>" (a leftover left alone).

bumble 0.0.236 needs two corrections for the Linux host side to work, made here at run
time (subclass / instance attributes, bumble itself is unchanged):
  * LocalLink forwards LE ACL data with the sender's *random* address as the source,
    while the kernel's connection uses its public address: the peer drops every packet.
    RoutedLink uses the address the sender's connection actually has.
  * the controller announces LL Privacy and LE Extended Advertising, so Linux 6.1 waits
    for an LE Enhanced Connection Complete that bumble never sends. Cleared.
"""

import argparse
import asyncio
import logging
import sys

from bumble.device import AdvertisingType
from bumble.transport import open_transport

from peripheral_central import Central
from peripheral_control import Control
from peripheral_devices import build_filler, build_peripheral, build_quiet
from peripheral_fixes import HostController, RoutedLink, clear_unsupported_features

CONTROL_PORT = 7778


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--transport", default="vhci")
    parser.add_argument("--address", default="00:1A:7D:DA:71:13")
    parser.add_argument("--no-fillers", action="store_true")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="peripheral %(levelname)s %(name)s: %(message)s",
    )
    link = RoutedLink()
    async with await open_transport(args.transport) as transport:
        # No await between opening the transport and building the controller: the
        # kernel's first commands queue until the controller is the sink.
        host_controller = HostController(
            "hci0", host_source=transport.source, host_sink=transport.sink,
            link=link, public_address=args.address,
        )
        clear_unsupported_features(host_controller)

        # blesim Real first (the control port's peripheral), blesim Quiet last.
        devices = [build_peripheral(link)]
        if not args.no_fillers:
            devices += [build_filler(link, 1, "blesim Filler"), build_filler(link, 2, None)]
        devices.append(build_quiet(link))
        advertisers = []
        for index, (device, data) in enumerate(devices):
            await device.power_on()
            params = dict(
                # bumble's legacy advertiser only ever sends ADV_IND PDUs (other
                # types are not put on the link), so the fillers are connectable too.
                advertising_type=AdvertisingType.UNDIRECTED_CONNECTABLE_SCANNABLE,
                advertising_data=data,
                # blesim Real and blesim Quiet advertise again after a disconnection.
                auto_restart=(index in (0, len(devices) - 1)),
                advertising_interval_min=100 + 37 * index,
                advertising_interval_max=100 + 37 * index,
            )
            await device.start_advertising(**params)
            advertisers.append((device, params))
        # blesim Central: a central of its own on the link, for blectl as a peripheral.
        central = Central(link)
        await central.power_on()
        control = Control(host_controller, advertisers, central)
        await asyncio.start_server(control.serve, "127.0.0.1", CONTROL_PORT)
        print("PERIPHERAL-READY", flush=True)
        await transport.source.terminated


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        sys.exit(130)
