import CellCore
import DiffableCore
import Testing

/// Configurations are checked when registered (every key known, literal values of their kind, the key
/// meant suggested) and templated values once rendered; accessories as UIKit has them.
@Suite("Configuration checks and accessories")
struct ConfigurationCheckTests {
    func refusal(_ definition: JSONValue, checking: Registration.Checking = .strict) -> String? {
        do throws(CellError) {
            _ = try Registration(name: "r", definition: definition, checking: checking)
            return nil
        } catch {
            return error.code == .invalidRegistration ? error.message : "\(error)"
        }
    }

    func cell(_ content: JSONValue = ["type": "cell", "text": "{{title}}"], accessories: JSONValue? = nil) -> JSONValue {
        var definition: [String: JSONValue] = ["contentConfiguration": content]
        if let accessories { definition["accessories"] = accessories }
        return .object(definition)
    }

    @Test func unknownKeysAreRefusedWithTheirPathAndTheKeyMeant() {
        let cases: [(JSONValue, String)] = [
            (cell(["type": "cell", "textProperties": ["numberOfLine": 2]]),
             #"r.contentConfiguration.textProperties: unknown property "numberOfLine"; did you mean "numberOfLines"?"#),
            (cell(["type": "cell", "secondaryTextProperties": ["bogus": 1]]), #"r.contentConfiguration.secondaryTextProperties: unknown property "bogus"; known: "#),
            (cell(["type": "subtitleCell", "secondaryTxt": "x"]), #"unknown property "secondaryTxt"; did you mean "secondaryText"?"#),
            (cell(["type": "cell", "imageProperties": ["maximumSize": ["width": 1, "height": 2, "depth": 3]]]),
             #"r.contentConfiguration.imageProperties.maximumSize: unknown property "depth""#),
            (["contentConfiguration": ["type": "cell"], "background": ["type": "listGroupedCell", "strokeWidht": 1]],
             #"r.background: unknown property "strokeWidht"; did you mean "strokeWidth"?"#),
            (cell(accessories: [["type": "checkmark", "isHidden": true]]), #"r.accessories[0]: unknown property "isHidden"; did you mean "hidden"?"#),
            (cell(accessories: [["type": "checkmark", "text": "x"]]), #"r.accessories[0]: unknown property "text""#),
            (cell(accessories: [["type": "chekmark"]]), #"did you mean "checkmark"?"#),
            (["contentConfiguration": ["type": "cell"], "accesories": []], #"unknown member "accesories"; did you mean "accessories"?"#),
            (cell(["type": "subtitelCell"]), #"unknown content configuration type "subtitelCell"; did you mean "subtitleCell"?"#),
            (["contentConfiguration": ["type": "cell"], "background": ["type": "listGropedCell"]], #"did you mean "listGroupedCell"?"#),
        ]
        for (definition, expected) in cases {
            let message = refusal(definition)
            #expect(message?.contains(expected) == true, "\(definition): \(message ?? "accepted")")
        }
    }

    @Test func literalValuesAreCheckedAgainstTheirKind() {
        let cases: [(JSONValue, String)] = [
            (cell(["type": "cell", "textProperties": ["font": "notAFont"]]), #"r.contentConfiguration.textProperties.font: "notAFont" is not a font"#),
            (cell(["type": "cell", "textProperties": ["font": "headlin"]]), #"did you mean "headline"?"#),
            (cell(["type": "cell", "textProperties": ["font": "body.heavy"]]), "is not a font"),
            (cell(["type": "cell", "imageProperties": ["maximumSize": "huge"]]),
             #"r.contentConfiguration.imageProperties.maximumSize: "huge" is not a size {width, height} in points."#),
            (cell(["type": "cell", "imageProperties": ["maximumSize": ["width": 10]]]), #"maximumSize: "height" is required"#),
            (cell(["type": "cell", "textProperties": ["color": "systemRedd"]]), #"did you mean "systemRed"?"#),
            (cell(["type": "cell", "textProperties": ["color": "#12345"]]), "is not a colour"),
            (cell(["type": "cell", "textProperties": ["alignment": "centre"]]), #"is not one of natural, center, justified; did you mean "center"?"#),
            (cell(["type": "cell", "textProperties": ["numberOfLines": -1]]), "numberOfLines: -1 is not an integer ≥ 0."),
            (cell(["type": "cell", "textProperties": ["numberOfLines": "two"]]), "is not an integer"),
            (cell(["type": "cell", "textProperties": "{{style}}"]), "textProperties: must be an object {"),
            (cell(["type": "cell", "prefersSideBySideTextAndSecondaryText": "yes"]), "is not a boolean"),
            (cell(["type": "cell", "text": 5]), "r.contentConfiguration.text: 5 is not a string."),
            (cell(accessories: [["type": "checkmark", "tintColor": "rainbow"]]), "r.accessories[0].tintColor"),
            (cell(accessories: [["type": "detail", "reservedLayoutWidth": "wide"]]), #"is not "actual", "standard" or a number of points"#),
            (cell(accessories: [["type": "label"]]), #"r.accessories[0]: "text" is required."#),
            (cell(accessories: [["type": "popUpMenu", "menu": []]]), "r.accessories[0].menu: must not be empty."),
            (cell(accessories: [["type": "outlineDisclosure", "style": "fancy"]]), "is not one of automatic, header, cell"),
            (["contentConfiguration": ["type": "cell"], "background": ["type": "clear", "edgesAddingLayoutMarginsToBackgroundInsets": ["top", "side"]]],
             #"edgesAddingLayoutMarginsToBackgroundInsets[1]: "side" is not one of top"#),
        ]
        for (definition, expected) in cases {
            let message = refusal(definition)
            #expect(message?.contains(expected) == true, "\(definition): \(message ?? "accepted")")
        }
    }

    @Test func everyKnownKeyAndValueIsAccepted() throws {
        let text: JSONValue = [
            "font": "title3.bold", "color": "#ff9500", "colorTransformer": "grayscale", "alignment": "center", "lineBreakMode": "byTruncatingMiddle",
            "numberOfLines": 0, "transform": "uppercase", "adjustsFontSizeToFitWidth": true, "minimumScaleFactor": 0.5,
            "allowsDefaultTighteningForTruncation": false, "adjustsFontForContentSizeCategory": true, "showsExpansionTextWhenTruncated": true,
        ]
        let definition: JSONValue = [
            "contentConfiguration": [
                "type": "subtitleCell", "text": "{{title}}", "secondaryText": "x", "image": "star", "textProperties": text, "secondaryTextProperties": text,
                "imageProperties": [
                    "tintColor": "systemTeal", "tintColorTransformer": "preferredTint", "cornerRadius": 4, "maximumSize": ["width": 20, "height": 20.5],
                    "reservedLayoutSize": ["width": 24, "height": 24], "accessibilityIgnoresInvertColors": true,
                    "preferredSymbolConfiguration": ["pointSize": 17, "weight": "semibold", "scale": "large", "textStyle": "body"],
                ],
                "prefersSideBySideTextAndSecondaryText": true, "directionalLayoutMargins": ["top": 4, "leading": -2],
                "axesPreservingSuperviewLayoutMargins": "both", "imageToTextPadding": 8, "textToSecondaryTextVerticalPadding": 2,
                "textToSecondaryTextHorizontalPadding": 4,
            ],
            "background": [
                "type": "listGroupedCell", "backgroundColor": "secondarySystemGroupedBackground", "backgroundColorTransformer": "monochromeTint",
                "cornerRadius": 12, "strokeColor": "separator", "strokeColorTransformer": "grayscale", "strokeWidth": 1, "strokeOutset": -1,
                "backgroundInsets": ["leading": 16, "trailing": 16], "edgesAddingLayoutMarginsToBackgroundInsets": ["all"], "image": "paper",
                "imageContentMode": "scaleAspectFill",
            ],
            "accessories": [
                ["type": "disclosureIndicator", "tintColor": "systemGray", "reservedLayoutWidth": "actual"],
                ["type": "outlineDisclosure", "style": "header", "hidden": false],
                ["type": "checkmark", "reservedLayoutWidth": 24, "displayed": "whenNotEditing"],
                ["type": "delete", "backgroundColor": "systemRed"], ["type": "insert", "backgroundColor": "systemGreen"],
                ["type": "reorder", "showsVerticalSeparator": false], ["type": "multiselect", "backgroundColor": "clear"],
                ["type": "label", "text": "{{count}}", "font": "footnote", "adjustsFontForContentSizeCategory": true],
                ["type": "detail", "reservedLayoutWidth": "standard"], ["type": "popUpMenu", "menu": ["Low", "{{level}}"], "selectedElement": "Low"],
                ["type": "customView", "text": "★", "placement": "leading", "maintainsFixedSize": true],
            ],
        ]
        _ = try Registration(name: "everything", definition: definition)
        #expect(AccessoryKind.allCases.count == 11, "UIKit's eleven kinds")
    }

    @Test func pluginTypesStayFreeFormAndStoredDefinitionsKeepLoading() throws {
        _ = try Registration(name: "card", definition: ["contentConfiguration": ["type": "plugin:card", "utcOffsetMinutes": 540, "anything": ["at": "all"]]])
        let stored: JSONValue = cell(["type": "cell", "textProperties": ["bogus": 1, "font": "notAFont"]])
        #expect(refusal(stored) != nil)
        #expect(refusal(stored, checking: .asStored) == nil, "a definition stored by an earlier listd still loads")
    }

    @Test func templatedValuesAreCheckedOnceRendered() throws {
        let registration = try Registration(
            name: "todo",
            definition: cell([
                "type": "cell", "text": "{{title}}",
                "textProperties": ["font": "{{font}}", "numberOfLines": "{{lines}}", "color": "{{#late}}systemRed{{/late}}"],
            ], accessories: [["type": "checkmark", "hidden": "{{^done}}true{{/done}}{{#done}}false{{/done}}"]]))
        let good = try registration.configure(context(Item("a", data: ["title": "A", "font": "headline", "lines": 2, "done": true])))
        #expect(good.content["textProperties"] == ["font": "headline", "numberOfLines": 2], "a number rendered becomes one; an empty colour is unset")
        #expect(good.accessories.arrayValue.first?["hidden"] == false)
        let late = try registration.configure(context(Item("b", data: ["title": "B", "font": "body", "lines": 1, "late": true])))
        #expect(late.content["textProperties"]?["color"] == "systemRed" && late.accessories.arrayValue.first?["hidden"] == true)
        #expect {
            try registration.configure(context(Item("c", data: ["title": "C", "font": "notAFont", "lines": 1])))
        } throws: { error in
            guard let error = error as? CellError else { return false }
            return error.code == .invalidRegistration
                && error.message.hasPrefix(#"todo.contentConfiguration.textProperties.font: its template rendered "notAFont", which is not a font"#)
        }
        #expect(throws: CellError.self) { try registration.configure(context(Item("d", data: ["title": "D", "font": "body", "lines": "many"]))) }
        let onlyColor = try Registration(name: "c", definition: cell(["type": "cell", "textProperties": ["color": "{{#late}}systemRed{{/late}}"]]))
        #expect(try onlyColor.configure(context(Item("e", data: [:]))).content == ["type": "cell"], "an object left empty is left out")
    }

    /// A definition read back from the store renders as it did when registered: its templated values
    /// typed (a restarted listd, or a PostgreSQL store that reloads it, showed `"hidden": "true"`).
    @Test func aStoredDefinitionThatMeetsTheSchemaRendersTyped() throws {
        let definition = cell(
            ["type": "cell", "text": "{{title}}", "textProperties": ["numberOfLines": "{{lines}}"]],
            accessories: [["type": "checkmark", "hidden": "{{^done}}true{{/done}}{{#done}}false{{/done}}"]])
        let registered = try Registration(name: "todo", definition: definition)
        let stored = try Registration(name: "todo", definition: definition, checking: .asStored)
        let item = Item("a", data: ["title": "A", "lines": 2])
        let fresh = try registered.configure(context(item))
        let reloaded = try stored.configure(context(item))
        #expect(reloaded.accessories.arrayValue.first?["hidden"] == true)
        #expect(reloaded.content["textProperties"] == ["numberOfLines": 2])
        #expect(reloaded.content == fresh.content && reloaded.accessories == fresh.accessories)
    }

    /// UIKit's `.checkmark()` shows whenever it is displayed: not only when the cell is selected.
    @Test func aCheckmarkShowsUnlessHidden() throws {
        let registration = try Registration(name: "done", definition: cell(accessories: [["type": "checkmark"], ["type": "checkmark", "hidden": true]]))
        let unselected = try registration.configure(context(Item("a", data: ["title": "A"])))
        #expect(unselected.accessories == [["type": "checkmark", "displayed": "always"], ["type": "checkmark", "displayed": "always", "hidden": true]])
        var selected = CellState()
        selected.selected = true
        #expect(try registration.configure(context(Item("a", data: ["title": "A"]), state: selected)).accessories == unselected.accessories)
    }

    @Test func everyKindHasItsDisplayedDefaultAndTheEditingOnesShowWhileEditing() throws {
        let accessories: [JSONValue] = AccessoryKind.allCases.map { kind in
            var accessory: [String: JSONValue] = ["type": .string(kind.rawValue)]
            if kind.requiredProperties.contains("text") { accessory["text"] = "t" }
            if kind.requiredProperties.contains("menu") { accessory["menu"] = ["one"] }
            return .object(accessory)
        }
        let registration = try Registration(name: "all", definition: cell(accessories: .array(accessories)))
        let shown = try registration.configure(context(Item("a", data: [:]))).accessories.arrayValue.compactMap { $0["type"]?.stringValue }
        #expect(shown == ["disclosureIndicator", "outlineDisclosure", "checkmark", "label", "detail", "popUpMenu", "customView"])
        var editing = CellState()
        editing.editing = true
        let whileEditing = try registration.configure(context(Item("a", data: [:]), state: editing)).accessories.arrayValue
        #expect(whileEditing.count == AccessoryKind.allCases.count)
        for accessory in whileEditing {
            let kind = AccessoryKind(rawValue: accessory["type"]?.stringValue ?? "")!
            #expect(accessory["displayed"] == kind.defaults["displayed"])
        }
    }

    @Test func theSchemaSaysWhatEachPropertyTakes() {
        #expect(ConfigurationSchema.textProperties["numberOfLines"]!.summary == "an integer ≥ 0")
        #expect(PropertyType.size.summary == "a size {width, height} in points")
        #expect(AccessoryKind.label.properties.keys.sorted() == ["adjustsFontForContentSizeCategory", "displayed", "font", "hidden", "reservedLayoutWidth", "text", "tintColor"])
        #expect(ListContentStyle.properties == Set(ConfigurationSchema.content.keys))
    }
}
