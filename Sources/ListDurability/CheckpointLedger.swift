import ListStore

/// Per data source: the operation bytes logged since its last checkpoint (what a start-up would replay),
/// that checkpoint's size, and whether a checkpoint of it is being written. Decides when a data source
/// is due for a checkpoint: once what is logged since the last one has grown past half its size, and
/// at least `minimumLogBytes` (start-up replays at most that much, and the checkpoints written stay a
/// fraction of what is logged).
package struct CheckpointLedger {
    private struct Entry {
        /// `nil`: unknown (a failed write was undone) until the next checkpoint; not scheduled meanwhile.
        var logBytes: Int?
        var checkpointBytes: Int?
        var writing = false
        var isEmpty: Bool { logBytes == nil && checkpointBytes == nil && !writing }
    }

    private var entries: [String: Entry] = [:]
    /// The least log that makes a checkpoint due.
    package let minimumLogBytes: Int

    package init(minimumLogBytes: Int = 1 << 20) {
        self.minimumLogBytes = minimumLogBytes
    }

    /// The bytes logged since the data source's last checkpoint (`nil`: unknown or none).
    package func logBytes(of name: String) -> Int? { entries[name]?.logBytes }

    /// The size of the data source's last checkpoint.
    package func checkpointBytes(of name: String) -> Int? { entries[name]?.checkpointBytes }

    /// Remembers what the store held at start-up.
    package mutating func loaded(_ stored: StoredState) {
        for dataSource in stored.dataSources {
            update(dataSource.name) {
                $0.checkpointBytes = dataSource.checkpointBytes
                $0.logBytes = dataSource.tailBytes
            }
        }
    }

    /// Counts a record handed to the writer.
    package mutating func account(_ record: StoreRecord) {
        switch record {
        case .createDataSource(let name, _, _, let content), .checkpoint(let name, _, let content):
            update(name) {
                $0.checkpointBytes = content.count
                $0.logBytes = 0
            }
        case .dropDataSource(let name):
            update(name) {
                $0.checkpointBytes = nil
                $0.logBytes = nil
            }
        case .change(let name, _, _, _):
            update(name) { $0.logBytes = ($0.logBytes ?? 0) + record.replayBytes }
        default:
            break
        }
    }

    /// A failed write was undone: what the data source logged is unknown until its next checkpoint.
    package mutating func forgetLog(of name: String) {
        update(name) { $0.logBytes = nil }
    }

    /// The data sources due for a checkpoint, with the bytes logged that it covers; each is marked as
    /// being written until `finished`.
    package mutating func startDue() -> [(name: String, logged: Int)] {
        var due: [(name: String, logged: Int)] = []
        for (name, entry) in entries where !entry.writing {
            guard let logged = entry.logBytes, logged >= max(minimumLogBytes, (entry.checkpointBytes ?? 0) / 2) else { continue }
            entries[name]!.writing = true
            due.append((name, logged))
        }
        return due
    }

    /// The checkpoint started by `startDue` ended: written (`size`, covering `covered` bytes of the log,
    /// applied unless `current` is false: the data source was made again meanwhile), or not (`nil`).
    package mutating func finished(_ name: String, covered: Int, size: Int?, current: Bool = true) {
        update(name) { entry in
            entry.writing = false
            guard let size, current else { return }
            entry.checkpointBytes = size
            entry.logBytes = max(0, (entry.logBytes ?? 0) - covered)
        }
    }

    private mutating func update(_ name: String, _ change: (inout Entry) -> Void) {
        var entry = entries[name] ?? Entry()
        change(&entry)
        entries[name] = entry.isEmpty ? nil : entry
    }
}
