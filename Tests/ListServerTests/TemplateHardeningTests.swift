import DiffableCore
import Foundation
import ListClient
import ListWire
import Testing

/// The template attacks, against a real listd: refused at `register`, or failing only the cell they
/// render, while listd keeps answering everyone.
@Suite("Template limits against listd", .serialized)
struct TemplateHardeningTests {
    @Test func aTemplateNested2600DeepIsRefusedAndListdStaysUp() throws {
        let daemon = try Daemon()
        let connection = try daemon.connect()
        let deep = String(repeating: "{{#n}}", count: 2_600) + "x" + String(repeating: "{{/n}}", count: 2_600)
        let reply = try connection.request(["cmd": "register", "registration": "deep", "contentConfiguration": ["type": "cell", "text": .string(deep)]])
        #expect(reply.errorCode == "limit-exceeded")
        #expect(reply["error"]?["message"]?.stringValue?.contains("deep.contentConfiguration.text") == true, "\(reply)")
        // 500,000 tags (the quadratic compile): refused by size, at once.
        let many = String(repeating: "{{a}}", count: 500_000)
        let started = ContinuousClock.now
        let sized = try connection.request(["cmd": "register", "registration": "many", "contentConfiguration": ["type": "cell", "text": .string(many)]])
        print("register of a 2.5 MB template answered in \(ContinuousClock.now - started)")
        #expect(sized.errorCode == "limit-exceeded")
        #expect(try daemon.connect().request(["cmd": "ping"])["ok"] == true)
        #expect(daemon.process.isRunning)
        #expect(try connection.request(["cmd": "registrations"]).result()["registrations"] == [], "nothing was registered")
    }

    /// A data source with `bombs` items whose payload is 4,000 numbers, then one plain item; the bomb
    /// registration nests a section in itself over them.
    func setUp(_ daemon: Daemon, bombs: Int, fineFirst: Bool = false) throws -> LineConnection {
        let connection = try daemon.connect()
        let numbers = JSONValue.array((0..<4_000).map { .int($0) })
        #expect(try connection.request([
            "cmd": "register", "registration": "bomb", "contentConfiguration": ["type": "cell", "text": "{{#n}}{{#n}}{{.}}{{/n}}{{/n}}"],
        ])["ok"] == true)
        #expect(try connection.request(["cmd": "register", "registration": "plain", "contentConfiguration": ["type": "cell", "text": "{{title}}"]])["ok"] == true)
        var items: [JSONValue] = (0..<bombs).map { ["id": .string("bomb\($0)"), "data": ["kind": "bomb", "n": numbers]] }
        items.insert(["id": "fine", "data": ["title": "Fine"]], at: fineFirst ? 0 : items.count)
        #expect(try connection.request(["cmd": "apply", "dataSource": "d", "snapshot": ["sections": [["id": "S", "items": .array(items)]]]])["ok"] == true)
        #expect(try connection.request([
            "cmd": "setCellProvider", "dataSource": "d", "rules": [["match": ["field": "kind", "equals": "bomb"], "registration": "bomb"]],
            "default": "plain",
        ])["ok"] == true)
        #expect(try connection.request(["cmd": "attach", "dataSource": "d", "view": "v"])["ok"] == true)
        return connection
    }

    @Test func aCellOverTheRenderBudgetFailsAloneWithLimitExceeded() throws {
        let daemon = try Daemon()
        let connection = try setUp(daemon, bombs: 1)
        let started = ContinuousClock.now
        let cells = try connection.request(["cmd": "dequeue", "view": "v", "indexPaths": [[0, 0], [0, 1]]]).result()["cells"]?.arrayValue ?? []
        print("dequeue of one cell over the budget and one plain cell: \(ContinuousClock.now - started)")
        #expect(cells.count == 2)
        #expect(cells.first?["error"]?["code"] == "limit-exceeded", "\(cells)")
        #expect(cells.first?["error"]?["message"]?.stringValue?.contains("bomb.contentConfiguration.text") == true)
        #expect(cells.first?["content"] == nil)
        #expect(cells.last?["error"] == nil && cells.last?["content"]?["text"] == "Fine", "the other cell of the same dequeue is configured")
        // The failed cell was not kept: dequeuing it again fails again, the same way.
        let again = try connection.request(["cmd": "dequeue", "view": "v", "indexPaths": [[0, 0]]]).result()["cells"]?.arrayValue
        #expect(again?.first?["error"]?["code"] == "limit-exceeded")
        #expect(try connection.request(["cmd": "registrations"]).result()["registrations"]?.arrayValue.first?["displayed"] == 0)
    }

    /// Many cells over the budget in one dequeue: each stops at the cell's steps, and together they stop
    /// at the request's, so the event loop is free again soon; another connection's ping is answered.
    @Test func anotherConnectionIsAnsweredWhileCellsOverTheBudgetRender() throws {
        let bombs = 40
        let daemon = try Daemon()
        let connection = try setUp(daemon, bombs: bombs, fineFirst: true)
        let other = try daemon.connect()
        #expect(try other.request(["cmd": "ping"])["ok"] == true)
        let paths = JSONValue.array((0...bombs).map { [0, .int($0)] })
        let started = ContinuousClock.now
        try connection.send(["cmd": "dequeue", "view": "v", "indexPaths": paths])
        Thread.sleep(forTimeInterval: 0.005)
        let pinged = ContinuousClock.now
        try other.send(["cmd": "ping"])
        let pong = try other.readJSON(timeout: .seconds(10))
        let pingLatency = ContinuousClock.now - pinged
        let reply = try connection.readJSON(timeout: .seconds(30))
        let dequeued = ContinuousClock.now - started
        print("dequeue of \(bombs) cells over the budget: \(dequeued); a ping sent 5 ms after it answered in \(pingLatency)")
        #expect(pong?["ok"] == true, "the other connection is answered")
        let cells = reply?["result"]?["cells"]?.arrayValue ?? []
        #expect(cells.count == bombs + 1)
        #expect(cells.first?["content"]?["text"] == "Fine")
        #expect(cells.dropFirst().allSatisfy { $0["error"]?["code"] == "limit-exceeded" })
        let messages = cells.dropFirst().compactMap { $0["error"]?["message"]?.stringValue }
        #expect(messages.filter { $0.contains("100000 steps") || $0.contains("bytes") }.count >= 5, "the first bombs fail on their own budget")
        #expect(messages.last?.contains("ask for fewer cells") == true, "the last ones on the request's: \(messages.last ?? "")")
        #expect(daemon.process.isRunning)
    }
}
