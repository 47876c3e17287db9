import DiffableCore
import Foundation
import ListClient
import ListWire
import TestSupport
import Testing

@Suite("ListPluginKit and the emoji plugin", .serialized)
struct PluginKitTests {
    func startEmojiPlugin(socket: String) throws -> Process {
        let process = Process()
        process.executableURL = binaryDirectory.appendingPathComponent("emoji-plugin")
        process.arguments = ["--socket", socket]
        var environment = ProcessInfo.processInfo.environment
        environment["SWIFT_BACKTRACE"] = "enable=no"
        process.environment = environment
        process.standardError = FileHandle.nullDevice
        try process.start()
        return process
    }

    func emojiSetup(_ daemon: Daemon) throws -> LineConnection {
        let connection = try daemon.connect()
        #expect(try connection.request(["cmd": "register", "registration": "big", "contentConfiguration": ["type": "plugin:emoji"]])["ok"] == true)
        #expect(try connection.request(["cmd": "apply", "dataSource": "e", "snapshot": ["sections": [["id": "S", "items": [["id": "happy", "data": ["text": "😀"]]]]]]])["ok"] == true)
        #expect(try connection.request(["cmd": "setCellProvider", "dataSource": "e", "rules": [], "default": "big"])["ok"] == true)
        #expect(try connection.request(["cmd": "attach", "dataSource": "e", "view": "v"])["ok"] == true)
        return connection
    }

    @Test func theEmojiPluginConfiguresAndReconnects() throws {
        var daemon = try Daemon()
        let plugin = try startEmojiPlugin(socket: daemon.socketPath)
        defer {
            kill(plugin.processIdentifier, SIGKILL)
            plugin.waitUntilExit(within: .seconds(60))
        }
        let first = daemon
        #expect(try eventually { try first.request(["cmd": "stats"]).result()["plugins"]!.arrayValue.count == 1 })
        var connection = try emojiSetup(daemon)
        var cell = try connection.request(["cmd": "dequeue", "view": "v", "indexPaths": [[0, 0]]]).result()["cells"]!.arrayValue[0]
        #expect(cell["content"] == ["type": "plugin:emoji", "text": "😀", "font": "largeTitle", "alignment": "center", "selected": false])

        // listd restarts on the same socket: the kit reconnects by itself.
        let directory = daemon.directory
        #expect(try daemon.stop() == 0)
        daemon = try Daemon(directory: directory)
        let second = daemon
        #expect(try eventually { try second.request(["cmd": "stats"]).result()["plugins"]!.arrayValue.count == 1 })
        connection = try emojiSetup(daemon)
        cell = try connection.request(["cmd": "dequeue", "view": "v", "indexPaths": [[0, 0]]]).result()["cells"]!.arrayValue[0]
        #expect(cell["content"]?["text"] == "😀")
    }

    @Test func theCardPluginShowsTheHomeScreensCards() throws {
        let card = binaryDirectory.appendingPathComponent("card-plugin").path
        let daemon = try Daemon(arguments: ["--demo", "--plugin", card])
        #expect(try eventually { try daemon.request(["cmd": "stats"]).result()["plugins"]!.arrayValue.first?["name"] == "card" })
        let connection = try daemon.connect()
        // The demo's homeCard registration (plugin:card) for every section of home.
        #expect(try connection.request(["cmd": "setCellProvider", "dataSource": "home", "rules": [], "default": "homeCard"])["ok"] == true)
        #expect(try connection.request(["cmd": "attach", "dataSource": "home", "view": "cards"])["ok"] == true)
        let cells = try connection.request(["cmd": "dequeue", "view": "cards", "indexPaths": [[0, 0], [1, 0], [2, 0]]]).result()["cells"]!.arrayValue
        #expect(cells[0]["content"] == [
            "type": "plugin:card", "kind": "consult", "text": "감기에 걸렸을때 어느 병원으로 가야할까요?", "readCount": 22,
            "date": "2021.10.29", "secondaryText": "22 reads · 2021.10.29",
        ])
        #expect(cells[1]["content"] == ["type": "plugin:card", "kind": "company", "text": "닥프렌즈 병원", "secondaryText": "서울 특별시", "image": "🏥"])
        #expect(cells[2]["content"]?["kind"] == "expert" && cells[2]["content"]?["text"] == "박지혜" && cells[2]["content"]?["secondaryText"] == "한의사")
        #expect(cells.allSatisfy { $0["background"]?["type"] == "listGroupedCell" }, "the registration's background")
        // Selecting a card reconfigures it through the plugin.
        let selected = try connection.request(["cmd": "setState", "view": "cards", "item": "company-1", "state": ["selected": true]]).result()["cell"]!
        #expect(selected["content"]?["selected"] == true)
    }
}
