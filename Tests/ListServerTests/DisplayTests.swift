import DiffableCore
import Foundation
import ListClient
import ListWire
import TestSupport
import Testing

/// Display signals: the owner of a data source learns what its views will display (their dequeues)
/// and are about to (their prefetch), as the seeds' infinite scroll needs.
@Suite("Display signals", .serialized)
struct DisplayTests {
    /// A listview shows the top of a long list: the watcher hears which rows it will display and which
    /// it prefetches (the next screen); `listctl watch --display` prints the same.
    @Test func theOwnerHearsWhatAViewShowsAndPrefetches() throws {
        let daemon = try Daemon()
        _ = try daemon.request(["cmd": "apply", "dataSource": "long", "snapshot": ["sections": [["id": "s", "items": .array((0..<40).map { .string("row\($0)") })]]]]).result()
        let owner = try daemon.connect()
        #expect(try owner.request(["cmd": "watchDisplay", "dataSource": "long"]).result()["watching"] == true)

        let watch = Process()
        watch.executableURL = binaryDirectory.appendingPathComponent("listctl")
        watch.arguments = ["--socket", daemon.socketPath, "watch", "long", "--display", "--width", "0"]
        let output = makePipe()
        watch.standardOutput = output
        let printed = PipeCollector(output)
        try watch.start()
        defer { killAndWait(watch) }
        #expect(try eventually { printed.text.contains("watching long") })

        let run = try runListview(["--socket", daemon.socketPath, "long", "--once", "--width", "20", "--height", "5", "--view", "screen"])
        #expect(run.status == 0 && run.out.hasPrefix("row0\n"), "\(run)")
        var willDisplay: [String] = []
        var prefetch: [String] = []
        while willDisplay.count < 5 || prefetch.count < 5 {
            let event = try #require(try owner.readJSON(timeout: .seconds(20)))
            #expect(event["event"] == "display" && event["view"] == "screen" && event["dataSource"] == "long", "\(event)")
            willDisplay += (event["willDisplay"]?.arrayValue ?? []).compactMap(\.stringValue)
            prefetch += (event["prefetch"]?.arrayValue ?? []).compactMap(\.stringValue)
        }
        #expect(willDisplay == (0..<5).map { "row\($0)" })
        #expect(prefetch == (5..<10).map { "row\($0)" }, "the next screen")
        #expect(try eventually { printed.text.contains("view screen will display: row0, row1, row2, row3, row4") && printed.text.contains("view screen prefetches: row5") },
                "\(printed.text)")

        // Stopped: nothing more comes (the next reply is the ping's).
        #expect(try owner.request(["cmd": "watchDisplay", "dataSource": "long", "stop": true]).result()["watching"] == false)
        _ = try runListview(["--socket", daemon.socketPath, "long", "--once", "--width", "20", "--height", "5"])
        #expect(try owner.request(["cmd": "ping", "id": "after"])["id"] == "after")
        #expect(owner.events.isEmpty, "\(owner.events)")
    }

    /// A watch that starts while views show something hears what they show now first (as attach gives
    /// the snapshot): an owner that connects late still learns that the end is on screen.
    @Test func aLateWatcherHearsWhatIsOnScreenNow() throws {
        let daemon = try Daemon()
        _ = try daemon.request(["cmd": "apply", "dataSource": "long", "snapshot": ["sections": [["id": "s", "items": .array((0..<40).map { .string("row\($0)") })]]]]).result()
        let early = try daemon.connect()
        _ = try early.request(["cmd": "watchDisplay", "dataSource": "long"]).result()
        let view = Process()
        view.executableURL = binaryDirectory.appendingPathComponent("listview")
        view.arguments = ["--socket", daemon.socketPath, "long", "--follow", "--width", "20", "--height", "3", "--view", "open", "--scroll", "37"]
        let output = makePipe()
        view.standardOutput = output
        let printed = PipeCollector(output)
        try view.start()
        defer { killAndWait(view) }
        #expect(try eventually { printed.text.contains("row39") })
        let owner = try daemon.connect()
        _ = try owner.request(["cmd": "watchDisplay", "dataSource": "long"]).result()
        let event = try #require(try owner.readJSON(timeout: .seconds(20)))
        #expect(event["view"] == "open" && event["willDisplay"] == ["row37", "row38", "row39"] && event["prefetch"] == [], "\(event)")
        // The early watcher heard the dequeue when it happened, and not again for the late one.
        let heard = try #require(try early.readJSON(timeout: .seconds(20)))
        #expect(heard["willDisplay"] == ["row37", "row38", "row39"], "\(heard)")
        #expect(try early.request(["cmd": "ping", "id": "p"])["id"] == "p")
        #expect(early.events.isEmpty, "\(early.events)")
        // Stopping needs no right; a watcher that loses write access is no longer told (see LocalUsersTests for users).
        #expect(try owner.request(["cmd": "watchDisplay", "dataSource": "long", "stop": true]).result()["watching"] == false)
    }
}
