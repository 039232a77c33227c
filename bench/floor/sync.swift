// Start-up floor for `blectl --version` (bench/floor/run): a statically linked Swift program
// that links libdbus as blectl does (so the same shared libraries are loaded), asks it for
// its version and prints one line. No concurrency runtime, no Dispatch queue.
@_silgen_name("dbus_get_version")
func dbusGetVersion(_ major: UnsafeMutablePointer<Int32>, _ minor: UnsafeMutablePointer<Int32>, _ micro: UnsafeMutablePointer<Int32>)

var major: Int32 = 0, minor: Int32 = 0, micro: Int32 = 0
dbusGetVersion(&major, &minor, &micro)
print("floor-sync (libdbus \(major).\(minor).\(micro))")
