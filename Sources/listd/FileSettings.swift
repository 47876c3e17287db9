import DiffableCore
import ListServer
import ListWire

#if canImport(Glibc)
    import Glibc
#endif

/// The optional `--config` file: a JSON object with limits and the log level, e.g.
/// `{"maxLineBytes": 16777216, "maxViewQueueBytes": 33554432, "logLevel": "info"}`.
struct FileSettings {
    var values: [String: Int] = [:]
    var logLevel: String?

    static let keys = [
        "maxLineBytes", "maxViewQueueBytes", "maxDataSources", "maxItemsPerDataSource", "maxBatchOperations",
        "maxIdentifierBytes", "maxConnections", "maxRegistrations", "maxPooledCells", "pluginDeadlineMilliseconds",
    ]

    static func load(_ path: String?) throws -> FileSettings {
        guard let path else { return FileSettings() }
        guard let file = fopen(path, "r") else { throw SettingsError("cannot read \(path)") }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = fread(&chunk, 1, chunk.count, file)
            if count <= 0 { break }
            bytes.append(contentsOf: chunk[0..<count])
        }
        guard case .object(let members) = try JSONParser.parse(bytes) else { throw SettingsError("\(path): not a JSON object") }
        var settings = FileSettings()
        for (key, value) in members {
            if key == "logLevel", case .string(let level) = value {
                settings.logLevel = level
            } else if keys.contains(key), case .int(let number) = value, number > 0 {
                settings.values[key] = number
            } else {
                throw SettingsError("\(path): unknown or invalid setting \"\(key)\"")
            }
        }
        return settings
    }

    func apply(to configuration: inout ServerConfiguration) {
        if let value = values["maxLineBytes"] { configuration.maximumLineBytes = value }
        if let value = values["maxViewQueueBytes"] { configuration.maximumViewQueueBytes = value }
        if let value = values["maxDataSources"] { configuration.maximumDataSources = value }
        if let value = values["maxItemsPerDataSource"] { configuration.maximumItemsPerDataSource = value }
        if let value = values["maxBatchOperations"] { configuration.maximumBatchOperations = value }
        if let value = values["maxIdentifierBytes"] { configuration.maximumIdentifierBytes = value }
        if let value = values["maxConnections"] { configuration.maximumConnections = value }
        if let value = values["maxRegistrations"] { configuration.maximumRegistrations = value }
        if let value = values["maxPooledCells"] { configuration.maximumPooledCells = value }
        if let value = values["pluginDeadlineMilliseconds"] { configuration.pluginDeadlineMilliseconds = value }
    }
}

struct SettingsError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
