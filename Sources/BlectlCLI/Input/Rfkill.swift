#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The kernel's rfkill switches for Bluetooth, read from sysfs
/// (`/sys/class/rfkill/rfkillN/{type,name,soft,hard}`; Linux
/// Documentation/ABI/stable/sysfs-class-rfkill). A soft block is the one
/// `rfkill block/unblock` sets; a hard block is a physical switch or the firmware.
struct RfkillSwitch: Sendable, Equatable {
    /// `rfkill0`.
    var id: String
    /// The device it switches: `hci0` for a Bluetooth adapter.
    var name: String
    var softBlocked: Bool
    var hardBlocked: Bool

    /// Every switch of type `bluetooth` under `root` (default `/sys/class/rfkill`), by id;
    /// empty when the directory is missing (no rfkill in the kernel, or a container).
    static func bluetooth(root: String = "/sys/class/rfkill") -> [RfkillSwitch] {
        guard let directory = opendir(root) else { return [] }
        defer { closedir(directory) }
        var found: [RfkillSwitch] = []
        while let entry = readdir(directory) {
            let id = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard id.hasPrefix("rfkill") else { continue }
            let base = root + "/" + id + "/"
            guard contents(base + "type") == "bluetooth" else { continue }
            found.append(RfkillSwitch(id: id, name: contents(base + "name") ?? "", softBlocked: contents(base + "soft") == "1",
                                      hardBlocked: contents(base + "hard") == "1"))
        }
        return found.sorted { $0.id.count != $1.id.count ? $0.id.count < $1.id.count : $0.id < $1.id }
    }

    /// A small sysfs file's content without its final newline; nil when unreadable.
    private static func contents(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 256)
        let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        guard count >= 0 else { return nil }
        var text = String(decoding: buffer.prefix(count), as: UTF8.self)
        while text.last == "\n" { text.removeLast() }
        return text
    }
}
