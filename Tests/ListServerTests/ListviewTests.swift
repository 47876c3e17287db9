import DiffableCore
import Foundation
import ListClient
import ListWire
import Testing

let framesDirectory = protocolDirectory.deletingLastPathComponent().appendingPathComponent("Tests/ListServerTests/Frames")

/// Runs `listview` to completion; returns its exit status, standard output and standard error.
func runListview(_ arguments: [String]) throws -> (status: Int32, output: String, errors: String) {
    let process = Process()
    process.executableURL = binaryDirectory.appendingPathComponent("listview")
    process.arguments = arguments
    let output = Pipe()
    let errors = Pipe()
    process.standardOutput = output
    process.standardError = errors
    try process.run()
    let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    let errorText = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    return (process.terminationStatus, text, errorText)
}

/// A data source showing every list appearance and a vertical grid: "gallery".
func makeGallery(_ daemon: Daemon) throws {
    let connection = try daemon.connect()
    let definitions: [(String, JSONValue)] = [
        ("row", ["contentConfiguration": ["type": "cell", "text": "{{title}}"], "accessories": [["type": "disclosureIndicator"]]]),
        ("detail", ["contentConfiguration": ["type": "subtitleCell", "text": "{{title}}", "secondaryText": "{{note}}"]]),
        ("value", ["contentConfiguration": ["type": "valueCell", "text": "{{title}}", "secondaryText": "{{note}}"], "accessories": [["type": "checkmark", "hidden": false]]]),
        ("header", ["kind": "supplementary", "elementKind": "header", "contentConfiguration": ["type": "plainHeader", "text": "{{title}}"]]),
        ("footer", ["kind": "supplementary", "elementKind": "footer", "contentConfiguration": ["type": "plainFooter", "text": "{{items}} items"]]),
    ]
    for (name, definition) in definitions {
        var request = definition
        if case .object(var members) = request {
            members["cmd"] = "register"
            members["registration"] = .string(name)
            request = .object(members)
        }
        #expect(try connection.request(request)["ok"] == true)
    }
    func items(_ prefix: String, _ count: Int) -> JSONValue {
        .array((1...count).map { ["id": .string("\(prefix)\($0)"), "data": ["title": .string("\(prefix.capitalized) \($0)"), "note": .string("note \($0)")]] })
    }
    #expect(try connection.request([
        "cmd": "apply", "dataSource": "gallery",
        "snapshot": ["sections": [
            ["id": "plain", "data": ["title": "Plain", "items": 2], "items": items("plain", 2)],
            ["id": "grouped", "data": ["title": "Grouped", "items": 2], "items": items("grouped", 2)],
            ["id": "inset", "data": ["title": "Inset grouped", "items": 2], "items": items("inset", 2)],
            ["id": "sidebar", "data": ["title": "Sidebar", "items": 2], "items": items("side", 2)],
            ["id": "tiles", "data": ["title": "Tiles", "items": 5], "items": items("tile", 5)],
        ]],
    ])["ok"] == true)
    #expect(try connection.request([
        "cmd": "setCellProvider", "dataSource": "gallery", "default": "row",
        "rules": [["section": "grouped", "registration": "detail"], ["section": "inset", "registration": "value"]],
    ])["ok"] == true)
    #expect(try connection.request(["cmd": "setSupplementaryProvider", "dataSource": "gallery", "elementKind": "header", "rules": [], "default": "header"])["ok"] == true)
    #expect(try connection.request(["cmd": "setSupplementaryProvider", "dataSource": "gallery", "elementKind": "footer", "rules": [], "default": "footer"])["ok"] == true)
    #expect(try connection.request([
        "cmd": "setLayout", "dataSource": "gallery",
        "layout": [
            "default": ["list": ["appearance": "plain", "headerMode": "supplementary", "footerMode": "supplementary"]],
            "sections": [
                "grouped": ["list": ["appearance": "grouped", "headerMode": "supplementary"]],
                "inset": ["list": ["appearance": "insetGrouped", "headerMode": "supplementary", "footerMode": "supplementary"]],
                "sidebar": ["list": ["appearance": "sidebar"]],
                "tiles": [
                    "item": ["width": ["fractionalWidth": 0.5], "height": ["fractionalHeight": 1], "contentInsets": ["trailing": 1]],
                    "group": ["axis": "horizontal", "width": ["fractionalWidth": 1], "height": ["absolute": 3]],
                    "interGroupSpacing": 0, "header": [:], "contentInsets": ["leading": 1],
                ],
            ],
        ],
    ])["ok"] == true)
}

@Suite("listview", .serialized)
struct ListviewTests {
    static let frames: [(name: String, dataSource: String, arguments: [String])] = [
        ("home-60x30", "home", ["--width", "60", "--height", "30"]),
        ("home-44x14-scrolled", "home", ["--width", "44", "--height", "14", "--scroll", "9"]),
        ("emoji-48x22", "emoji", ["--width", "48", "--height", "22"]),
        ("gallery-50x44", "gallery", ["--width", "50", "--height", "44"]),
    ]

    /// Each frame against its golden file (`LISTVIEW_UPDATE_GOLDEN=1` rewrites them; review the diff).
    @Test func goldenFrames() throws {
        let daemon = try Daemon(arguments: ["--demo"])
        try makeGallery(daemon)
        let update = ProcessInfo.processInfo.environment["LISTVIEW_UPDATE_GOLDEN"] == "1"
        for frame in Self.frames {
            let run = try runListview(["--socket", daemon.socketPath, frame.dataSource, "--once"] + frame.arguments)
            #expect(run.status == 0, "\(frame.name): \(run.errors)")
            let file = framesDirectory.appendingPathComponent(frame.name + ".txt")
            if update { try run.output.write(to: file, atomically: true, encoding: .utf8) }
            let golden = try String(contentsOf: file, encoding: .utf8)
            #expect(run.output == golden, "\(frame.name) differs from its golden frame:\n\(run.output)")
        }
        // --once leaves nothing behind: its view is detached, its cells gone.
        let views = try daemon.request(["cmd": "stats"]).result()["cells"]?["views"]?.arrayValue ?? []
        #expect(views.isEmpty)
    }

    @Test func onceFailsClearlyWithoutADaemonOrDataSource() throws {
        let daemon = try Daemon()
        let missing = try runListview(["--socket", daemon.socketPath, "nothing", "--once"])
        #expect(missing.status == 1 && missing.errors.contains("data source \"nothing\"") || missing.errors.contains("Data source \"nothing\" does not exist"))
        let nowhere = try runListview(["--socket", daemon.directory + "/absent.sock", "home", "--once"])
        #expect(nowhere.status == 1 && nowhere.errors.contains("cannot connect"))
    }

    @Test func followPrintsAFramePerChange() throws {
        let daemon = try Daemon(arguments: ["--demo"])
        let process = Process()
        process.executableURL = binaryDirectory.appendingPathComponent("listview")
        process.arguments = ["--socket", daemon.socketPath, "emoji", "--follow", "--width", "40", "--height", "4"]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        Thread.sleep(forTimeInterval: 0.5)
        #expect(try daemon.request(["cmd": "expand", "dataSource": "emoji", "section": "outline", "items": ["smileys"]])["ok"] == true)
        Thread.sleep(forTimeInterval: 0.5)
        #expect(try daemon.request(["cmd": "dropDataSource", "dataSource": "emoji"])["ok"] == true)
        process.waitUntilExit()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(text == """
             EMOJI
             › Smileys
             › Nature
             › Food
            ── emoji version 1 ──
             EMOJI
             ⌄ Smileys
             😀 Happy                        Smileys
             😂 Laughing                     Smileys

            """)
    }
}
