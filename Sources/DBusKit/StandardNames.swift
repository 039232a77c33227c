/// The bus daemon's name and the standard interfaces' names and signals (D-Bus specification,
/// "Message Bus Specification" and "Standard Interfaces") that nearly every signal a client
/// receives carries.
///
/// One constant each, shared by the decoder (which hands these very strings out for the
/// header fields it reads, ``MessageDecoder/name(_:)``) and by the code that compares against
/// them (match rules, BlueZKit's cache): equal strings with the same storage compare on
/// identity, without reading a byte.
package enum StandardNames {
    /// The bus daemon's well-known name, also its interface and the sender of its signals.
    package static let bus = "org.freedesktop.DBus"
    package static let properties = "org.freedesktop.DBus.Properties"
    package static let objectManager = "org.freedesktop.DBus.ObjectManager"
    package static let propertiesChanged = "PropertiesChanged"
    package static let interfacesAdded = "InterfacesAdded"
    package static let interfacesRemoved = "InterfacesRemoved"
    package static let nameOwnerChanged = "NameOwnerChanged"
}
