@testable import CellCore
import DiffableCore
import Testing

/// `count` sections `{{#n}}` open inside one another, then closed.
func nested(_ count: Int, inner: String = "x") -> String {
    String(repeating: "{{#n}}", count: count) + inner + String(repeating: "{{/n}}", count: count)
}

func limitError(_ error: any Error, mentioning path: String) -> Bool {
    guard let error = error as? CellError else { return false }
    return error.code == .limitExceeded && error.message.contains(path)
}

@Suite("Template limits at register")
struct TemplateCompileLimitTests {
    @Test func nestingUpToTheDepthLimitCompilesAndRenders() throws {
        let template = try ValueTemplate(.string(nested(64)), path: "t")
        #expect(template.render(context(Item("x", data: ["n": true]))) == "x")
    }

    @Test func nestingPastTheDepthLimitIsLimitExceededNamingThePath() {
        #expect { try ValueTemplate(.string(nested(65)), path: "r.contentConfiguration.text") } throws: {
            limitError($0, mentioning: "r.contentConfiguration.text") && ($0 as! CellError).message.contains("64 deep")
        }
        // What overflowed the old engine's stack: refused after 64 levels, without recursion.
        #expect { try ValueTemplate(.string(nested(2_600)), path: "deep") } throws: { limitError($0, mentioning: "deep") }
        #expect { try ValueTemplate(.string(String(repeating: "{{^n}}", count: 10_000)), path: "open") } throws: {
            limitError($0, mentioning: "open")
        }
    }

    @Test func theDepthLimitCountsOpenSectionsNotSectionsInSequence() throws {
        // 80 runs of 60 sections one inside the other, one after another: fine.
        let template = try ValueTemplate(.string(String(repeating: nested(60), count: 80)), path: "t")
        #expect(template.render(context(Item("x", data: ["n": true]))).stringValue?.count == 80)
    }

    @Test func aTemplateOverTheSizeLimitIsRefusedBeforeCompiling() {
        let limits = TemplateLimits.standard
        let big = "{{title}}" + String(repeating: "a", count: limits.maxTemplateBytes - 9 + 1)
        #expect { try ValueTemplate(.string(big), path: "r.contentConfiguration.text") } throws: {
            limitError($0, mentioning: "r.contentConfiguration.text") && ($0 as! CellError).message.contains("65536")
        }
        // 500,000 tags (2.5 MB): refused by size, never parsed.
        let tags = String(repeating: "{{a}}", count: 500_000)
        #expect { try ValueTemplate(.string(tags), path: "many") } throws: { limitError($0, mentioning: "many") }
        // Exactly at the limit: compiles.
        let atLimit = "{{title}}" + String(repeating: "a", count: limits.maxTemplateBytes - 9)
        #expect(throws: Never.self) { try ValueTemplate(.string(atLimit), path: "t") }
        // Strings without templates are not templates: no limit here (the line limit bounds them).
        #expect(throws: Never.self) { try ValueTemplate(.string(String(repeating: "a", count: 100_000)), path: "t") }
    }

    @Test func aRegistrationsTemplatesTogetherHaveALimit() {
        let field = "{{title}}" + String(repeating: "b", count: 60_000)
        let twoFields: JSONValue = ["contentConfiguration": ["type": "subtitleCell", "text": .string(field), "secondaryText": .string(field)]]
        #expect(throws: Never.self) { try Registration(name: "big", definition: twoFields) }
        var threeFields = twoFields
        if case .object(var members) = threeFields {
            members["accessories"] = [["type": "label", "text": .string(field)]]
            threeFields = .object(members)
        }
        #expect { try Registration(name: "big", definition: threeFields) } throws: {
            // Compiled in a fixed order: content (keys sorted), background, accessories.
            limitError($0, mentioning: "big.accessories[0].text") && ($0 as! CellError).message.contains("131072")
        }
    }

    @Test func limitsCanBeLowered() {
        let limits = TemplateLimits(maxDepth: 2, maxTemplateBytes: 25)
        #expect { try ValueTemplate(.string("{{#a}}{{#b}}{{#c}}{{/c}}{{/b}}{{/a}}"), path: "t", limits: limits) } throws: { limitError($0, mentioning: "t") }
        #expect { try ValueTemplate(.string("{{a}}{{b}}{{c}}{{d}}{{e}}x"), path: "t", limits: limits) } throws: { limitError($0, mentioning: "t") }
        #expect(throws: Never.self) { try ValueTemplate(.string(nested(2)), path: "t", limits: limits) }
    }

    /// Compiling looks at each byte a bounded number of times, whatever the shape of the template: the
    /// work per byte stays under a constant as templates grow (the old engine's grew with the size).
    @Test(arguments: [
        "{{a}}", "{{ a.b.c }}", "{{{a}}}{{& b}}", "{{! comment }}", "  {{#a}}\n  x\n  {{/a}}\n", nested(64), "{ } {{^a}}{{/a}}",
        "{{" + String(repeating: "n", count: 1_000) + "}}", "{{#a}}{{.}}{{/a}}\r\n",
    ])
    func compilingIsLinear(unit: String) throws {
        func workPerByte(_ repeats: Int) throws -> Double {
            let text = String(repeating: unit, count: repeats)
            guard case .text(let template) = try ValueTemplate(.string(text), path: "t") else {
                Issue.record("not a template")
                return 0
            }
            return Double(template.compileWork) / Double(text.utf8.count)
        }
        let small = try workPerByte(max(1, 1_000 / unit.utf8.count))
        let large = try workPerByte(max(1, 60_000 / unit.utf8.count))
        #expect(large <= 2, "compile work per byte: \(large)")
        #expect(large <= small * 1.1, "work per byte grows with the size: \(small) → \(large)")
    }
}
