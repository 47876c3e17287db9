import DiffableCore
import ListServer
import ListWire

#if canImport(Glibc)
    import Glibc
#endif

/// The optional `--config` file: a JSON object with limits, the log level and plugins, e.g.
/// `{"maxLineBytes": 16777216, "logLevel": "info", "pluginDirectory": "/usr/local/lib/listd/plugins",
/// "plugins": ["/opt/card-plugin", {"name": "py", "command": ["/usr/bin/python3", "/opt/pycard.py"]}]}`.
struct FileSettings {
    var values: [String: Int] = [:]
    var logLevel: String?
    var plugins: [SupervisedPluginSpec] = []
    var pluginDirectory: String?

    static let keys = [
        "maxLineBytes", "maxViewQueueBytes", "maxDataSources", "maxItemsPerDataSource", "maxBatchOperations",
        "maxIdentifierBytes", "maxConnections", "maxRegistrations", "maxPooledCells", "pluginDeadlineMilliseconds",
        "pluginStopGraceMilliseconds", "changeLogVersions", "changeLogBytes", "maxOutputBytes", "maxOutputBytesHard",
        "partialLineTimeoutSeconds", "maxPartialLineBytesTotal", "maxPluginPendingRequests",
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
            } else if key == "pluginDirectory", case .string(let directory) = value {
                settings.pluginDirectory = directory
            } else if key == "plugins", case .array(let entries) = value {
                for entry in entries { settings.plugins.append(try plugin(entry, path: path)) }
            } else if keys.contains(key), case .int(let number) = value, number > 0 {
                settings.values[key] = number
            } else {
                throw SettingsError("\(path): unknown or invalid setting \"\(key)\"")
            }
        }
        return settings
    }

    /// A plugin entry: an executable's path, or `{"name"?, "command": [executable, arguments…]}`.
    private static func plugin(_ entry: JSONValue, path: String) throws -> SupervisedPluginSpec {
        if case .string(let executable) = entry, executable.hasPrefix("/") { return SupervisedPluginSpec(executable: executable) }
        if case .object(let members) = entry, case .array(let command)? = members["command"],
            let parts = Optional(command.compactMap(\.stringValue)), parts.count == command.count,
            let executable = parts.first, executable.hasPrefix("/"),
            members.keys.allSatisfy({ $0 == "name" || $0 == "command" })
        {
            return SupervisedPluginSpec(name: members["name"]?.stringValue, executable: executable, arguments: Array(parts.dropFirst()))
        }
        throw SettingsError(
            "\(path): a \"plugins\" entry is an absolute executable path or {\"name\", \"command\": [\"/absolute/path\", arguments…]}")
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
        if let value = values["pluginStopGraceMilliseconds"] { configuration.pluginStopGraceMilliseconds = value }
        if let value = values["changeLogVersions"] { configuration.changeLogVersions = value }
        if let value = values["changeLogBytes"] { configuration.changeLogBytes = value }
        if let value = values["maxOutputBytes"] { configuration.maximumOutputBytes = value }
        if let value = values["maxOutputBytesHard"] { configuration.maximumOutputBytesHard = value }
        if let value = values["partialLineTimeoutSeconds"] { configuration.partialLineTimeoutSeconds = value }
        if let value = values["maxPartialLineBytesTotal"] { configuration.maximumPartialLineBytesTotal = value }
        if let value = values["maxPluginPendingRequests"] { configuration.maximumPluginPendingRequests = value }
        configuration.plugins += plugins
    }
}

struct SettingsError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
