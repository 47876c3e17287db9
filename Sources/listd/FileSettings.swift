import DiffableCore
import FileSafety
import ListAccess
import ListClient
import ListServer
import ListWire
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// The optional `--config` file: a JSON object (lines starting with `//` are comments; every key is in
/// `systemd/listd.conf.example`) with limits, the log level and plugins, e.g.
/// `{"maxLineBytes": 16777216, "logLevel": "info", "pluginDirectory": "/usr/local/lib/listd/plugins",
/// "plugins": ["/opt/card-plugin", {"name": "py", "command": ["/usr/bin/python3", "/opt/pycard.py"]}]}`.
///
/// Loading refuses, naming the file and the key: a key that is not a setting, a limit that is not a
/// positive integer, a log level that is not one of `Logger.Level`'s, a plugin directory that is not a
/// directory, a malformed plugin entry.
struct FileSettings {
    var values: [String: Int] = [:]
    var logLevel: String?
    var plugins: [SupervisedPluginSpec] = []
    var pluginDirectory: String?
    /// The PostgreSQL store's connection URI (read at start; `--postgres` and `--state-directory` win).
    var postgres: String?
    /// Access rules, in order (the first that matches a user and a data source decides).
    var accessRules: [AccessRule] = []
    var defaultAccess: AccessLevel?
    var trustedPluginUsers: Set<UInt32> = []
    var trustedPluginGroups: Set<UInt32> = []

    static let keys = [
        "maxLineBytes", "maxViewQueueBytes", "maxDataSources", "maxItemsPerDataSource", "maxBatchOperations",
        "maxIdentifierBytes", "maxConnections", "maxRegistrations", "maxPooledCells", "maxViewsPerConnection", "maxOwnExpansionViewsPerUser", "pluginDeadlineMilliseconds",
        "pluginStopGraceMilliseconds", "changeLogVersions", "changeLogBytes", "maxOutputBytes", "maxOutputBytesHard", "maxOutputBytesTotal",
        "partialLineTimeoutSeconds", "maxPartialLineBytesTotal", "maxPluginPendingRequests", "maxConnectionsPerUser",
        "maxDataSourcesPerUser", "maxItemsPerUser", "maxRegistrationsPerUser", "maxBytesPerUser", "maxDisplaySignalsPerViewPerSecond",
    ]
    /// The settings that are not positive integers.
    static let otherKeys = ["logLevel", "pluginDirectory", "plugins", "postgres", "access", "defaultAccess", "trustedPluginUsers", "trustedPluginGroups"]

    static func load(_ path: String?) throws -> FileSettings {
        guard let path else { return FileSettings() }
        guard let file = fopen(path, "r") else { throw SettingsError("cannot read \(path): \(String(cString: strerror(errno)))") }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = fread(&chunk, 1, chunk.count, file)
            if count <= 0 { break }
            bytes.append(contentsOf: chunk[0..<count])
        }
        let document: JSONValue
        let text = withoutCommentLines(bytes)
        do {
            document = try JSONParser.parse(text)
        } catch {
            let (line, column) = position(of: error.offset, in: text)
            throw SettingsError("\(path), line \(line), column \(column): not valid JSON: \(error.reason)")
        }
        guard case .object(let members) = document else { throw SettingsError("\(path): not a JSON object") }
        var settings = FileSettings()
        for (key, value) in members.sorted(by: { $0.key < $1.key }) {
            switch key {
            case "logLevel":
                guard case .string(let level) = value else { throw SettingsError("\(path): \"logLevel\" must be a string") }
                try validateLogLevel(level, setting: "\(path): \"logLevel\"")
                settings.logLevel = level
            case "pluginDirectory":
                guard case .string(let directory) = value else { throw SettingsError("\(path): \"pluginDirectory\" must be a string") }
                try validateDirectory(directory, setting: "\(path): \"pluginDirectory\"")
                settings.pluginDirectory = directory
            case "postgres":
                guard case .string(let uri) = value, !uri.isEmpty else { throw SettingsError("\(path): \"postgres\" must be a connection URI (a string)") }
                settings.postgres = uri
            case "plugins":
                guard case .array(let entries) = value else { throw SettingsError("\(path): \"plugins\" must be an array") }
                for entry in entries { settings.plugins.append(try plugin(entry, path: path)) }
            case "access":
                guard case .array(let rules) = value else { throw SettingsError("\(path): \"access\" must be an array of rules") }
                for (index, rule) in rules.enumerated() { settings.accessRules.append(try accessRule(rule, at: "\(path): \"access\"[\(index)]")) }
            case "defaultAccess":
                guard case .string(let name) = value, let level = AccessLevel(name: name), level <= .write else {
                    throw SettingsError("\(path): \"defaultAccess\" must be \"none\", \"read\" or \"write\"")
                }
                settings.defaultAccess = level
            case "trustedPluginUsers":
                settings.trustedPluginUsers = try users(value, at: "\(path): \"trustedPluginUsers\"")
            case "trustedPluginGroups":
                settings.trustedPluginGroups = try groups(value, at: "\(path): \"trustedPluginGroups\"")
            case _ where keys.contains(key):
                guard case .int(let number) = value, number > 0 else {
                    throw SettingsError("\(path): \"\(key)\" must be a positive integer, not \(String(decoding: value.jsonBytes, as: UTF8.self))")
                }
                settings.values[key] = number
            default:
                let known = keys + otherKeys
                let hint = Spelling.closest(to: key, in: known).map { "; did you mean \"\($0)\"?" } ?? ""
                throw SettingsError(
                    "\(path), line \(line(of: key, in: text)): unknown setting \"\(key)\"\(hint) (the settings are \(known.sorted().joined(separator: ", ")))")
            }
        }
        if let soft = settings.values["maxOutputBytes"], let hard = settings.values["maxOutputBytesHard"], soft > hard {
            throw SettingsError("\(path): \"maxOutputBytes\" (\(soft)) is above \"maxOutputBytesHard\" (\(hard))")
        }
        return settings
    }

    /// The log levels, as `--log-level` and `logLevel` spell them.
    static let logLevels = Logger.Level.allCases.map(\.rawValue)

    /// Refuses a log level that is not one of `logLevels`; `setting` names where it came from.
    /// `bytes` with every line whose first non-blank characters are `//` blanked out (its newline kept,
    /// so that positions in errors still count lines). Whole lines only: a JSON string cannot span lines,
    /// so `//` inside a value is never touched.
    /// The 1-based line and column (in characters) of a byte offset.
    static func position(of offset: Int, in bytes: [UInt8]) -> (line: Int, column: Int) {
        let before = bytes[..<min(offset, bytes.count)]
        let line = before.reduce(1) { $1 == UInt8(ascii: "\n") ? $0 + 1 : $0 }
        let lineStart = before.lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? 0
        return (line, String(decoding: bytes[lineStart..<min(offset, bytes.count)], as: UTF8.self).count + 1)
    }

    /// The line where the member `key` of the top-level object is written (1 when not found).
    static func line(of key: String, in bytes: [UInt8]) -> Int {
        let quoted = Array(JSONValue.string(key).jsonBytes)
        guard quoted.count <= bytes.count else { return 1 }
        for start in 0...(bytes.count - quoted.count) where bytes[start] == quoted[0] && Array(bytes[start..<start + quoted.count]) == quoted {
            return position(of: start, in: bytes).line
        }
        return 1
    }

    static func withoutCommentLines(_ bytes: [UInt8]) -> [UInt8] {
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count)
        var lineStart = 0
        while lineStart < bytes.count {
            let lineEnd = bytes[lineStart...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.count
            let firstContent = bytes[lineStart..<lineEnd].firstIndex { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") }
            let isComment = firstContent.map { $0 + 1 < lineEnd && bytes[$0] == UInt8(ascii: "/") && bytes[$0 + 1] == UInt8(ascii: "/") } ?? false
            if !isComment { result.append(contentsOf: bytes[lineStart..<lineEnd]) }
            if lineEnd < bytes.count { result.append(UInt8(ascii: "\n")) }
            lineStart = lineEnd + 1
        }
        return result
    }

    static func validateLogLevel(_ level: String, setting: String) throws {
        guard Logger.Level(rawValue: level) != nil else {
            throw SettingsError("\(setting) is \"\(level)\", not a log level (\(logLevels.joined(separator: ", ")))")
        }
    }

    /// Refuses a path that is not an existing directory; `setting` names where it came from.
    static func validateDirectory(_ directory: String, setting: String) throws {
        var status = stat()
        guard stat(directory, &status) == 0 else {
            throw SettingsError("\(setting): \"\(directory)\" is not a usable directory (\(String(cString: strerror(errno))))")
        }
        guard (status.st_mode & S_IFMT) == S_IFDIR else { throw SettingsError("\(setting): \"\(directory)\" is not a directory") }
    }

    /// A plugin entry: an executable's path, or `{"name"?, "command": [executable, arguments…], "provides"?: [type]}`.
    private static func plugin(_ entry: JSONValue, path: String) throws -> SupervisedPluginSpec {
        if case .string(let executable) = entry, executable.hasPrefix("/") { return SupervisedPluginSpec(executable: executable) }
        if case .object(let members) = entry, case .array(let command)? = members["command"],
            let parts = Optional(command.compactMap(\.stringValue)), parts.count == command.count,
            let executable = parts.first, executable.hasPrefix("/"),
            members.keys.allSatisfy({ ["name", "command", "provides"].contains($0) }),
            let provides = Self.types(members["provides"])
        {
            return SupervisedPluginSpec(
                name: members["name"]?.stringValue, executable: executable, arguments: Array(parts.dropFirst()), provides: provides)
        }
        throw SettingsError(
            "\(path): a \"plugins\" entry is an absolute executable path or {\"name\", \"command\": [\"/absolute/path\", arguments…], \"provides\"?: [\"type\", …]}")
    }

    /// A plugin entry's `provides`: absent (none named), or an array of non-empty strings; `nil` when malformed.
    private static func types(_ value: JSONValue?) -> [String]? {
        guard let value, !value.isNull else { return [] }
        guard case .array(let elements) = value else { return nil }
        let types = elements.compactMap(\.stringValue)
        return types.count == elements.count && !types.contains(where: \.isEmpty) ? types : nil
    }

    /// An access rule: `{"dataSources": "tasks-*", "users": ["alice", 1001, "*"], "groups": ["staff"], "access": "write"}`.
    private static func accessRule(_ value: JSONValue, at setting: String) throws -> AccessRule {
        guard case .object(let members) = value else { throw SettingsError("\(setting) must be an object") }
        for key in members.keys where !["dataSources", "users", "groups", "access"].contains(key) {
            throw SettingsError("\(setting): unknown member \"\(key)\" (a rule has dataSources, users, groups and access)")
        }
        guard case .string(let pattern)? = members["dataSources"], !pattern.isEmpty else {
            throw SettingsError("\(setting): \"dataSources\" must be a name or a glob pattern such as \"tasks-*\"")
        }
        guard case .string(let name)? = members["access"], let level = AccessLevel(name: name) else {
            throw SettingsError("\(setting): \"access\" must be \"none\", \"read\", \"write\" or \"admin\"")
        }
        var everyone = false
        var uids: Set<UInt32> = []
        if let list = members["users"] {
            guard case .array(let entries) = list else { throw SettingsError("\(setting).users must be an array of user names and uids") }
            everyone = entries.contains(.string("*"))
            uids = try users(.array(entries.filter { $0 != .string("*") }), at: "\(setting).users")
        }
        let gids = try members["groups"].map { try groups($0, at: "\(setting).groups") } ?? []
        if !everyone && uids.isEmpty && gids.isEmpty {
            throw SettingsError("\(setting): a rule names \"users\" (or \"*\" for everyone) or \"groups\"")
        }
        return AccessRule(dataSources: GlobPattern(pattern), users: uids, everyone: everyone, groups: gids, level: level)
    }

    /// Users by name or uid; a name the user database does not know is an error.
    private static func users(_ value: JSONValue, at setting: String) throws -> Set<UInt32> {
        guard case .array(let wanted) = value else { throw SettingsError("\(setting) must be an array of user names and uids") }
        var uids: Set<UInt32> = []
        for entry in wanted {
            switch entry {
            case .string(let name):
                guard let user = UserDirectory.user(named: name) else { throw SettingsError("\(setting): there is no user \"\(name)\"") }
                uids.insert(user.uid)
            case .int(let number):
                guard let uid = UInt32(exactly: number) else { throw SettingsError("\(setting): \(number) is not a uid") }
                uids.insert(uid)
            default:
                throw SettingsError("\(setting) must be an array of user names and uids")
            }
        }
        return uids
    }

    /// Groups by name or gid; a name the group database does not know is an error.
    private static func groups(_ value: JSONValue, at setting: String) throws -> Set<UInt32> {
        guard case .array(let entries) = value else { throw SettingsError("\(setting) must be an array of group names and gids") }
        var gids: Set<UInt32> = []
        for entry in entries {
            switch entry {
            case .string(let name):
                guard let gid = UserDirectory.group(named: name) else { throw SettingsError("\(setting): there is no group \"\(name)\"") }
                gids.insert(gid)
            case .int(let number):
                guard let gid = UInt32(exactly: number) else { throw SettingsError("\(setting): \(number) is not a gid") }
                gids.insert(gid)
            default:
                throw SettingsError("\(setting) must be an array of group names and gids")
            }
        }
        return gids
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
        if let value = values["maxViewsPerConnection"] { configuration.maximumViewsPerConnection = value }
        if let value = values["maxOwnExpansionViewsPerUser"] { configuration.maximumOwnExpansionViewsPerUser = value }
        if let value = values["pluginDeadlineMilliseconds"] { configuration.pluginDeadlineMilliseconds = value }
        if let value = values["pluginStopGraceMilliseconds"] { configuration.pluginStopGraceMilliseconds = value }
        if let value = values["changeLogVersions"] { configuration.changeLogVersions = value }
        if let value = values["changeLogBytes"] { configuration.changeLogBytes = value }
        if let value = values["maxOutputBytes"] { configuration.maximumOutputBytes = value }
        if let value = values["maxOutputBytesHard"] { configuration.maximumOutputBytesHard = value }
        if let value = values["maxOutputBytesTotal"] { configuration.maximumOutputBytesTotal = value }
        if let value = values["partialLineTimeoutSeconds"] { configuration.partialLineTimeoutSeconds = value }
        if let value = values["maxPartialLineBytesTotal"] { configuration.maximumPartialLineBytesTotal = value }
        if let value = values["maxPluginPendingRequests"] { configuration.maximumPluginPendingRequests = value }
        if let value = values["maxConnectionsPerUser"] { configuration.maximumConnectionsPerUser = value }
        if let value = values["maxDataSourcesPerUser"] { configuration.quota.maximumDataSources = value }
        if let value = values["maxItemsPerUser"] { configuration.quota.maximumItems = value }
        if let value = values["maxBytesPerUser"] { configuration.quota.maximumBytes = value }
        if let value = values["maxRegistrationsPerUser"] { configuration.quota.maximumRegistrations = value }
        if let value = values["maxDisplaySignalsPerViewPerSecond"] { configuration.maximumDisplaySignalsPerViewPerSecond = value }
        configuration.access.rules = accessRules
        if let defaultAccess { configuration.access.defaultLevel = defaultAccess }
        configuration.access.trustedPluginUsers = trustedPluginUsers
        configuration.access.trustedPluginGroups = trustedPluginGroups
        configuration.plugins += plugins
    }
}

struct SettingsError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
