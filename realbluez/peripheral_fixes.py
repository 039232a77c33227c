"""bumble 0.0.236's two run-time corrections for the Linux host side (peripheral.py's
docstring): RoutedLink (LE ACL data with the source address of the sender's link),
HostController (a working LE Create Connection Cancel) and clear_unsupported_features
(no LL Privacy, no LE Extended Advertising)."""

import asyncio
import logging

from bumble import hci
from bumble.controller import Controller
from bumble.core import PhysicalTransport
from bumble.link import LocalLink

log = logging.getLogger("peripheral")


class RoutedLink(LocalLink):
    """LocalLink whose LE ACL data carries the source address of the sender's link."""

    def send_acl_data(self, sender_controller, destination_address, transport, data):
        if transport != PhysicalTransport.LE:
            return super().send_acl_data(sender_controller, destination_address, transport, data)
        destination = self.find_le_controller(destination_address)
        connection = sender_controller.le_connections.get(destination_address)
        if destination is None or connection is None:
            log.warning("ACL data to %s dropped: no link", destination_address)
            return
        source = connection.self_address
        asyncio.get_running_loop().call_soon(
            destination.on_link_acl_data, source, transport, data
        )


class HostController(Controller):
    """The controller behind /dev/vhci, with a working LE Create Connection Cancel.

    bumble 0.0.236 answers the cancel with success but keeps the pending connection and
    never sends the LE Connection Complete (status Unknown Connection Identifier) the spec
    asks for: the next advertisement from the peer then completes a connection the kernel
    has given up on, the peripheral stays connected to nobody and stops advertising.
    """

    def on_hci_le_create_connection_cancel_command(self, command):
        pending = self.pending_le_connection
        if pending is None:
            return hci.HCI_StatusReturnParameters(hci.HCI_ErrorCode.COMMAND_DISALLOWED_ERROR)
        self.pending_le_connection = None
        peer = pending.peer_address

        def complete():
            self.send_hci_packet(hci.HCI_LE_Connection_Complete_Event(
                status=hci.HCI_ErrorCode.UNKNOWN_CONNECTION_IDENTIFIER_ERROR,
                connection_handle=0, role=hci.Role.CENTRAL,
                peer_address_type=peer.address_type, peer_address=peer,
                connection_interval=0, peripheral_latency=0, supervision_timeout=0,
                central_clock_accuracy=0,
            ))

        asyncio.get_running_loop().call_soon(complete)  # after the Command Complete
        return hci.HCI_StatusReturnParameters(hci.HCI_ErrorCode.SUCCESS)


def clear_unsupported_features(controller):
    controller.le_features = controller.le_features & ~(
        hci.LeFeatureMask.LL_PRIVACY | hci.LeFeatureMask.LE_EXTENDED_ADVERTISING
    )
