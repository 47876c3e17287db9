@testable import CellCore
import DiffableCore
import Testing

/// A payload with every kind of value the features below read.
let everything = Item(
    "it",
    data: [
        "title": "T", "n": 0, "flag": false, "yes": true, "tags": ["a", "b"], "empty": [], "nothing": nil, "str": "",
        "lastAnswer": ["content": "C", "n": 5], "nested": [[1, 2], [3]], "objs": [["k": "x"], ["k": "y", "title": "Y"]], "d": 1.5,
    ])

func rendered(_ text: String, _ item: Item = everything, state: CellState = CellState()) throws -> String? {
    try ValueTemplate(.string(text), path: "t").render(context(item, state: state)).stringValue
}

@Suite("Template features")
struct TemplateFeatureTests {
    /// Each template with what the engine listd used before (swift-mustache, and its own variable-only
    /// path) rendered for it: the output did not change.
    @Test(arguments: [
        ("{{title}}", "T"), ("{{ title }}", "T"), ("{{{title}}}", "T"), ("{{& title}}", "T"), ("{{lastAnswer.content}}", "C"),
        ("{{n}}/{{d}}/{{yes}}/{{flag}}/{{nothing}}/{{str}}", "0/1.5/true/false//"), ("{{item}} {{id}} {{section}} {{index}}", "it it consult 3"),
        ("{{tags}}", #"["a","b"]"#), ("{{lastAnswer}}", #"{"content":"C","n":5}"#), ("{{tags.1}}", "b"), ("{{nope}}{{title.deeper}}", ""),
        ("{{#tags}}<{{.}}>{{/tags}}", "<a><b>"), ("{{#empty}}x{{/empty}}", ""), ("{{#nothing}}x{{/nothing}}", ""), ("{{#nope}}x{{/nope}}", ""),
        ("{{#flag}}x{{/flag}}", ""), ("{{#yes}}x{{/yes}}", "x"), ("{{#n}}[{{.}}]{{/n}}", "[0]"), ("{{#str}}[{{.}}]{{/str}}", "[]"),
        ("{{#lastAnswer}}{{content}}{{n}}{{title}}{{/lastAnswer}}", "C5T"), ("{{#objs}}{{k}}{{title}},{{/objs}}", "xT,yY,"),
        ("{{#nested}}({{#.}}{{.}}{{/.}}){{/nested}}", "(12)(3)"), ("{{#lastAnswer}}{{.n}}{{.title}}{{/lastAnswer}}", "5"),
        ("{{^empty}}none{{/empty}}", "none"), ("{{^tags}}none{{/tags}}", ""), ("{{^nothing}}a{{/nothing}}{{^flag}}b{{/flag}}{{^nope}}c{{/nope}}", "abc"),
        ("{{^n}}x{{/n}}{{^str}}y{{/str}}{{^yes}}z{{/yes}}", ""), ("{{! a comment }}T", "T"), ("a{{!c}}b", "ab"),
        ("{{#state.selected}}✓ {{/state.selected}}{{title}}", "T"), ("{{state.selected}}", "false"),
        // Standalone tags take their line; other whitespace stays.
("a\n  {{#tags}}\n  - {{.}}\n  {{/tags}}\nb", "a\n  - a\n  - b\nb"),
        ("a\n  {{! note }}\nb", "a\nb"), ("a {{#yes}} b {{/yes}} c", "a  b  c"), ("\r\n{{n}}", "\r\n0"), ("{{title}}  ", "T  "),
        ("a\n{{^flag}}\r\nx\r\n{{/flag}}\r\n", "a\nx\r\n"), ("{ {{title}} }", "{ T }"),
    ])
    func rendersAsBefore(template: String, expected: String) throws {
        #expect(try rendered(template) == expected)
        // The same from the payload as a snapshot keeps it, packed (members rebuilt one at a time).
        let packed = TemplateContext(
            item: everything.id, packedData: PackedPayload(everything.data), section: "consult", indexPath: IndexPath(section: 0, item: 3),
            state: CellState())
        #expect(try ValueTemplate(.string(template), path: "t").render(packed).stringValue == expected, "from the packed payload")
    }

    /// Where the old engine differed from its own variable-only path, templates now follow the Mustache
    /// rules as variable-only templates always did: a standalone tag on the first line takes its line
    /// (the old engine kept the line break), and spaces ending a template stay (it dropped them).
    @Test func firstLinesAndTrailingSpacesFollowMustache() throws {
        #expect(try rendered("{{#yes}}\nline\n{{/yes}}\n") == "line\n")
        #expect(try rendered("{{#yes}}x{{/yes}}\n  ") == "x\n  ")
    }

    @Test func stateIsReadable() throws {
        var state = CellState()
        try state.update(with: ["selected": true, "badge": 3])
        #expect(try rendered("{{#state.selected}}✓ {{/state.selected}}{{title}}{{#state.badge}} ({{.}}){{/state.badge}}", state: state) == "✓ T (3)")
    }

    @Test(arguments: [
        "{{#open}}never closed", "{{/close}}", "{{#a}}{{/b}}", "{{> partial}}", "{{=<% %>=}}", "{{% CONTENT_TYPE: HTML}}",
        "{{<parent}}{{/parent}}", "{{$block}}{{/block}}", "{{upper(title)}}", "{{}}", "{{title", "{{{title}}", "{{! never closed",
        "{{a b}}", "{{#}}{{/}}",
    ])
    func unsupportedOrMalformedTemplatesDoNotCompile(template: String) {
        #expect { try ValueTemplate(["text": .string(template)], path: "r.contentConfiguration") } throws: {
            ($0 as? CellError)?.code == .invalidRegistration && ($0 as! CellError).message.contains("r.contentConfiguration.text")
        }
    }
}

@Suite("Template render budget")
struct TemplateRenderBudgetTests {
    /// The attacker's template: a section nested in itself over 4,000 numbers (16 million passes).
    @Test func aSectionNestedInItselfOverALargeArrayRunsOutOfSteps() throws {
        let item = Item("big", data: ["n": .array((0..<4_000).map { .int($0) })])
        let registration = try Registration(
            name: "r", definition: ["contentConfiguration": ["type": "cell", "text": "{{#n}}{{#n}}{{.}}{{/n}}{{/n}}"]])
        #expect { try registration.configure(context(item)) } throws: { limitError($0, mentioning: "r.contentConfiguration.text") }
        // Without output, it is the steps that run out, and rendering stops there.
        var budget = RenderBudget()
        let template = try Template("{{#n}}{{#n}}{{/n}}{{/n}}", path: "t")
        #expect { try template.render(context(item), budget: &budget) } throws: {
            limitError($0, mentioning: "t") && ($0 as! CellError).message.contains("100000 steps")
        }
        #expect(budget.steps <= TemplateLimits.standard.maxCellRenderSteps + 64, "stops at the limit: \(budget.steps)")
        // The same template over a small array is fine.
        #expect(try registration.configure(context(Item("s", data: ["n": [1, 2]]))).content["text"] == "1212")
    }

    @Test func oneTemplatesOutputHasALimit() throws {
        let item = Item("x", data: ["half": .string(String(repeating: "h", count: 40_000))])
        var first = RenderBudget()
        #expect { try Template("{{half}}{{half}}", path: "r.text").render(context(item), budget: &first) } throws: {
            limitError($0, mentioning: "r.text") && ($0 as! CellError).message.contains("65536 bytes")
        }
        var budget = RenderBudget()
        #expect(try Template("{{half}}", path: "t").render(context(item), budget: &budget).utf8.count == 40_000)
        #expect(budget.outputBytes == 40_000)
    }

    @Test func aCellsTemplatesTogetherHaveAnOutputLimit() throws {
        let item = Item("x", data: ["part": .string(String(repeating: "p", count: 60_000))])
        var properties: [String: JSONValue] = ["type": "plugin:big"]
        for key in ["a", "b", "c", "d", "e"] { properties[key] = "{{part}}" }
        let registration = try Registration(name: "r", definition: ["contentConfiguration": .object(properties)])
        // 5 × 60,000 > 256 KiB: the fifth property (in key order) goes over.
        #expect { try registration.checkPluginRendering(context(item)) } throws: {
            limitError($0, mentioning: "r.contentConfiguration.e") && ($0 as! CellError).message.contains("262144 bytes")
        }
        // What a plugin is sent stays within the limits: the property over them is empty.
        let sent = registration.pluginProperties(context(item))
        #expect(sent["a"]?.stringValue?.count == 60_000 && sent["e"] == "")
    }

    @Test func aVariableNamingAHugeObjectStopsAtTheLimitInsteadOfWritingItAll() throws {
        let huge: JSONValue = .array((0..<200_000).map { .object(["k": .int($0)]) })
        var budget = RenderBudget()
        #expect { try Template("{{all}}", path: "t").render(context(Item("x", data: ["all": huge])), budget: &budget) } throws: {
            limitError($0, mentioning: "t")
        }
        // Stopped after about 64 KiB of output, not after writing 2 MB.
        #expect(budget.steps < 30_000 && budget.outputBytes <= 65_536)
        let longString = String(repeating: "s", count: 1_000_000)
        var second = RenderBudget()
        #expect(throws: CellError.self) { try Template("{{#all}}{{.}}{{/all}}", path: "t").render(context(Item("x", data: ["all": [.string(longString)]])), budget: &second) }
        #expect(second.outputBytes == 0, "a string longer than what is left is refused before it is copied")
    }

    @Test func lookupsThroughDeepContextsCostSteps() throws {
        // 64 nested sections over one-element arrays, with a name found only at the root: each lookup
        // looks through every context, and pays for it.
        let item = Item("x", data: ["a": [["b": 1]], "title": "T"])
        let text = String(repeating: "{{#a}}", count: 64) + String(repeating: "{{title}}", count: 2_000) + String(repeating: "{{/a}}", count: 64)
        var budget = RenderBudget()
        #expect { try Template(text, path: "t").render(context(item), budget: &budget) } throws: { limitError($0, mentioning: "t") }
    }
}
