// Start-up floor for a command that talks to the bus (bench/floor/run): as sync.swift, plus
// what every blectl bus command stands on before any D-Bus traffic: an async main (the
// concurrency runtime and its thread pool) and one hop through a serial Dispatch queue (the
// queue libdbus is driven on) and back.
import Dispatch

@_silgen_name("dbus_get_version")
func dbusGetVersion(_ major: UnsafeMutablePointer<Int32>, _ minor: UnsafeMutablePointer<Int32>, _ micro: UnsafeMutablePointer<Int32>)

@main
struct Floor {
    static func main() async {
        var major: Int32 = 0, minor: Int32 = 0, micro: Int32 = 0
        dbusGetVersion(&major, &minor, &micro)
        let queue = DispatchQueue(label: "floor.dbus")
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in queue.async { done.resume() } }
        print("floor-async (libdbus \(major).\(minor).\(micro))")
    }
}
