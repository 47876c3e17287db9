import DiffableCore
import ListWire

/// Turns fuzz bytes into valid-looking requests: real commands and argument names, identifiers from a
/// small pool (so commands meet each other's sections and items) with control characters, empty and
/// over-long ones, and adversarial integers (`Int.max`, `Int.min`, negatives, past 64 bits, fractions).
/// Each choice consumes one byte; the requests end when the bytes do.
struct CommandGenerator {
    private var bytes: ArraySlice<UInt8>
    private var produced = 0
    /// Outline items the current request may still nest (a request's outline stays small enough to build
    /// quickly, however the bytes run).
    private var outlineItemsLeft = 0
    static let maximumOutlineItems = 2_000
    static let maximumRequests = 64

    init(bytes: ArraySlice<UInt8>) { self.bytes = bytes }

    /// The next request line (without newline), or nil when the input is used up.
    mutating func next() -> String? {
        guard produced < Self.maximumRequests, !bytes.isEmpty else { return nil }
        produced += 1
        outlineItemsLeft = Self.maximumOutlineItems
        let command = pick(Self.commands)
        return "{" + (["\"id\":\(produced)", "\"cmd\":\(string(command))"] + arguments(of: command)).joined(separator: ",") + "}"
    }

    // MARK: Choices

    private mutating func byte() -> Int { Int(bytes.popFirst() ?? 0) }
    private mutating func below(_ count: Int) -> Int { count <= 1 ? 0 : byte() % count }
    private mutating func pick<T>(_ choices: [T]) -> T { choices[below(choices.count)] }
    private mutating func chance(_ percent: Int) -> Bool { byte() * 100 < percent * 256 }
    private mutating func some<T>(_ max: Int, _ element: (inout Self) -> T) -> [T] {
        (0..<below(max + 1)).map { _ in element(&self) }
    }

    private func string(_ text: String) -> String { String(decoding: JSONValue.string(text).jsonBytes, as: UTF8.self) }
    private func array(_ elements: [String]) -> String { "[" + elements.joined(separator: ",") + "]" }
    private func object(_ members: [(String, String)]) -> String {
        "{" + members.map { string($0.0) + ":" + $0.1 }.joined(separator: ",") + "}"
    }

    static let dataSources = ["d", "d", "d", "e", "", "\u{1B}[2J", "\u{07}", String(repeating: "n", count: 5_000)]
    static let sections = ["s0", "s1", "s2", "s3", "s0", "s1", "", "\u{1B}[31m", "\u{07}bel", String(repeating: "S", count: 5_000)]
    static let items = ["a", "b", "c", "d", "e", "f", "a", "b", "", "\u{1B}]0;x\u{07}", "\u{7F}", String(repeating: "I", count: 5_000)]
    static let integers = [
        "0", "1", "2", "3", "-1", "-2", "9223372036854775807", "-9223372036854775808", "9223372036854775806",
        "9223372036854775808", "-9223372036854775809", "4294967296", "2147483648", "9007199254740993", "1000000", "1.5",
        "1e300", "-0", "\"1\"", "null",
    ]
    private mutating func dataSource() -> String { string(pick(Self.dataSources)) }
    private mutating func section() -> String { string(pick(Self.sections)) }
    private mutating func item() -> String { string(pick(Self.items)) }
    private mutating func integer() -> String { pick(Self.integers) }
    private mutating func small() -> String { chance(70) ? String(below(4)) : integer() }
    private mutating func payload() -> String {
        switch below(5) {
        case 0: return "null"
        case 1: return object([("title", string(pick(["t", "두통", "\u{1B}[0m", "{{title}}"])))])
        case 2: return String(repeating: "[", count: 500) + String(repeating: "]", count: 500)
        default: return object([("n", integer())])
        }
    }
    private mutating func identified(_ id: String) -> String { chance(30) ? object([("id", id), ("data", payload())]) : id }
    private mutating func indexPath() -> String { array(chance(90) ? [small(), small()] : some(3) { $0.small() }) }

    // MARK: Commands

    static let edits = [
        "appendSections", "insertSections", "deleteSections", "moveSection", "reloadSections", "updateSections", "appendItems",
        "insertItems", "deleteItems", "deleteAllItems", "moveItem", "reloadItems", "reconfigureItems", "updateItems",
    ]
    static let commands =
        edits + edits + [
            "apply", "apply", "batch", "batch", "applySectionSnapshot", "expand", "collapse", "sectionSnapshot", "snapshot", "snapshot",
            "numberOfSections", "numberOfItems", "itemIdentifier", "indexPath", "sectionIdentifier", "index", "item", "attach", "detach",
            "setLayout", "layout", "register", "unregister", "registrations", "styles", "setCellProvider", "setSupplementaryProvider",
            "dequeue", "dequeueSupplementary", "endDisplaying", "setState", "createDataSource", "dropDataSource", "listDataSources",
            "hello", "ping", "stats", "configured", "backup", "frobnicate",
        ]

    private mutating func arguments(of command: String) -> [String] {
        var members: [(String, String)] = []
        if Self.edits.contains(command) || ["apply", "batch", "applySectionSnapshot", "expand", "collapse"].contains(command) {
            members.append(("dataSource", dataSource()))
            if chance(10) { members.append(("ifVersion", integer())) }
        }
        switch command {
        case "batch": members.append(("operations", array(some(5) { $0.batchOperation() })))
        case _ where Self.edits.contains(command): members += edit(command)
        case "apply":
            let sections = some(4) { generator in
                generator.object([("id", generator.section()), ("items", generator.array(generator.some(5) { $0.identified($0.item()) }))])
            }
            members.append(("snapshot", object([("sections", array(sections))])))
            if chance(20) { members.append(("reloadData", "true")) }
        case "applySectionSnapshot":
            members += [("section", section()), ("snapshot", object([("items", array(some(3) { $0.outlineItem(depth: 0) }))]))]
        case "expand", "collapse": members += [("section", section()), ("items", array(some(3) { $0.item() }))]
        case "sectionSnapshot", "index": members += [("dataSource", dataSource()), ("section", section())]
        case "snapshot":
            members.append(("dataSource", dataSource()))
            if chance(60) { members.append(("section", section())) }
            if chance(60) { members.append(("offset", integer())) }
            if chance(60) { members.append(("limit", integer())) }
        case "numberOfSections", "layout": members.append(("dataSource", dataSource()))
        case "numberOfItems":
            members.append(("dataSource", dataSource()))
            if chance(50) { members.append(("section", section())) }
        case "itemIdentifier": members += [("dataSource", dataSource()), ("indexPath", indexPath())]
        case "indexPath", "item": members += [("dataSource", dataSource()), ("item", item())]
        case "sectionIdentifier": members += [("dataSource", dataSource()), ("index", integer())]
        case "attach":
            members.append(("dataSource", dataSource()))
            if chance(70) { members.append(("view", string(pick(["v", "w", "", "\u{1B}"])))) }
            if chance(20) { members += [("fromVersion", integer()), ("incarnation", string(pick(["x", ""])))] }
        case "detach": members.append(chance(50) ? ("view", string(pick(["v", "w"]))) : ("dataSource", dataSource()))
        case "setLayout": members += [("dataSource", dataSource()), ("layout", layout())]
        case "register": members += registration()
        case "unregister": members.append(("registration", string(pick(["r", "q", "plain"]))))
        case "setCellProvider", "setSupplementaryProvider":
            members.append(("dataSource", dataSource()))
            if command == "setSupplementaryProvider" { members.append(("elementKind", string(pick(["header", "footer", ""])))) }
            members.append(("rules", array(some(3) { $0.rule() })))
            if chance(70) { members.append(("default", string(pick(["r", "q", "nope"])))) }
        case "dequeue": members += [("view", string(pick(["v", "w"]))), ("indexPaths", array(some(4) { $0.indexPath() }))]
        case "dequeueSupplementary":
            members += [("view", string(pick(["v", "w"]))), ("elementKind", string(pick(["header", "footer"]))), ("indexPath", indexPath())]
        case "endDisplaying": members += [("view", string(pick(["v", "w"]))), ("cells", array(some(3) { $0.string($0.pick(["c1", "1", "v.1", ""])) }))]
        case "setState":
            members += [("view", string(pick(["v", "w"]))), (chance(50) ? "item" : "cell", item())]
            members.append(("state", object([(pick(["selected", "highlighted", "custom"]), pick(["true", "false", "null", "1"]))])))
        case "createDataSource", "dropDataSource": members.append(("dataSource", dataSource()))
        case "hello":
            members.append(("protocol", small()))
            if chance(30) { members += [("role", string("plugin")), ("name", string("p")), ("provides", array([string(pick(["badge", "x"]))]))] }
        case "configured": members += [("request", integer()), ("cells", array(some(2) { $0.object([("cell", $0.string("c1")), ("content", "{}")]) }))]
        default: break
        }
        return members.map { string($0.0) + ":" + $0.1 }
    }

    private mutating func edit(_ command: String) -> [(String, String)] {
        func placement(_ generator: inout Self, _ before: String, _ after: String, _ id: (inout Self) -> String) -> [(String, String)] {
            switch generator.below(4) {
            case 0: return [(after, id(&generator))]
            case 1: return []
            case 2: return [(before, id(&generator)), (after, id(&generator))]
            default: return [(before, id(&generator))]
            }
        }
        switch command {
        case "appendSections", "updateSections": return [("sections", array(some(3) { $0.identified($0.section()) }))]
        case "insertSections":
            return [("sections", array(some(3) { $0.identified($0.section()) }))] + placement(&self, "beforeSection", "afterSection") { $0.section() }
        case "deleteSections", "reloadSections": return [("sections", array(some(3) { $0.section() }))]
        case "moveSection": return [("section", section())] + placement(&self, "beforeSection", "afterSection") { $0.section() }
        case "appendItems":
            return [("items", array(some(4) { $0.identified($0.item()) }))] + (chance(60) ? [("toSection", section())] : [])
        case "insertItems": return [("items", array(some(3) { $0.identified($0.item()) }))] + placement(&self, "beforeItem", "afterItem") { $0.item() }
        case "moveItem": return [("item", item())] + placement(&self, "beforeItem", "afterItem") { $0.item() }
        case "deleteAllItems": return []
        default: return [("items", array(some(3) { $0.identified($0.item()) }))]  // deleteItems, reload…, reconfigure…, updateItems
        }
    }

    private mutating func batchOperation() -> String {
        let command = pick(Self.edits)
        return object([("cmd", string(command))] + edit(command))
    }

    private mutating func outlineItem(depth: Int) -> String {
        var text = ""
        outlineItem(depth: depth, into: &text)
        return text
    }

    /// Appends one outline item (and its children) to `text`: written in place, so a deep chain costs
    /// its length, not its length squared.
    private mutating func outlineItem(depth: Int, into text: inout String) {
        outlineItemsLeft -= 1
        text += "{\"id\":" + item()
        if depth < 600, outlineItemsLeft > 0, !bytes.isEmpty, chance(depth == 0 ? 60 : 95) {
            // Usually shallow; a long run of the same byte nests hundreds deep.
            text += ",\"children\":["
            for index in 0..<(1 + below(2)) {
                if index > 0 { text += "," }
                outlineItem(depth: depth + 1, into: &text)
            }
            text += "]"
        }
        if chance(30) { text += ",\"expanded\":" + pick(["true", "false"]) }
        text += "}"
    }

    private mutating func layout() -> String {
        pick([
            "{}", #"{"default":{"list":{"appearance":"insetGrouped","headerMode":"supplementary"}}}"#,
            #"{"sections":{"s0":{"group":{"axis":"horizontal","width":{"fractionalWidth":1},"height":{"absolute":3}}}}}"#,
            #"{"default":{"item":{"width":{"fractionalWidth":-1e300},"height":{"absolute":9223372036854775807}},"group":{"axis":"vertical","width":{"absolute":0},"height":{"absolute":-1}},"interGroupSpacing":-9223372036854775808}}"#,
            #"{"default":{"list":{"appearance":"fancy"}}}"#,
        ])
    }

    private mutating func registration() -> [(String, String)] {
        let depth = pick([1, 3, 40, 600, 2_600])
        let template = pick([
            "{{title}}", "{{#state.selected}}✓ {{/state.selected}}{{item}}", "{{", "{{/x}}", "{{{raw}}}", "{{> partial}}", "\u{1B}[31m{{title}}",
            String(repeating: "{{#a}}", count: depth) + String(repeating: "{{/a}}", count: depth),
            String(repeating: "{{title}}", count: depth),
        ])
        var members = [
            ("registration", string(pick(["r", "q", "plain", ""]))),
            ("contentConfiguration", object([("type", string(pick(["cell", "subtitleCell", "valueCell", "plugin:badge", "bogus"]))), ("text", string(template))])),
        ]
        if chance(20) { members.append(("kind", string(pick(["supplementary", "cell", "other"])))) }
        if chance(20) { members.append(("accessories", #"[{"type":"disclosureIndicator"},{"type":"label","text":"{{title}}"}]"#)) }
        return members
    }

    private mutating func rule() -> String {
        var members = [("registration", string(pick(["r", "q", "nope"])))]
        if chance(50) { members.append(("section", section())) }
        if chance(30) { members.append(("match", object([("field", string(pick(["title", "a.b.c", ""]))), ("equals", payload())]))) }
        return object(members)
    }
}
