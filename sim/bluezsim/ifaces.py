"""Method signatures of the org.bluez interfaces the simulator serves: member -> (in, out)."""

IFACES = {
    "org.bluez.AgentManager1": {"methods": {
        "RegisterAgent": ("os", ""), "UnregisterAgent": ("o", ""), "RequestDefaultAgent": ("o", "")}},
    "org.bluez.ProfileManager1": {"methods": {
        "RegisterProfile": ("osa{sv}", ""), "UnregisterProfile": ("o", "")}},
    "org.bluez.Adapter1": {"methods": {
        "StartDiscovery": ("", ""), "StopDiscovery": ("", ""), "SetDiscoveryFilter": ("a{sv}", ""),
        "GetDiscoveryFilters": ("", "as"), "RemoveDevice": ("o", "")}},
    # On the adapter object: advertising.py, gatt_server.py.
    "org.bluez.LEAdvertisingManager1": {"methods": {
        "RegisterAdvertisement": ("oa{sv}", ""), "UnregisterAdvertisement": ("o", "")}},
    "org.bluez.GattManager1": {"methods": {
        "RegisterApplication": ("oa{sv}", ""), "UnregisterApplication": ("o", "")}},
    "org.bluez.Device1": {"methods": {
        "Connect": ("", ""), "Disconnect": ("", ""), "Pair": ("", ""), "CancelPairing": ("", ""),
        "ConnectProfile": ("s", ""), "DisconnectProfile": ("s", "")}},
    "org.bluez.GattService1": {"methods": {}},
    "org.bluez.GattCharacteristic1": {"methods": {
        "ReadValue": ("a{sv}", "ay"), "WriteValue": ("aya{sv}", ""), "StartNotify": ("", ""),
        "StopNotify": ("", ""), "AcquireWrite": ("a{sv}", "hq"), "AcquireNotify": ("a{sv}", "hq")}},
    "org.bluez.GattDescriptor1": {"methods": {
        "ReadValue": ("a{sv}", "ay"), "WriteValue": ("aya{sv}", "")}},
    "org.bluez.Battery1": {"methods": {}},
    # 5.84 and later (sim/bluezsim/profiles.py): Connect and Disconnect only with --experimental.
    "org.bluez.Bearer.LE1": {"methods": {}},
    "org.bluez.Bearer.BREDR1": {"methods": {}},
    # Exported by clients (agents), called by bluetoothd: listed for reference.
    "org.bluez.Agent1": {"methods": {
        "Release": ("", ""), "RequestPinCode": ("o", "s"), "DisplayPinCode": ("os", ""),
        "RequestPasskey": ("o", "u"), "DisplayPasskey": ("ouq", ""), "RequestConfirmation": ("ou", ""),
        "RequestAuthorization": ("o", ""), "AuthorizeService": ("os", ""), "Cancel": ("", "")}},
}

ERR = "org.bluez.Error."
