import CellCore
import DiffableCore
import Testing

let consult = Item(
    "consult-1",
    data: [
        "title": "감기에 걸렸을때 어느 병원으로 가야할까요?", "readCnt": 22,
        "lastAnswer": ["content": "안녕하세요 <박지혜> & co", "profileImg": ""], "tags": ["a", "b"],
    ])

func context(_ item: Item, state: CellState = CellState(), section: String = "consult") -> TemplateContext {
    TemplateContext(item: item.id, data: item.data, section: section, indexPath: IndexPath(section: 0, item: 3), state: state)
}

@Suite("Templates")
struct TemplateTests {
    @Test func rendersPayloadPathsWithoutEscaping() throws {
        let template = try ValueTemplate(
            ["text": "{{title}}", "secondaryText": "{{lastAnswer.content}}", "image": "{{#tags}}{{.}}{{/tags}}", "n": 2, "id": "{{item}}@{{index}} in {{section}}"],
            path: "t")
        let rendered = template.render(context(consult))
        #expect(rendered["text"] == "감기에 걸렸을때 어느 병원으로 가야할까요?")
        #expect(rendered["secondaryText"] == "안녕하세요 <박지혜> & co", "text output: no HTML escaping")
        #expect(rendered["image"] == "ab")
        #expect(rendered["n"] == 2)
        #expect(rendered["id"] == "consult-1@3 in consult")
    }

    @Test func readsState() throws {
        var state = CellState()
        let template = try ValueTemplate("{{#state.selected}}✓ {{/state.selected}}{{title}}{{#state.isFavorite}} ★{{/state.isFavorite}}", path: "t")
        #expect(template.render(context(Item("x", data: ["title": "A"]))) == "A")
        try state.update(with: ["selected": true, "isFavorite": true])
        #expect(template.render(context(Item("x", data: ["title": "A"]), state: state)) == "✓ A ★")
        #expect(state.json["isFavorite"] == true && state.json["editing"] == false)
        #expect(throws: CellStateError.self) { try state.update(with: ["selected": "yes"]) }
        try state.update(with: ["isFavorite": nil])
        #expect(state.custom.isEmpty)
    }

    @Test func missingValuesRenderEmpty() throws {
        let template = try ValueTemplate("[{{nope}}][{{lastAnswer.nope}}][{{title.deeper}}]", path: "t")
        #expect(template.render(context(consult)) == "[][][]")
    }

    @Test func badTemplatesAreRegistrationErrors() {
        #expect { try ValueTemplate(["text": "{{#open}}never closed"], path: "contentConfiguration") } throws: {
            ($0 as? CellError)?.code == .invalidRegistration && ($0 as! CellError).message.contains("contentConfiguration.text")
        }
    }
}

@Suite("Registrations")
struct RegistrationTests {
    @Test func subtitleCellWithDefaultsAndOverrides() throws {
        let registration = try Registration(
            name: "consultCell",
            definition: [
                "contentConfiguration": [
                    "type": "subtitleCell", "text": "{{title}}", "secondaryText": "{{lastAnswer.content}}",
                    "secondaryTextProperties": ["numberOfLines": 2],
                ],
                "background": ["type": "listGroupedCell", "cornerRadius": 12],
                "accessories": [["type": "disclosureIndicator"], ["type": "delete"], ["type": "label", "text": "{{readCnt}}"]],
            ])
        #expect(registration.kind == .cell)
        let cell = try registration.configure(context(consult))
        #expect(cell.type == "subtitleCell")
        #expect(cell.content["type"] == "subtitleCell")
        #expect(cell.content["text"] == "감기에 걸렸을때 어느 병원으로 가야할까요?")
        #expect(cell.content["secondaryTextProperties"] == ["numberOfLines": 2], "content carries what differs from the defaults")
        #expect(cell.content["secondaryTextPlacement"] == nil)
        #expect(cell.resolvedContent["secondaryTextProperties"]?["numberOfLines"] == 2)
        #expect(cell.resolvedContent["secondaryTextProperties"]?["font"] == "subheadline", "the style's defaults stay")
        #expect(cell.resolvedContent["secondaryTextPlacement"] == "below")
        #expect(cell.background["cornerRadius"] == 12 && cell.background["type"] == "listGroupedCell")
        #expect(cell.accessories.arrayValue.compactMap { $0["type"]?.stringValue } == ["disclosureIndicator", "label"], "delete shows only while editing")
        #expect(cell.accessories.arrayValue.last?["text"] == "22")

        var editing = CellState()
        editing.editing = true
        editing.disabled = true
        editing.selected = true
        let edited = try registration.configure(context(consult, state: editing))
        #expect(edited.accessories.arrayValue.compactMap { $0["type"]?.stringValue } == ["disclosureIndicator", "delete", "label"])
        #expect(edited.content["textProperties"]?["color"] == "secondaryLabel", "disabled dims the text")
        #expect(edited.resolvedContent["textProperties"]?["font"] == "body")
        #expect(edited.background["backgroundColor"] == "systemGray4", "selected takes the selection color")
    }

    @Test func everyBuiltInStyleConfigures() throws {
        for style in ListContentStyle.allCases {
            let registration = try Registration(
                name: style.rawValue,
                definition: style.isSupplementary
                    ? ["kind": "supplementary", "elementKind": "header", "contentConfiguration": ["type": .string(style.rawValue), "text": "{{title}}"]]
                    : ["contentConfiguration": ["type": .string(style.rawValue), "text": "{{title}}"]])
            let cell = try registration.configure(context(consult))
            #expect(cell.content["type"] == .string(style.rawValue))
            #expect(cell.resolvedContent["textProperties"]?["font"] != nil)
        }
        #expect(ListContentStyle.groupedHeader.defaults["textProperties"]?["transform"] == "uppercase")
        #expect(ListContentStyle.valueCell.defaults["secondaryTextPlacement"] == "trailing")
    }

    @Test func invalidDefinitions() {
        let cases: [(JSONValue, String)] = [
            (["contentConfiguration": ["type": "fancyCell"]], "unknown content configuration type \"fancyCell\""),
            (["contentConfiguration": ["type": "cell", "colour": "red"]], "unknown property \"colour\""),
            (["contentConfiguration": ["text": "x"]], "contentConfiguration.type"),
            (["kind": "supplementary", "contentConfiguration": ["type": "plainHeader"]], "elementKind"),
            (["kind": "cell", "elementKind": "header", "contentConfiguration": ["type": "cell"]], "only for supplementary"),
            (["contentConfiguration": ["type": "cell"], "background": ["type": "glass"]], "background.type"),
            (["contentConfiguration": ["type": "cell"], "accessories": [["type": "rocket"]]], "accessories[0]"),
            (["contentConfiguration": ["type": "cell"], "accessories": [["type": "delete", "displayed": "sometimes"]]], "displayed"),
            (["contentConfiguration": ["type": "cell", "text": "{{#x}}"]], "does not parse"),
            (["contentConfiguration": ["type": "cell"], "extra": 1], "unknown member \"extra\""),
        ]
        for (definition, fragment) in cases {
            #expect {
                try Registration(name: "r", definition: definition)
            } throws: { error in
                (error as? CellError)?.code == .invalidRegistration && (error as! CellError).message.contains(fragment)
            }
        }
    }

    @Test func templatedTypeCanChangeAndUnknownRenderedTypeIsAnError() throws {
        let registration = try Registration(
            name: "mixed",
            definition: ["contentConfiguration": ["type": "{{#premium}}valueCell{{/premium}}{{^premium}}cell{{/premium}}", "text": "{{title}}"]])
        #expect(try registration.configure(context(Item("a", data: ["premium": true]))).type == "valueCell")
        #expect(try registration.configure(context(Item("b", data: [:]))).type == "cell")
        let broken = try Registration(name: "broken", definition: ["contentConfiguration": ["type": "{{kind}}"]])
        #expect(throws: CellError.self) { try broken.configure(context(Item("c", data: ["kind": "nonsense"]))) }
    }
}

@Suite("Cell providers")
struct CellProviderTests {
    @Test func firstMatchingRuleWins() {
        let provider = CellProvider(
            rules: [
                .init(section: "consult", registration: "consultCell"),
                .init(match: (field: "expertInfo.expertTypeName", equals: "약사"), registration: "pharmacistCell"),
                .init(section: "expert", registration: "expertCell"),
            ],
            defaultRegistration: "plainCell")
        #expect(provider.registration(for: consult, inSection: "consult") == "consultCell")
        #expect(provider.registration(for: Item("e2", data: ["expertInfo": ["expertTypeName": "약사"]]), inSection: "expert") == "pharmacistCell")
        #expect(provider.registration(for: Item("e1", data: ["expertInfo": ["expertTypeName": "한의사"]]), inSection: "expert") == "expertCell")
        #expect(provider.registration(for: Item("n1"), inSection: "numbers") == "plainCell")
        #expect(CellProvider(rules: [.init(section: "a", registration: "r")]).registration(for: Item("x"), inSection: "b") == nil)
    }
}

@Suite("Reuse pools")
struct ViewCellsTests {
    @Test func reuseAndBounds() {
        var cells = ViewCells(poolLimit: 2)
        let a = cells.obtain(registration: "R", for: "a")
        #expect(a == ("c1", false, false))
        #expect(cells.obtain(registration: "R", for: "a") == ("c1", false, true), "a displayed cell is not handed out twice")
        let b = cells.obtain(registration: "R", for: "b")
        #expect(b.id == "c2")
        #expect(cells.release(a.id) && !cells.release(a.id))
        let c = cells.obtain(registration: "R", for: "c")
        #expect(c == ("c1", true, false), "reused from the pool")
        // Pool limit: three cells leave the screen, the pool keeps two.
        let d = cells.obtain(registration: "R", for: "d")
        for id in [b.id, c.id, d.id] { cells.release(id) }
        #expect(cells.pooledCount("R") == 2)
        #expect(cells.counters["R"] == ViewCells.Counters(created: 3, reused: 1, released: 1, contentConfigurationsReplaced: 0))
        // Another registration has its own pool.
        #expect(cells.obtain(registration: "S", for: "e").reused == false)
        cells.drain(registration: "R")
        #expect(cells.pooledCount("R") == 0)
        #expect(cells.displayedCount == 1)
    }

    /// Cells are kept by number: an identifier is read as `c` and its number exactly, so that look-alikes
    /// (`c01`, `C1`, `c1 `) name no cell rather than another one.
    @Test func identifiersAreReadExactly() {
        var cells = ViewCells()
        let a = cells.obtain(registration: "R", for: "a")
        let b = cells.obtain(registration: "R", for: "b")
        #expect(cells.cells["c1"]?.displayedFor == "a" && cells.cells["c2"]?.displayedFor == "b")
        for lookalike in ["c01", "C1", "c1 ", "c", "1", "c-1", "c1c", "", "c99999999999999999999"] {
            #expect(cells.cells[lookalike] == nil, "\(lookalike)")
            let released = cells.release(lookalike)
            #expect(!released, "\(lookalike)")
        }
        #expect(Set(cells.displayedCells.map { "\($0.key)=\($0.id)" }) == ["a=c1", "b=c2"])
        #expect(Set(cells.displayedKeys) == ["a", "b"])
        let releasedB = cells.release(b.id)
        #expect(releasedB && cells.pooledCount == 1 && cells.cells["c2"]?.displayedFor == nil)
        // The item needs another registration: its cell goes back to its pool, a cell of the other comes.
        let other = cells.obtain(registration: "S", for: "a")
        #expect(other.id == "c3" && cells.pooledCount("R") == 2 && cells.displayedCell(for: "a")?.registration == "S")
        #expect(cells.displayedCount("S") == 1 && cells.displayedCount("R") == 0 && a.id == "c1")
        cells.drain(registration: "R")
        #expect(cells.cells.count == 1 && cells.pooledCount == 0)
    }

    @Test func contentConfigurationReplacedOnAReusedCell() throws {
        let registration = try Registration(
            name: "mixed", definition: ["contentConfiguration": ["type": "{{#premium}}valueCell{{/premium}}{{^premium}}cell{{/premium}}"]])
        var cells = ViewCells()
        let first = cells.obtain(registration: "mixed", for: "a")
        #expect(!cells.configured(first.id, with: try registration.configure(context(Item("a", data: ["premium": true])))))
        cells.release(first.id)
        let second = cells.obtain(registration: "mixed", for: "b")
        #expect(second.id == first.id)
        #expect(cells.configured(second.id, with: try registration.configure(context(Item("b")))), "valueCell → cell on a reused cell")
        #expect(cells.counters["mixed"]?.contentConfigurationsReplaced == 1)
    }

    /// A 40-row window scrolled over 100,000 items, down and back up: cells are created only for the
    /// window (plus one per registration in flight), the rest is reuse.
    @Test func scrollingReusesCells() {
        var cells = ViewCells()
        let rows = 40
        let count = 100_000
        func registration(_ index: Int) -> String { index % 3 == 0 ? "A" : "B" }
        var window: [Int: String] = [:]
        for first in 0..<count - rows {
            // Leaving rows go first, as a collection view ends displaying before dequeuing.
            if let leaving = window.removeValue(forKey: first - 1) { cells.release(leaving) }
            for index in first..<first + rows where window[index] == nil {
                window[index] = cells.obtain(registration: registration(index), for: "i\(index)").id
            }
        }
        for first in stride(from: count - rows - 1, through: 0, by: -1) {
            if let leaving = window.removeValue(forKey: first + rows) { cells.release(leaving) }
            if window[first] == nil { window[first] = cells.obtain(registration: registration(first), for: "i\(first)").id }
        }
        let created = cells.counters.values.reduce(0) { $0 + $1.created }
        #expect(created <= rows + 2 + 2, "created \(created)")
        #expect(cells.displayedCount == rows)
    }
}
