import BlueZKit

/// `blectl scan`: JSON Lines, one per device seen during this scan (or per update with `--updates`).
enum ScanCommand {
    static func run(_ options: ScanOptions, _ context: CommandContext) async throws {
        guard options.timeout > .zero else { return }
        let filter = DiscoveryFilter(uuids: options.services, rssiMin: options.rssiMin, names: options.names,
                                     duplicateData: options.updates)
        let printer = context.printer
        let adapterName = context.adapter.name
        let scanLength = options.timeout
        try await context.adapter.withDiscovery(filter: filter, setupTimeout: max(scanLength, .seconds(2))) { stream in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    var reported = Set<BluetoothAddress>()
                    for try await batch in stream {
                        var lines = [String]()
                        lines.reserveCapacity(batch.count)
                        for advertisement in batch {
                            guard options.updates || reported.insert(advertisement.address).inserted else { continue }
                            switch printer.format {
                            case .json: lines.append(Records.advertisement(advertisement, adapter: adapterName).serialized())
                            case .text: lines.append(Records.advertisementText(advertisement))
                            }
                        }
                        try await printer.results(lines)
                    }
                }
                group.addTask { try await Task.sleep(for: scanLength) }
                // Between lines, a reader that has gone ends the scan too.
                group.addTask { try await Printer.waitUntilStdoutClosed() }
                // Reaching the scan length is success; an error from the stream (adapter
                // powered off, bluetoothd gone) or a closed stdout ends the scan after what
                // was printed.
                try await group.next()
                group.cancelAll()
            }
        }
    }
}
