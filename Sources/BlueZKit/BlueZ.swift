import DBusKit

/// Names from BlueZ's D-Bus API (bluez/doc/org.bluez.*.rst).
public enum BlueZ {
    public static let service = "org.bluez"
    public static let adapterInterface = "org.bluez.Adapter1"
    public static let deviceInterface = "org.bluez.Device1"
    public static let gattServiceInterface = "org.bluez.GattService1"
    public static let gattCharacteristicInterface = "org.bluez.GattCharacteristic1"
    public static let gattDescriptorInterface = "org.bluez.GattDescriptor1"
    public static let batteryInterface = "org.bluez.Battery1"
    /// On `/org/bluez` (bluez/doc/org.bluez.AgentManager.rst).
    public static let agentManagerInterface = "org.bluez.AgentManager1"
    /// Implemented by clients, called by bluetoothd (bluez/doc/org.bluez.Agent.rst).
    public static let agentInterface = "org.bluez.Agent1"
    /// On each LE adapter (bluez/doc/org.bluez.LEAdvertisingManager.rst; 5.66: advertising-api.txt).
    public static let advertisingManagerInterface = "org.bluez.LEAdvertisingManager1"
    /// Implemented by clients, read and released by bluetoothd (bluez/doc/org.bluez.LEAdvertisement.rst).
    public static let advertisementInterface = "org.bluez.LEAdvertisement1"
    /// On each adapter: registers GATT applications (bluez/doc/org.bluez.GattManager.rst; 5.66: gatt-api.txt).
    public static let gattManagerInterface = "org.bluez.GattManager1"
    /// The object implementing ``agentManagerInterface``.
    public static let agentManagerPath: ObjectPath = "/org/bluez"
    /// org.freedesktop.DBus.ObjectManager (the string DBusKit's decoder hands out for it).
    public static let objectManager = StandardNames.objectManager
    /// org.freedesktop.DBus.Properties (the string DBusKit's decoder hands out for it).
    public static let properties = StandardNames.properties

    /// The interfaces the object cache keeps; others (Introspectable, Properties, ...) are skipped.
    static let cachedInterfaces: Set<String> = [adapterInterface, deviceInterface, gattServiceInterface,
                                                gattCharacteristicInterface, gattDescriptorInterface, batteryInterface]

    /// Error names (bluez/src/error.c).
    public enum Error {
        public static let failed = "org.bluez.Error.Failed"
        public static let inProgress = "org.bluez.Error.InProgress"
        public static let notReady = "org.bluez.Error.NotReady"
        public static let notConnected = "org.bluez.Error.NotConnected"
        public static let alreadyConnected = "org.bluez.Error.AlreadyConnected"
        public static let notSupported = "org.bluez.Error.NotSupported"
        public static let doesNotExist = "org.bluez.Error.DoesNotExist"
        public static let invalidArguments = "org.bluez.Error.InvalidArguments"
        public static let notPermitted = "org.bluez.Error.NotPermitted"
        public static let notAuthorized = "org.bluez.Error.NotAuthorized"
        public static let authenticationFailed = "org.bluez.Error.AuthenticationFailed"
        public static let authenticationRejected = "org.bluez.Error.AuthenticationRejected"
        public static let authenticationCanceled = "org.bluez.Error.AuthenticationCanceled"
        public static let authenticationTimeout = "org.bluez.Error.AuthenticationTimeout"
        public static let alreadyExists = "org.bluez.Error.AlreadyExists"
        /// What an agent answers a request it refuses (bluez/doc/org.bluez.Agent.rst).
        public static let rejected = "org.bluez.Error.Rejected"
        /// What an agent answers a request its user cancelled (bluez/doc/org.bluez.Agent.rst).
        public static let canceled = "org.bluez.Error.Canceled"
    }

    /// `org.bluez.Error.Failed` messages with a meaning of their own (bluez/src/device.c).
    public enum FailureMessage {
        /// The link was aborted locally, typically a connection that failed to establish: retry.
        public static let leConnectionAbortByLocal = "le-connection-abort-by-local"
        /// A pending Connect cancelled by Disconnect.
        public static let connectionCanceled = "br-connection-canceled"
    }

    /// `org.bluez.Error.NotPermitted` messages that are not about pairing (bluez/src/gatt-client.c
    /// create_gatt_dbus_error): the device answered ATT "Read Not Permitted" or "Write Not
    /// Permitted", the attribute cannot be read or written at all. Insufficient authentication
    /// or encryption comes as "Not paired" instead.
    public enum NotPermittedMessage {
        public static let readNotPermitted = "Read not permitted"
        public static let writeNotPermitted = "Write not permitted"
        /// Another client holds the characteristic's AcquireNotify socket (src/gatt-client.c).
        public static let notifyAcquired = "Notify acquired"
        /// Another client holds the characteristic's AcquireWrite socket.
        public static let writeAcquired = "Write acquired"
    }

    package static func call(_ path: ObjectPath, _ interface: String, _ member: String, _ arguments: [DBusValue] = []) -> MethodCall {
        MethodCall(destination: service, path: path, interface: interface, member: member, arguments: arguments)
    }
}
