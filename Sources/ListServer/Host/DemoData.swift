import CellCore
import DiffableCore
import ListLayout
import ListEngine
import ListStore

/// The demo data sources (`listd --demo`), built from the seeds' sample data: the Home screen's
/// consult, company and expert lists, the emoji and numbers lists, and an emoji outline.
enum DemoData {
    static func dataSources() -> [(name: String, content: DataSourceContent)] {
        [("home", home()), ("emoji", emoji()), ("outline", outline())]
    }

    // The seeds' sizes in terminal cells: a 375-point phone is about 60 columns wide (a column is about
    // 6 points), and a row stands for about 40 points of a cell's height (its text rows, not its padding).

    /// The registrations the demo's cell providers use.
    static func registrations() -> [Registration] {
        let definitions: [(String, JSONValue)] = [
            ("consultCell", [
                "contentConfiguration": [
                    "type": "subtitleCell", "text": "{{title}}", "secondaryText": "{{lastAnswer.content}}",
                    "secondaryTextProperties": ["numberOfLines": 2],
                ],
                "accessories": [["type": "label", "text": "{{readCnt}}"], ["type": "disclosureIndicator"]],
            ]),
            ("companyCard", [
                "contentConfiguration": ["type": "subtitleCell", "text": "{{companyName}}", "secondaryText": "{{addrRoad}}", "image": "🏥"],
                "background": ["type": "listGroupedCell", "cornerRadius": 12, "strokeColor": "separator", "strokeWidth": 1],
            ]),
            ("expertCell", [
                "contentConfiguration": ["type": "valueCell", "text": "{{expertInfo.name}}", "secondaryText": "{{expertInfo.expertTypeName}}", "image": "👩‍⚕️"]
            ]),
            ("sectionHeader", [
                "kind": "supplementary", "elementKind": "header", "contentConfiguration": ["type": "groupedHeader", "text": "{{title}}"],
            ]),
            ("categoryCell", [
                "contentConfiguration": ["type": "cell", "text": "{{title}}"],
                "accessories": [["type": "outlineDisclosure"]],
            ]),
            ("emojiCell", [
                "contentConfiguration": ["type": "valueCell", "text": "{{text}} {{title}}", "secondaryText": "{{category}}"],
                "background": ["type": "listGroupedCell", "cornerRadius": 10],
            ]),
            ("emojiPlainCell", ["contentConfiguration": ["type": "cell", "text": "{{text}}"]]),
            ("numberCell", ["contentConfiguration": ["type": "cell", "text": "{{value}}"]]),
            // The outline seed's cell: a value cell (the emoji, its category) on a grouped background with
            // a corner radius of 20.
            ("categoryEmojiCell", [
                "contentConfiguration": ["type": "valueCell", "text": "{{text}}", "secondaryText": "{{category}}"],
                "background": ["type": "listGroupedCell", "cornerRadius": 20],
            ]),
            // Through the example plugins (scripts/demo runs them): the seed's Home cards, dates in Seoul
            // time, and the seed's EmojiContentConfiguration.
            ("homeCard", [
                "contentConfiguration": ["type": "plugin:card", "utcOffsetMinutes": 540, "dateFormat": "yyyy.MM.dd"],
                "background": ["type": "listGroupedCell", "cornerRadius": 12],
            ]),
            ("largeEmoji", ["contentConfiguration": ["type": "plugin:emoji"]]),
        ]
        return definitions.map { try! Registration(name: $0.0, definition: $0.1) }
    }

    /// `home`: the seed's Home.json, as sections consult, company and expert.
    static func home() -> DataSourceContent {
        var dataSource = DataSourceContent()
        let consults: [Item] = [
            Item("consult-1", data: [
                "title": "감기에 걸렸을때 어느 병원으로 가야할까요?", "readCnt": 22, "regDate": 1_635_472_394_000,
                "lastAnswer": ["content": "안녕하세요, 닥톡-네이버 지식iN 상담한의사 박지혜입니다.\n", "profileImg": ""],
            ]),
            Item("consult-2", data: [
                "title": "두통이 자주 있는데 한의원에서도 치료가 되나요?", "readCnt": 7, "regDate": 1_635_558_794_000,
                "lastAnswer": ["content": "안녕하세요, 상담한의사입니다. 원인에 따라 치료가 가능합니다.\n", "profileImg": ""],
            ]),
        ]
        let companies: [Item] = [
            Item("company-1", data: ["companyName": "닥프렌즈 병원", "addrRoad": "서울 특별시", "introPath": ""]),
            Item("company-2", data: ["companyName": "닥프렌즈 한의원", "addrRoad": "부산 광역시", "introPath": ""]),
        ]
        let experts: [Item] = [
            Item("expert-1", data: ["expertInfo": ["expertTypeName": "한의사", "name": "박지혜", "profilePath": ""]]),
            Item("expert-2", data: ["expertInfo": ["expertTypeName": "약사", "name": "김민수", "profilePath": ""]]),
        ]
        dataSource.snapshot = try! Snapshot([
            (Section("consult", data: ["title": "상담"]), consults),
            (Section("company", data: ["title": "병원"]), companies),
            (Section("expert", data: ["title": "전문가"]), experts),
        ])
        dataSource.cellProvider = CellProvider(rules: [
            .init(section: "consult", registration: "consultCell"),
            .init(section: "company", registration: "companyCard"),
            .init(section: "expert", registration: "expertCell"),
        ])
        dataSource.supplementaryProviders["header"] = CellProvider(defaultRegistration: "sectionHeader")
        // The seed's Home screen (its createLayout), without headers as the seed has none: each consult a
        // 200-point-high card filling the width, the companies 350 × 200 and the experts 150 × 150 in rows
        // that scroll sideways to a group's leading edge, 10 points apart and inset by 10.
        let item: JSONValue = ["width": ["fractionalWidth": 1], "height": ["fractionalHeight": 1]]
        dataSource.layout = try! LayoutDescription(json: [
            "default": [
                "item": item, "group": ["axis": "horizontal", "width": ["fractionalWidth": 1], "height": ["absolute": 5], "count": 1],
            ],
            "sections": [
                "company": [
                    "item": item, "group": ["axis": "horizontal", "width": ["absolute": 56], "height": ["absolute": 5]],
                    "interGroupSpacing": 2, "orthogonalScrollingBehavior": "continuousGroupLeadingBoundary",
                    "contentInsets": ["leading": 2, "trailing": 2],
                ],
                "expert": [
                    "item": item, "group": ["axis": "horizontal", "width": ["absolute": 24], "height": ["absolute": 4]],
                    "interGroupSpacing": 2, "orthogonalScrollingBehavior": "continuousGroupLeadingBoundary",
                    "contentInsets": ["leading": 2, "trailing": 2],
                ],
            ],
        ])
        return dataSource
    }

    static let categories: [(id: String, title: String, emojis: [(String, String)])] = [
        ("smileys", "Smileys", [("😀", "Happy"), ("😂", "Laughing"), ("🤣", "Rolling on the floor laughing")]),
        ("nature", "Nature", [("🐶", "Dog"), ("🌲", "Evergreen tree"), ("🌸", "Cherry blossom")]),
        ("food", "Food", [("🍎", "Red apple"), ("🍜", "Steaming bowl"), ("☕", "Hot beverage")]),
        ("activities", "Activities", [("⚽", "Soccer ball"), ("🎸", "Guitar")]),
        ("travel", "Travel", [("🚗", "Automobile"), ("✈️", "Airplane")]),
        ("objects", "Objects", [("💡", "Light bulb"), ("📚", "Books")]),
        ("symbols", "Symbols", [("❤️", "Red heart"), ("✅", "Check mark")]),
    ]

    /// `emoji`: an outline of emoji categories (section `outline`, categories collapsed), the seed's
    /// emoji list (section `emojis`) and the numbers 0…100 (section `numbers`).
    static func emoji() -> DataSourceContent {
        var dataSource = DataSourceContent()
        var outline = SectionSnapshot()
        for category in categories {
            try! outline.append([Item(category.id, data: ["title": .string(category.title), "kind": "category"])])
            try! outline.append(
                category.emojis.map { Item("\(category.id)/\($0.0)", data: ["text": .string($0.0), "title": .string($0.1), "category": .string(category.title)]) },
                to: category.id)
        }
        let emojis = ["😀", "😙", "😝", "🧐", "😫", "😶‍🌫️", "🥶", "😰", "🤫", "🫡", "😑", "😬", "🫥", "😴", "🤢", "😈", "👿"]
        var snapshot = Snapshot()
        snapshot.apply(outline, to: "outline")
        try! snapshot.updateSections([Section("outline", data: ["title": "Emoji"])])
        try! snapshot.appendSections([Section("emojis", data: ["title": "Emojis"]), Section("numbers", data: ["title": "Numbers"])])
        try! snapshot.appendItems(emojis.map { Item($0, data: ["text": .string($0)]) }, toSection: "emojis")
        try! snapshot.appendItems((0...100).map { Item("n\($0)", data: ["value": .int($0)]) }, toSection: "numbers")
        dataSource.snapshot = snapshot
        dataSource.outlines["outline"] = outline
        // Each view expands and collapses the categories in its own view, as each collection view does.
        dataSource.expansionScope = .perView
        dataSource.cellProvider = CellProvider(rules: [
            .init(section: "outline", match: (field: "kind", equals: "category"), registration: "categoryCell"),
            .init(section: "outline", registration: "emojiCell"),
            .init(section: "emojis", registration: "emojiPlainCell"),
            .init(section: "numbers", registration: "numberCell"),
        ])
        dataSource.supplementaryProviders["header"] = CellProvider(defaultRegistration: "sectionHeader")
        // The outline as a sidebar; then the emoji seed's screen: the emojis in a row of 100 × 100-point
        // groups that scrolls sideways to a group's leading edge (each emoji inset by 20 points), and the
        // numbers in an inset grouped list.
        dataSource.layout = try! LayoutDescription(json: [
            "default": ["list": ["appearance": "insetGrouped"]],
            "sections": [
                "outline": ["list": ["appearance": "sidebar", "headerMode": "supplementary"]],
                "emojis": [
                    "item": ["width": ["fractionalWidth": 1], "height": ["fractionalHeight": 1], "contentInsets": ["leading": 3, "trailing": 3, "top": 1, "bottom": 1]],
                    "group": ["axis": "horizontal", "width": ["absolute": 16], "height": ["absolute": 3], "count": 1],
                    "orthogonalScrollingBehavior": "continuousGroupLeadingBoundary",
                ],
            ],
        ])
        return dataSource
    }

    /// `outline`: the outline seed's screen: one section per category, recents first, each filled from
    /// a section snapshot of the category's emojis, value cells with a corner radius of 20 in an inset
    /// grouped list.
    static func outline() -> DataSourceContent {
        var dataSource = DataSourceContent()
        let recents: [(String, String)] = [("😂", "Laughing"), ("❤️", "Red heart"), ("☕", "Hot beverage")]
        var snapshot = Snapshot()
        for (id, title, emojis) in [("recents", "Recents", recents)] + categories {
            var section = SectionSnapshot()
            try! section.append(emojis.map { Item("\(id)/\($0.0)", data: ["text": .string($0.0), "title": .string($0.1), "category": .string(title)]) })
            snapshot.apply(section, to: id)
            dataSource.outlines[id] = section
        }
        dataSource.snapshot = snapshot
        dataSource.cellProvider = CellProvider(defaultRegistration: "categoryEmojiCell")
        dataSource.layout = try! LayoutDescription(json: ["default": ["list": ["appearance": "insetGrouped"]]])
        return dataSource
    }
}
