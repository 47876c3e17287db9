// The demo's data owner: the seed Home screen's infinite company row. It watches what views of `home`
// display (`watchDisplay`) and, when one is about to show the last company, appends another batch of
// companies without animation, as the seed's `appendCompany()` does (`apply(_:to:animatingDifferences:
// false)`); up to `--limit` companies. scripts/demo runs it beside listd.
//
//     swift run home-owner --socket $LISTD_SOCKET [--limit 60]
import DiffableCore
import ListClient
import ListPluginKit
import ListWire

#if canImport(Glibc)
    import Glibc
#endif

/// The owner of the demo's `home`: its connection, and how many companies it lets the row grow to.
struct HomeOwner {
    let socketPath: String
    let limit: Int

    /// The seed's two companies, as the items of one batch starting at number `first`.
    static func batch(startingAt first: Int) -> JSONValue {
        let companies: [(name: String, road: String)] = [("닥프렌즈 병원", "서울 특별시"), ("닥프렌즈 한의원", "부산 광역시")]
        var items: [JSONValue] = []
        for (offset, company) in companies.enumerated() {
            let data = JSONValue.object(["companyName": .string(company.name), "addrRoad": .string(company.road), "introPath": .string("")])
            items.append(.object(["id": .string("company-\(first + offset)"), "data": data]))
        }
        return .array(items)
    }

    /// Watches and appends until the connection ends.
    func own(_ connection: LineConnection) throws {
        let watching = try connection.request(.object(["cmd": .string("watchDisplay"), "dataSource": .string("home")]))
        guard watching["ok"] == .bool(true) else { throw ClientError("listd refused watchDisplay on home: \(watching)") }
        log("watching home on \(socketPath)")
        while true {
            // Events that came while a request of ours waited for its reply, in order (more may come meanwhile).
            while !connection.events.isEmpty {
                let event = connection.events.removeFirst()
                try consider(event, connection)
            }
            guard let event = try connection.readJSON(timeout: .seconds(365 * 24 * 3600)) else { return }
            try consider(event, connection)
        }
    }

    /// When a view will display or prefetch the last company, appends the seed's companies again (new ids).
    func consider(_ event: JSONValue, _ connection: LineConnection) throws {
        guard event["event"] == .string("display") else { return }
        var shown: [String] = []
        for key in ["willDisplay", "prefetch"] {
            for value in event[key]?.arrayValue ?? [] {
                if let id = value.stringValue { shown.append(id) }
            }
        }
        guard shown.contains(where: { $0.hasPrefix("company-") }) else { return }
        let snapshot = try connection.request(
            .object(["cmd": .string("snapshot"), "dataSource": .string("home"), "section": .string("company")]))
        var ids: [String] = []
        for item in snapshot["result"]?["sections"]?.arrayValue.first?["items"]?.arrayValue ?? [] {
            if let id = item["id"]?.stringValue ?? item.stringValue { ids.append(id) }
        }
        guard let last = ids.last, shown.contains(last), ids.count < limit else { return }
        let reply = try connection.request(
            .object([
                "cmd": .string("appendItems"), "dataSource": .string("home"), "toSection": .string("company"),
                "items": Self.batch(startingAt: ids.count + 1), "animatingDifferences": .bool(false),
            ]))
        if reply["ok"] == .bool(true) {
            log("appended companies \(ids.count + 1)–\(ids.count + 2)")
        } else {
            log("append refused: \(reply)")
        }
    }

    /// Owns `home` for as long as the process runs, reconnecting with a growing pause (up to 1 s).
    func run() -> Never {
        var pause = Duration.milliseconds(100)
        while true {
            do {
                try own(try LineConnection(path: socketPath))
                pause = .milliseconds(100)
            } catch {
                log("\(error)")
            }
            usleep(UInt32(pause / .microseconds(1)))
            if pause < .seconds(1) { pause = pause * 2 }
        }
    }
}

/// Prints a line on stderr (stdout is free for the caller).
func log(_ message: String) {
    var bytes = Array("home-owner: \(message)\n".utf8)
    _ = bytes.withUnsafeMutableBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
}

/// `--limit N` from the command line, else 60.
func limitArgument() -> Int {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: "--limit"), index + 1 < arguments.count, let limit = Int(arguments[index + 1]) else { return 60 }
    return limit
}

HomeOwner(socketPath: ListPlugin.defaultSocketPath(), limit: limitArgument()).run()
