import DiffableCore
import Foundation
import ListClient
import ListWire
import Testing

/// Argument errors and listctl's forms come from the commands' declarations: listd's unknown-argument
/// errors suggest the declared name meant, and `listctl call` checks a command line against the form
/// `describe` publishes before it sends anything.
@Suite("Argument forms from the declarations", .serialized)
struct ArgumentFormTests {
    private func message(_ reply: JSONValue) -> String { reply["error"]?["message"]?.stringValue ?? "\(reply)" }

    /// How often listd ran `command` (nil: never).
    private func count(of command: String, in daemon: Daemon) throws -> JSONValue? {
        try daemon.request(["cmd": "stats"]).result()["commands"]?[command]
    }

    @Test func listdSuggestsTheDeclaredNameMeant() throws {
        let daemon = try Daemon()
        _ = try daemon.request(["cmd": "appendSections", "dataSource": "d", "sections": ["s"]]).result()
        let command = try daemon.request(["cmd": "appendItems", "dataSource": "d", "items": ["a"], "tosection": "s"])
        #expect(message(command) == #"Unknown argument "tosection"; did you mean "toSection"?"#)
        // A read's minVersion, which the router reads itself, is among the names meant.
        let read = try daemon.request(["cmd": "snapshot", "dataSource": "d", "minversion": 1])
        #expect(message(read) == #"Unknown argument "minversion"; did you mean "minVersion"?"#)
        // Objects read with their own arguments suggest from their own names.
        let batch = try daemon.request(["cmd": "batch", "dataSource": "d", "operations": [["cmd": "appendItems", "items": ["b"], "tosection": "s"]]])
        #expect(message(batch) == #"operations[0]: Unknown argument "tosection"; did you mean "toSection"?"#)
        let outline = try daemon.request([
            "cmd": "editSectionSnapshot", "dataSource": "d", "section": "s", "operations": [["op": "append", "items": ["x"], "parnet": "a"]],
        ])
        #expect(message(outline) == #"operations[0]: Unknown argument "parnet"; did you mean "parent"?"#)
        let far = try daemon.request(["cmd": "ping", "extra": true])
        #expect(message(far) == #"Unknown argument "extra"."#)
    }

    @Test func aMisspeltArgumentIsAnsweredBeforeSending() throws {
        let daemon = try Daemon()
        let typo = try listctl(daemon, ["call", "appendSections", "dataSource=d", #"sections=["s"]"#, "animatingdifferences=false"])
        #expect(typo.status == 64, "\(typo)")
        #expect(
            typo.err == "listctl: appendSections has no argument \"animatingdifferences\"; did you mean \"animatingDifferences\"? (listctl describe appendSections shows its form)\n",
            "\(typo.err)")
        let missing = try listctl(daemon, ["call", "appendSections", "dataSource=d"])
        #expect(missing.status == 64 && missing.err.hasPrefix("listctl: appendSections needs the argument \"sections\" ([section])"), "\(missing)")
        let notInteger = try listctl(daemon, ["call", "appendSections", "dataSource=d", #"sections=["s"]"#, "ifVersion=two"])
        #expect(notInteger.status == 1 && notInteger.err == "listctl: argument \"ifVersion\" is an integer, not \"two\"\n", "\(notInteger)")
        let command = try listctl(daemon, ["call", "apendSections", "dataSource=d"])
        #expect(command.status == 64 && command.err == "listctl: no command \"apendSections\"; did you mean \"appendSections\"?\n", "\(command)")
        #expect(try count(of: "appendSections", in: daemon) == nil, "nothing was sent")
        #expect(try daemon.request(["cmd": "listDataSources"]).result()["dataSources"] == [])
    }

    @Test func valuesAreReadAsTheirDeclaredTypes() throws {
        let daemon = try Daemon()
        // A string argument given 1 stays the string "1"; JSON for an array; a boolean.
        let made = try listctl(daemon, ["call", "appendSections", "dataSource=1", #"sections=["s"]"#, "animatingDifferences=false"])
        #expect(made.status == 0, "\(made)")
        let appended = try listctl(daemon, ["--json", "call", "appendItems", "dataSource=1", #"items=[{"id":"7","data":{"n":1}}]"#, "toSection=s"])
        #expect(appended.status == 0, "\(appended)")
        let snapshot = try daemon.request(["cmd": "snapshot", "dataSource": "1"]).result()
        #expect(snapshot["sections"] == [["id": "s", "items": [["id": "7", "data": ["n": 1]]]]], "\(snapshot)")
        // An argument of several types ("string or integer") is JSON when it parses, else a string.
        let access = try listctl(daemon, ["--json", "call", "access", "dataSource=1", "user=\(getuid())"])
        #expect(access.status == 0, "\(access)")
    }

    @Test func describeShowsACommandsForm() throws {
        let daemon = try Daemon()
        let form = try listctl(daemon, ["describe", "appendItems"])
        #expect(form.status == 0, "\(form)")
        let lines = form.out.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(
            lines.first
                == "appendItems dataSource=<string> items=<[item]> [ifVersion=<integer>] [animatingDifferences=<boolean>] [toSection=<string>]")
        #expect(lines.count > 1 && lines[1] == "    Appends items to a section, or to the last section; existing items are moved there with a warning.")
        #expect(form.out.contains("  toSection (string, optional)\n      The section; the last one when absent.\n"), "\(form.out)")
        #expect(form.out.contains("  items ([item], required)\n"), "\(form.out)")
        #expect(form.out.hasSuffix("Result: {version, changes, unchanged?, warnings?}\n"), "\(form.out)")
        let json = try listctl(daemon, ["--json", "describe", "appendItems"])
        let described = try JSONParser.parse(Array(json.out.utf8))
        #expect(described["name"] == "appendItems" && described["arguments"]?.arrayValue.count == 5, "\(json.out)")
        let typo = try listctl(daemon, ["describe", "apendItems"])
        #expect(typo.status == 64 && typo.err == "listctl: no command \"apendItems\"; did you mean \"appendItems\"?\n", "\(typo)")
    }
}
