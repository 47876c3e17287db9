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

/// Prints a line on stderr (stdout is free for the caller).
func log(_ message: String) {
    var bytes = Array("home-owner: \(message)\n".utf8)
    _ = bytes.withUnsafeMutableBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
}

let arguments = CommandLine.arguments
let limit = arguments.firstIndex(of: "--limit").flatMap { $0 + 1 < arguments.count ? Int(arguments[$0 + 1]) : nil } ?? 60
let socketPath = ListPlugin.defaultSocketPath()

/// Watches and appends until the connection ends; returns to reconnect.
func own(_ connection: LineConnection) throws {
    guard try connection.request(["cmd": "watchDisplay", "dataSource": "home"])["ok"] == true else {
        throw ClientError("listd refused watchDisplay on home")
    }
    log("watching home on \(socketPath)")
    while true {
        // Events that came while a request of ours waited for its reply, in order (more may come meanwhile).
        while !connection.events.isEmpty { try consider(connection.events.removeFirst(), connection) }
        guard let event = try connection.readJSON(timeout: .seconds(365 * 24 * 3600)) else { return }
        try consider(event, connection)
    }
}

/// When a view will display or prefetch the last company, appends the seed's companies again (new ids).
func consider(_ event: JSONValue, _ connection: LineConnection) throws {
    guard event["event"] == "display" else { return }
    let shown = ((event["willDisplay"]?.arrayValue ?? []) + (event["prefetch"]?.arrayValue ?? [])).compactMap(\.stringValue)
    guard shown.contains(where: { $0.hasPrefix("company-") }) else { return }
    let snapshot = try connection.request(["cmd": "snapshot", "dataSource": "home", "section": "company"])
    let ids = (snapshot["result"]?["sections"]?.arrayValue.first?["items"]?.arrayValue ?? []).compactMap { $0["id"]?.stringValue ?? $0.stringValue }
    guard let last = ids.last, shown.contains(last), ids.count < limit else { return }
    // The seed's two companies again, under new identifiers.
    let batch: [JSONValue] = [
        ["id": .string("company-\(ids.count + 1)"), "data": ["companyName": "닥프렌즈 병원", "addrRoad": "서울 특별시", "introPath": ""]],
        ["id": .string("company-\(ids.count + 2)"), "data": ["companyName": "닥프렌즈 한의원", "addrRoad": "부산 광역시", "introPath": ""]],
    ]
    let reply = try connection.request([
        "cmd": "appendItems", "dataSource": "home", "toSection": "company", "items": .array(batch), "animatingDifferences": false,
    ])
    if reply["ok"] == true { log("appended companies \(ids.count + 1)–\(ids.count + 2)") } else { log("append refused: \(reply)") }
}

var delay = Duration.milliseconds(100)
while true {
    do {
        try own(try LineConnection(path: socketPath))
        delay = .milliseconds(100)
    } catch {
        log("\(error)")
    }
    usleep(UInt32(delay / .microseconds(1)))
    delay = min(delay * 2, .seconds(1))
}
