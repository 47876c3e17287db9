import DiffableCore
import ListClient
import ListWire

#if canImport(Glibc)
    import Glibc
#endif

/// One cell listd asks a plugin to configure.
public struct PluginCell: Sendable {
    /// The cell's identifier (echoed in the answer by the kit).
    public var cell: String
    /// The registration that asked, and the content type (without `plugin:`).
    public var registration: String
    public var type: String
    public var indexPath: IndexPath
    /// The item and its payload.
    public var item: String
    public var data: JSONValue
    /// The cell's state (`selected`, `highlighted`, …, custom keys).
    public var state: JSONValue
    /// The registration's other content properties, rendered for this item.
    public var properties: JSONValue
}

/// What a plugin answers for one cell: content (any JSON object; its `type` is set by listd), and
/// optionally a background and accessories that replace the registration's.
public struct PluginContent: Sendable {
    public var content: [String: JSONValue]
    public var background: JSONValue?
    public var accessories: JSONValue?

    public init(_ content: [String: JSONValue], background: JSONValue? = nil, accessories: JSONValue? = nil) {
        self.content = content
        self.background = background
        self.accessories = accessories
    }
}

/// A plugin cell provider in a few lines:
///
/// ```swift
/// try ListPlugin(name: "emoji", provides: ["emoji"]).run { cell in
///     PluginContent(["text": cell.data["text"] ?? "?", "font": "largeTitle", "alignment": "center"])
/// }
/// ```
///
/// `run` connects to listd's socket (`--socket`, else `$LISTD_SOCKET`), says hello as a plugin, answers
/// every configure request (a batch of cells, answered in one `configured` line), and reconnects with a
/// growing delay (up to `maximumBackoff`) whenever listd goes away; a plugin listd started itself exits
/// instead once that listd is gone. Throwing from the handler answers that cell with an error.
public struct ListPlugin: Sendable {
    public var name: String
    public var provides: [String]
    public var socketPath: String
    public var maximumBackoff: Duration = .seconds(5)
    /// Stop instead of reconnecting when the connection ends (for tests and one-shot runs).
    public var reconnects = true

    public init(name: String, provides: [String], socketPath: String? = nil) {
        self.name = name
        self.provides = provides
        self.socketPath = socketPath ?? Self.defaultSocketPath()
    }

    /// The socket: `--socket PATH` on the command line, else where listctl would find it (`SocketPath`).
    public static func defaultSocketPath() -> String {
        let arguments = CommandLine.arguments
        if let index = arguments.firstIndex(of: "--socket"), index + 1 < arguments.count { return arguments[index + 1] }
        return SocketPath.forClient()
    }

    /// Serves configure requests until the process ends (or, without `reconnects`, until the connection does).
    public func run(_ configure: (PluginCell) throws -> PluginContent) throws {
        var delay = Duration.milliseconds(100)
        while true {
            do {
                try serve(configure)
                delay = .milliseconds(100)
            } catch let error as PluginError {
                throw error  // refused by listd: reconnecting would not help
            } catch {
                log("connection to \(socketPath) ended: \(error)")
            }
            guard reconnects else { return }
            if supervisorIsGone {
                log("listd, which started this plugin, is gone: exiting")
                return
            }
            log("reconnecting in \(delay)")
            sleepFor(delay)
            // Doubled without overflow, whatever maximumBackoff is.
            delay = delay < maximumBackoff / 2 ? delay * 2 : maximumBackoff
        }
    }

    private func serve(_ configure: (PluginCell) throws -> PluginContent) throws {
        let connection = try LineConnection(path: socketPath)
        let hello = try connection.request([
            "cmd": "hello", "role": "plugin", "name": .string(name), "provides": .array(provides.map { .string($0) }), "protocol": 1,
        ])
        guard hello["ok"] == true else {
            throw PluginError(message: "listd refused the plugin: \(hello["error"]?["message"]?.stringValue ?? "\(hello)")")
        }
        log("serving \(provides.joined(separator: ", ")) on \(socketPath)")
        while let message = try connection.readJSON(timeout: .seconds(365 * 24 * 3600)) {
            guard message["event"] == "configure", case .int(let request)? = message["request"] else { continue }
            let cells = message["cells"]?.arrayValue ?? []
            // The answer is written as it is made: no intermediate JSON values for the whole batch.
            var writer = JSONWriter(capacity: 128 * cells.count + 64)
            writer.beginObject()
            writer.key("cmd")
            writer.string("configured")
            writer.key("request")
            writer.int(request)
            writer.key("cells")
            writer.beginArray()
            for cell in cells { answer(cell, configure, to: &writer) }
            writer.endArray()
            writer.endObject()
            try connection.send(bytes: writer.bytes + [0x0A])
        }
    }

    private func answer(_ value: JSONValue, _ configure: (PluginCell) throws -> PluginContent, to writer: inout JSONWriter) {
        let id = value["cell"]?.stringValue ?? ""
        let path = value["indexPath"]?.arrayValue ?? []
        let cell = PluginCell(
            cell: id, registration: value["registration"]?.stringValue ?? "", type: value["type"]?.stringValue ?? "",
            indexPath: IndexPath(section: path.first?.intValue ?? 0, item: path.last?.intValue ?? 0),
            item: value["item"]?.stringValue ?? "", data: value["data"] ?? .null, state: value["state"] ?? [:],
            properties: value["properties"] ?? [:])
        writer.beginObject()
        writer.key("cell")
        writer.string(id)
        do {
            let result = try configure(cell)
            writer.key("content")
            writer.value(.object(result.content))
            if let background = result.background {
                writer.key("background")
                writer.value(background)
            }
            if let accessories = result.accessories {
                writer.key("accessories")
                writer.value(accessories)
            }
        } catch {
            writer.key("error")
            writer.value(["message": .string("\(error)")])
        }
        writer.endObject()
    }

    /// Started by listd (`LISTD_SUPERVISOR_PID`) and that listd has exited (this process was re-parented).
    private var supervisorIsGone: Bool {
        guard let value = getenv("LISTD_SUPERVISOR_PID"), let pid = Int32(String(cString: value)) else { return false }
        return getppid() != pid
    }

    private func log(_ message: String) {
        var bytes = Array("\(name): \(message)\n".utf8)
        _ = bytes.withUnsafeMutableBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
    }

    private func sleepFor(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
    }
}

/// listd refused the plugin (a type another plugin provides, a bad hello).
public struct PluginError: Error, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}
