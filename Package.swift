// swift-tools-version:6.0
import PackageDescription

// Layers, bottom to top: CDBus (libdbus headers) -> DBusKit (D-Bus, knows nothing of
// Bluetooth) -> BlueZKit (org.bluez model, async operations) -> BlectlCLI (arguments,
// output, exit status) -> blectl (main.swift).
let package = Package(
    name: "blectl",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "blectl", targets: ["blectl"]),
        .library(name: "BlueZKit", targets: ["BlueZKit"]),
        .library(name: "DBusKit", targets: ["DBusKit"]),
    ],
    targets: [
        .systemLibrary(
            name: "CDBus",
            pkgConfig: "dbus-1",
            providers: [.apt(["libdbus-1-dev"])]
        ),
        .target(name: "DBusKit", dependencies: ["CDBus"]),
        // AES-128-CCM from OpenSSL's libcrypto through dlopen, when an encrypted BTHome frame is
        // first decrypted (Sources/CCrypto says why it is not linked).
        .target(name: "CCrypto"),
        .target(name: "BlueZKit", dependencies: ["DBusKit", "CCrypto"]),
        // libmosquitto's header, and its functions through dlopen when --mqtt is first used
        // (Sources/CMosquitto says why it is not linked).
        .target(name: "CMosquitto"),
        .target(name: "BlectlCLI", dependencies: ["BlueZKit", "DBusKit", "CMosquitto"]),
        // Gives the Swift runtime the process's arguments as glibc hands them to constructors,
        // so that the static runtime's /proc/self/maps scan is not linked (its file says why).
        .target(name: "CProcessArguments"),
        .executableTarget(name: "blectl", dependencies: ["BlectlCLI", "CProcessArguments"]),
        // The README's library examples (built with everything else, so CI builds them).
        .executableTarget(name: "scan-notify", dependencies: ["BlueZKit"], path: "Examples/ScanAndNotify"),
        .executableTarget(name: "battery-sweep", dependencies: ["BlueZKit"], path: "Examples/BatterySweep"),
        .executableTarget(name: "battery-peripheral", dependencies: ["BlueZKit"], path: "Examples/BatteryPeripheral"),

        // Test support: starts a private dbus-daemon with the simulated BlueZ (sim/).
        .target(name: "SimulatorHarness", path: "Tests/SimulatorHarness"),
        .testTarget(name: "DBusKitTests", dependencies: ["DBusKit", "SimulatorHarness"]),
        .testTarget(name: "BlueZKitTests", dependencies: ["BlueZKit", "DBusKit", "SimulatorHarness"]),
        .testTarget(name: "BlectlCLITests", dependencies: ["BlectlCLI", "BlueZKit", "DBusKit", "SimulatorHarness"]),
        .testTarget(name: "EndToEndTests", dependencies: ["SimulatorHarness"]),
    ]
)
