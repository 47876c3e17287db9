import DiffableCore

/// Turns fuzz bytes into mutation request lines (`appendItems`, `insertItems`, `deleteItems`, `moveItem`,
/// `apply`, `reconfigureItems`, `editSectionSnapshot`, `batch`, …) over a few identifiers that meet each
/// other, mostly in the plain shape a client writes (what a fast decoder takes), and now and then in a
/// shape that must make it fall back to the general path: duplicate keys, unknown members, escapes in
/// identifiers and keys, numbers as strings, numbers past 64 bits, fractions, `null` members, nested
/// payloads, whitespace, members in another order, other `id` types, malformed items.
struct MutationLineGenerator {
    private var choices: ByteChoices
    private var produced = 0
    /// How the current line writes its strings.
    private var escaping = Escaping.none

    init(bytes: ArraySlice<UInt8>) { choices = ByteChoices(bytes) }

    /// The setup every structured input starts from: data source `d` with sections `s0` (a, b, c) and
    /// `s1` (d), so the first lines already meet existing identifiers.
    static let setup = Array(#"{"cmd":"apply","dataSource":"d","snapshot":{"sections":[{"id":"s0","items":["a","b","c"]},{"id":"s1","items":["d"]}]}}"#.utf8)

    /// The next line (without newline), or nil when the bytes are used up.
    mutating func next() -> [UInt8]? {
        guard produced < maximumLines, !choices.isEmpty else { return nil }
        produced += 1
        // One byte of form: most lines plain (the fast path), the rest with one or more oddities.
        let form = choices.byte()
        let plain = form < 128
        escaping = plain ? .none : choices.pick([Escaping.none, .none, .letters, .all, .solidus])
        let command = choices.pick(Self.commands)
        var members: [(String, String)] = []
        if choices.chance(40) { members.append(("id", identifier())) }
        members.append(("cmd", string(command)))
        members += arguments(of: command)
        if !plain { oddities(form, &members) }
        var line = "{"
        let spaced = !plain && form & 0x40 != 0
        for (index, (key, value)) in members.enumerated() {
            if index > 0 { line += spaced ? " ,\t" : "," }
            line += string(key) + (spaced ? " : " : ":") + value
        }
        return Array((spaced ? " " + line + "} " : line + "}").utf8)
    }

    // MARK: Oddities (what a fast decoder must refuse or get exactly right)

    private mutating func oddities(_ form: Int, _ members: inout [(String, String)]) {
        if form & 1 != 0, !members.isEmpty {
            // Another order: the envelope last, an argument first.
            members.append(members.removeFirst())
        }
        if form & 2 != 0, !members.isEmpty {
            members.insert(members[choices.below(members.count)], at: choices.below(members.count + 1))  // a duplicate key
        }
        if form & 4 != 0 {
            members.insert((choices.pick(["bogus", "itemz", "Items", "dataSource ", "cmd\u{0}", "ifversion"]), choices.pick(["1", "null", "\"a\"", "[]", "{}"])), at: choices.below(members.count + 1))
        }
        if form & 8 != 0 {
            members.append((choices.pick(["ifVersion", "animatingDifferences", "toSection", "beforeItem", "afterItem", "reloadData"]), "null"))
        }
        if form & 16 != 0, !members.isEmpty {
            let member = choices.below(members.count)
            // A value of another type where one was expected.
            members[member].1 = choices.pick(["\"1\"", "1", "-1", "1.5", "1e400", "18446744073709551616", "true", "[]", "{}", "[\"a\"]", "{\"id\":\"a\"}", "null"])
        }
        if form & 32 != 0 { members.append(("ifVersion", choices.pick(Self.numbers))) }
    }

    // MARK: Values

    enum Escaping { case none, letters, all, solidus }

    /// `text` as a JSON string, escaped the current line's way.
    private func string(_ text: String) -> String {
        switch escaping {
        case .none:
            // Most strings need no escape: quoted as they are, without a JSON writer.
            if text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x80 && $0 != 0x22 && $0 != 0x5C }) { return "\"" + text + "\"" }
            return String(decoding: JSONValue.string(text).jsonBytes, as: UTF8.self)
        case .solidus: return String(decoding: JSONValue.string(text).jsonBytes.flatMap { $0 == 0x2F ? [0x5C, 0x2F] : [$0] }, as: UTF8.self)
        case .letters, .all:
            var out = "\""
            for scalar in text.unicodeScalars {
                let escape = escaping == .all || (scalar.properties.isAlphabetic && scalar.value < 0x80)
                if scalar == "\"" || scalar == "\\" || scalar.value < 0x20 || (escape && scalar.value <= 0xFFFF) {
                    out += "\\u" + hex4(scalar.value)
                } else if escape {
                    let value = scalar.value - 0x10000
                    out += "\\u" + hex4(0xD800 + (value >> 10)) + "\\u" + hex4(0xDC00 + (value & 0x3FF))
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
            return out + "\""
        }
    }

    private func hex4(_ value: UInt32) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 4 - digits.count) + digits
    }

    static let dataSources = ["d", "d", "d", "d", "e", "D"]
    static let sections = ["s0", "s1", "s2", "s0", "s1", "", "😀", "s\u{0}"]
    static let items = ["a", "b", "c", "d", "e", "f", "a", "b", "c", "x/y", "😀", "\u{1B}[2J", "\\", "\""]
    static let numbers = [
        "0", "1", "2", "3", "4", "5", "-1", "1.0", "2e0", "\"1\"", "9223372036854775807", "9223372036854775808", "-9223372036854775809",
        "9007199254740993", "1e400", "-0", "0.5", "null", "true", "[1]",
    ]

    private mutating func dataSource() -> String { string(choices.pick(Self.dataSources)) }
    private mutating func section() -> String { string(choices.pick(Self.sections)) }
    private mutating func item() -> String { string(choices.pick(Self.items)) }
    private mutating func identifier() -> String {
        choices.pick(["1", "2", "\"r\"", "null", "1.5", "123456789012345678901234567890", "{\"a\":[1]}", "[]", "-0", "true"])
    }

    private mutating func payload(depth: Int = 0) -> String {
        switch choices.below(depth > 20 ? 4 : 7) {
        case 0: return "null"
        case 1: return "{\"title\":" + string(choices.pick(["t", "두통", "{{title}}", "\u{1B}[0m"])) + "}"
        case 2: return choices.pick(Self.numbers)
        case 3: return string(choices.pick(["x", "", "\u{0}"]))
        case 4: return "[" + payload(depth: depth + 1) + "]"
        case 5: return "{\"n\":" + payload(depth: depth + 1) + ",\"m\":" + payload(depth: depth + 1) + "}"
        default:
            let depth = 1 + choices.below(64)
            return String(repeating: "[", count: depth) + "null" + String(repeating: "]", count: depth)
        }
    }

    /// An items element: usually an identifier or `{id, data?}`; now and then a shape that is no item.
    private mutating func element() -> String {
        switch choices.below(16) {
        case 0...7: return item()
        case 8, 9: return "{\"id\":" + item() + "}"
        case 10, 11: return "{\"id\":" + item() + ",\"data\":" + payload() + "}"
        case 12: return "{\"data\":" + payload() + ",\"id\":" + item() + "}"
        case 13: return "{\"id\":" + item() + ",\"id\":" + item() + "}"
        case 14: return "{\"id\":" + item() + "," + choices.pick(["\"bogus\":1", "\"items\":[]", "\"data\":null,\"data\":1"]) + "}"
        default: return choices.pick(["1", "null", "[\"a\"]", "{}", "{\"id\":1}", "{\"id\":null}", "true"])
        }
    }

    /// 0 through `max` elements.
    private mutating func some<T>(_ max: Int, _ element: (inout Self) -> T) -> [T] {
        (0..<choices.below(max + 1)).map { _ in element(&self) }
    }

    private mutating func elements(_ maximum: Int) -> String { "[" + some(maximum) { $0.element() }.joined(separator: ",") + "]" }
    private mutating func identifiers(_ maximum: Int, _ one: (inout Self) -> String) -> String {
        "[" + some(maximum, one).joined(separator: ",") + "]"
    }

    // MARK: Commands

    static let edits = [
        "appendItems", "appendItems", "insertItems", "deleteItems", "moveItem", "reloadItems", "reconfigureItems", "updateItems", "deleteAllItems",
        "appendSections", "insertSections", "deleteSections", "moveSection", "reloadSections", "updateSections",
    ]
    static let commands =
        edits + edits + [
            "apply", "apply", "apply", "batch", "batch", "editSectionSnapshot", "editSectionSnapshot", "applySectionSnapshot", "expand", "collapse",
            "snapshot", "numberOfItems", "createDataSource", "dropDataSource",
        ]

    private mutating func arguments(of command: String) -> [(String, String)] {
        var members: [(String, String)] = [("dataSource", dataSource())]
        if choices.chance(15) { members.append(("ifVersion", choices.chance(70) ? String(choices.below(6)) : choices.pick(Self.numbers))) }
        if choices.chance(10) { members.append(("animatingDifferences", choices.pick(["false", "true", "0", "null"]))) }
        switch command {
        case "batch": members.append(("operations", "[" + some(4) { $0.batchOperation() }.joined(separator: ",") + "]"))
        case "apply":
            let sections = some(3) { generator -> String in
                var section = "{\"id\":" + generator.section()
                if generator.choices.chance(20) { section += ",\"data\":" + generator.payload() }
                if generator.choices.chance(90) { section += ",\"items\":" + (generator.choices.chance(5) ? "null" : generator.elements(4)) }
                return section + "}"
            }
            members.append(("snapshot", "{\"sections\":[" + sections.joined(separator: ",") + "]}"))
            if choices.chance(15) { members.append(("reloadData", choices.pick(["true", "false"]))) }
        case "editSectionSnapshot":
            members += [("section", section()), ("operations", "[" + some(3) { $0.outlineOperation() }.joined(separator: ",") + "]")]
        case "applySectionSnapshot":
            members += [("section", section()), ("snapshot", "{\"items\":[" + some(3) { $0.outlineItem(depth: 0) }.joined(separator: ",") + "]}")]
        case "expand", "collapse": members += [("section", section()), ("items", identifiers(3) { $0.item() })]
        case "snapshot", "createDataSource", "dropDataSource": break
        case "numberOfItems": if choices.chance(50) { members.append(("section", section())) }
        default: members += edit(command)
        }
        return members
    }

    /// A snapshot edit's own arguments (a command's, or a batch operation's).
    private mutating func edit(_ command: String) -> [(String, String)] {
        func placement(_ generator: inout Self, _ before: String, _ after: String, _ id: (inout Self) -> String) -> [(String, String)] {
            switch generator.choices.below(5) {
            case 0: return [(after, id(&generator))]
            case 1: return []
            case 2: return [(before, id(&generator)), (after, id(&generator))]
            default: return [(before, id(&generator))]
            }
        }
        switch command {
        case "appendSections", "updateSections": return [("sections", identifiers(3) { $0.identifiedSection() })]
        case "insertSections": return [("sections", identifiers(3) { $0.identifiedSection() })] + placement(&self, "beforeSection", "afterSection") { $0.section() }
        case "deleteSections", "reloadSections": return [("sections", identifiers(3) { $0.section() })]
        case "moveSection": return [("section", section())] + placement(&self, "beforeSection", "afterSection") { $0.section() }
        case "appendItems": return [("items", elements(4))] + (choices.chance(60) ? [("toSection", section())] : [])
        case "insertItems": return [("items", elements(3))] + placement(&self, "beforeItem", "afterItem") { $0.item() }
        case "moveItem": return [("item", item())] + placement(&self, "beforeItem", "afterItem") { $0.item() }
        case "deleteAllItems": return []
        default: return [("items", elements(3))]  // deleteItems, reloadItems, reconfigureItems, updateItems
        }
    }

    private mutating func identifiedSection() -> String {
        choices.chance(70) ? section() : "{\"id\":" + section() + ",\"data\":" + payload() + "}"
    }

    private mutating func batchOperation() -> String {
        let command = choices.chance(95) ? choices.pick(Self.edits) : choices.pick(["apply", "batch", "frobnicate"])
        return "{" + (["\"cmd\":" + string(command)] + edit(command).map { string($0.0) + ":" + $0.1 }).joined(separator: ",") + "}"
    }

    private mutating func outlineOperation() -> String {
        let op = choices.pick(["append", "append", "insert", "delete", "deleteAll", "replaceChildren", "expand", "collapse", "bogus"])
        var members = ["\"op\":" + string(op)]
        switch op {
        case "append":
            members.append("\"items\":" + elements(3))
            if choices.chance(60) { members.append("\"parent\":" + item()) }
        case "insert":
            members.append("\"items\":" + elements(2))
            members.append((choices.chance(50) ? "\"before\":" : "\"after\":") + item())
        case "replaceChildren":
            members += ["\"parent\":" + item(), "\"snapshot\":{\"items\":[" + some(2) { $0.outlineItem(depth: 1) }.joined(separator: ",") + "]}"]
        case "deleteAll": break
        default: members.append("\"items\":" + identifiers(3) { $0.item() })
        }
        return "{" + members.joined(separator: ",") + "}"
    }

    private mutating func outlineItem(depth: Int) -> String {
        guard depth < 6, choices.chance(40) else { return item() }
        var text = "{\"id\":" + item()
        if choices.chance(70) { text += ",\"children\":[" + some(2) { $0.outlineItem(depth: depth + 1) }.joined(separator: ",") + "]" }
        if choices.chance(30) { text += ",\"expanded\":" + choices.pick(["true", "false"]) }
        return text + "}"
    }
}
