import DiffableCore

/// A layout description that does not follow the vocabulary; `path` names the offending member.
public struct LayoutError: Error, Hashable, Sendable, CustomStringConvertible {
    public var path: String
    public var message: String
    public var description: String { "\(path): \(message)" }

    init(_ path: String, _ message: String) {
        self.path = path
        self.message = message
    }
}

extension LayoutDescription {
    /// Reads `{"default"?: SECTION, "sections"?: {id: SECTION}}`, where a SECTION is
    /// `{"list": {appearance, headerMode, footerMode, showsSeparators, pinsHeaderToVisibleBounds}}` or
    /// `{"item"?: ITEM, "group": GROUP, "interGroupSpacing"?, "contentInsets"?, "orthogonalScrollingBehavior"?,
    /// "header"?: {elementKind?, height?, pinToVisibleBounds?}, "footer"?: {…}}`, where an ITEM may carry
    /// `supplementaryItems` (badges) (see PROTOCOL.md, "Layouts").
    ///
    /// - Throws: `LayoutError` naming the first member that is unknown, missing or out of range.
    public init(json: JSONValue) throws(LayoutError) {
        let members = try Self.object(json, "layout", allowed: ["default", "sections"])
        self.init()
        if let value = members["default"] { defaultLayout = try Self.section(value, "layout.default") }
        if let value = members["sections"] {
            for (identifier, section) in try Self.object(value, "layout.sections", allowed: nil) {
                sections[identifier] = try Self.section(section, "layout.sections.\(identifier)")
            }
        }
    }

    /// The description as JSON (what `init(json:)` reads; members at their defaults are left out).
    public var json: JSONValue {
        var members: [String: JSONValue] = ["default": Self.json(defaultLayout)]
        if !sections.isEmpty { members["sections"] = .object(sections.mapValues(Self.json)) }
        return .object(members)
    }

    // MARK: Reading

    private static func object(_ value: JSONValue, _ path: String, allowed: Set<String>?) throws(LayoutError) -> [String: JSONValue] {
        guard case .object(let members) = value else { throw LayoutError(path, "must be an object") }
        if let allowed, let unknown = members.keys.sorted().first(where: { !allowed.contains($0) }) {
            throw LayoutError("\(path).\(unknown)", "is not a member here (expected \(allowed.sorted().joined(separator: ", ")))")
        }
        return members
    }

    private static func integer(_ value: JSONValue?, _ path: String, default fallback: Int, range: ClosedRange<Int> = 0...10_000) throws(LayoutError) -> Int {
        guard let value else { return fallback }
        guard let number = value.intValue, range.contains(number) else { throw LayoutError(path, "must be an integer in \(range)") }
        return number
    }

    private static func choice<Choice: RawRepresentable & CaseIterable>(
        _ value: JSONValue?, _ path: String, default fallback: Choice
    ) throws(LayoutError) -> Choice where Choice.RawValue == String {
        guard let value else { return fallback }
        guard case .string(let name) = value, let choice = Choice(rawValue: name) else {
            throw LayoutError(path, "must be one of \(Choice.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return choice
    }

    private static func section(_ value: JSONValue, _ path: String) throws(LayoutError) -> SectionLayout {
        let members = try object(
            value, path,
            allowed: ["list", "item", "group", "interGroupSpacing", "contentInsets", "orthogonalScrollingBehavior", "header", "footer"])
        if let list = members["list"] {
            guard members.count == 1 else { throw LayoutError(path, "a list section has only \"list\"") }
            let options = try object(list, "\(path).list", allowed: ["appearance", "headerMode", "footerMode", "showsSeparators", "pinsHeaderToVisibleBounds"])
            var configuration = ListSectionConfiguration()
            configuration.appearance = try choice(options["appearance"], "\(path).list.appearance", default: .plain)
            configuration.headerMode = try choice(options["headerMode"], "\(path).list.headerMode", default: .none)
            configuration.footerMode = try choice(options["footerMode"], "\(path).list.footerMode", default: .none)
            if let separators = options["showsSeparators"] {
                guard case .bool(let flag) = separators else { throw LayoutError("\(path).list.showsSeparators", "must be a boolean") }
                configuration.showsSeparators = flag
            }
            configuration.pinsHeaderToVisibleBounds = try boolean(options["pinsHeaderToVisibleBounds"], "\(path).list.pinsHeaderToVisibleBounds")
            return .list(configuration)
        }
        guard let groupValue = members["group"] else { throw LayoutError(path, "needs \"list\", or \"group\" (with items)") }
        let sectionItem = try members["item"].map { (value) throws(LayoutError) in try item(value, "\(path).item") }
        var grid = GridSectionLayout(group: try group(groupValue, "\(path).group", sectionItem: sectionItem))
        grid.interGroupSpacing = try integer(members["interGroupSpacing"], "\(path).interGroupSpacing", default: 0, range: 0...1_000)
        if let insets = members["contentInsets"] { grid.contentInsets = try edgeInsets(insets, "\(path).contentInsets") }
        grid.orthogonalScrollingBehavior = try choice(members["orthogonalScrollingBehavior"], "\(path).orthogonalScrollingBehavior", default: .none)
        if let header = members["header"] { grid.header = try boundary(header, "\(path).header", defaultKind: "header") }
        if let footer = members["footer"] { grid.footer = try boundary(footer, "\(path).footer", defaultKind: "footer") }
        // A kind is the section's or its items', never both: a view asks for it by the one or the other.
        let anchored = Set(grid.group.subitems.flatMap { $0.supplementaryItems.map(\.elementKind) })
        for (name, boundary) in [("header", grid.header), ("footer", grid.footer)] {
            if let kind = boundary?.elementKind, anchored.contains(kind) {
                throw LayoutError("\(path).\(name).elementKind", "\"\(kind)\" is anchored to the section's items already")
            }
        }
        return .grid(grid)
    }

    private static func group(_ value: JSONValue, _ path: String, sectionItem: ItemLayout?) throws(LayoutError) -> GroupLayout {
        let members = try object(value, path, allowed: ["axis", "width", "height", "count", "subitems", "item", "interItemSpacing"])
        let axis: GroupLayout.Axis
        switch members["axis"] {
        case .string("horizontal")?: axis = .horizontal
        case .string("vertical")?: axis = .vertical
        default: throw LayoutError("\(path).axis", "must be \"horizontal\" or \"vertical\"")
        }
        guard let width = members["width"] else { throw LayoutError("\(path).width", "is required") }
        guard let height = members["height"] else { throw LayoutError("\(path).height", "is required") }
        var subitems: [ItemLayout] = []
        if let item = members["item"] { subitems.append(try self.item(item, "\(path).item")) }
        if let list = members["subitems"] {
            guard case .array(let values) = list else { throw LayoutError("\(path).subitems", "must be an array of items") }
            for (index, value) in values.enumerated() { subitems.append(try item(value, "\(path).subitems[\(index)]")) }
        }
        if subitems.isEmpty, let sectionItem { subitems = [sectionItem] }
        guard !subitems.isEmpty else { throw LayoutError(path, "needs \"item\" or \"subitems\" (here or in the section)") }
        var group = GroupLayout(
            axis: axis, width: try dimension(width, "\(path).width"), height: try dimension(height, "\(path).height"), subitems: subitems)
        if let count = members["count"] { group.count = try integer(count, "\(path).count", default: 1, range: 1...1_000) }
        group.interItemSpacing = try integer(members["interItemSpacing"], "\(path).interItemSpacing", default: 0, range: 0...1_000)
        return group
    }

    private static func hasControlCharacters(_ text: String) -> Bool {
        text.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }
    }

    private static func boolean(_ value: JSONValue?, _ path: String) throws(LayoutError) -> Bool {
        guard let value else { return false }
        guard case .bool(let flag) = value else { throw LayoutError(path, "must be a boolean") }
        return flag
    }

    private static func item(_ value: JSONValue, _ path: String) throws(LayoutError) -> ItemLayout {
        let members = try object(value, path, allowed: ["width", "height", "contentInsets", "supplementaryItems"])
        guard let width = members["width"] else { throw LayoutError("\(path).width", "is required") }
        guard let height = members["height"] else { throw LayoutError("\(path).height", "is required") }
        var item = ItemLayout(width: try dimension(width, "\(path).width"), height: try dimension(height, "\(path).height"))
        if let insets = members["contentInsets"] { item.contentInsets = try edgeInsets(insets, "\(path).contentInsets") }
        if let list = members["supplementaryItems"] {
            guard case .array(let values) = list, values.count <= 8 else {
                throw LayoutError("\(path).supplementaryItems", "must be an array of at most 8 supplementary items")
            }
            for (index, value) in values.enumerated() {
                let supplementary = try supplementaryItem(value, "\(path).supplementaryItems[\(index)]")
                if item.supplementaryItems.contains(where: { $0.elementKind == supplementary.elementKind }) {
                    throw LayoutError("\(path).supplementaryItems[\(index)].elementKind", "\"\(supplementary.elementKind)\" is anchored to this item already")
                }
                item.supplementaryItems.append(supplementary)
            }
        }
        return item
    }

    /// `{"elementKind", "width", "height", "containerAnchor": {"edges": [...], "fractionalOffset"?: {x, y}, "absoluteOffset"?: {x, y}}}`.
    private static func supplementaryItem(_ value: JSONValue, _ path: String) throws(LayoutError) -> SupplementaryItemLayout {
        let members = try object(value, path, allowed: ["elementKind", "width", "height", "containerAnchor"])
        guard case .string(let kind)? = members["elementKind"], !kind.isEmpty, !hasControlCharacters(kind) else {
            throw LayoutError("\(path).elementKind", "must be a non-empty string without control characters")
        }
        if kind == "header" || kind == "footer" {
            throw LayoutError("\(path).elementKind", "\"\(kind)\" is a section's boundary kind; name an item's supplementary otherwise (e.g. \"badge\")")
        }
        guard let width = members["width"] else { throw LayoutError("\(path).width", "is required") }
        guard let height = members["height"] else { throw LayoutError("\(path).height", "is required") }
        guard let anchorValue = members["containerAnchor"] else { throw LayoutError("\(path).containerAnchor", "is required") }
        let anchorMembers = try object(anchorValue, "\(path).containerAnchor", allowed: ["edges", "fractionalOffset", "absoluteOffset"])
        guard case .array(let edgeValues)? = anchorMembers["edges"] else {
            throw LayoutError("\(path).containerAnchor.edges", "must be an array of top, leading, bottom, trailing")
        }
        var edges = Set<LayoutAnchor.Edge>()
        for (index, edgeValue) in edgeValues.enumerated() {
            guard case .string(let name) = edgeValue, let edge = LayoutAnchor.Edge(rawValue: name) else {
                throw LayoutError("\(path).containerAnchor.edges[\(index)]", "must be one of top, leading, bottom, trailing")
            }
            edges.insert(edge)
        }
        if edges.isSuperset(of: [.top, .bottom]) || edges.isSuperset(of: [.leading, .trailing]) {
            throw LayoutError("\(path).containerAnchor.edges", "cannot hold both opposite edges")
        }
        var anchor = LayoutAnchor(edges: edges)
        if let offset = anchorMembers["fractionalOffset"] {
            let point = try object(offset, "\(path).containerAnchor.fractionalOffset", allowed: ["x", "y"])
            func fraction(_ axis: String) throws(LayoutError) -> Double {
                switch point[axis] {
                case nil: return 0
                case .int(let number)? where (-10...10).contains(number): return Double(number)
                case .double(let number)? where (-10...10).contains(number): return number
                default: throw LayoutError("\(path).containerAnchor.fractionalOffset.\(axis)", "must be a number in -10...10")
                }
            }
            anchor.fractionalOffset = (try fraction("x"), try fraction("y"))
        }
        if let offset = anchorMembers["absoluteOffset"] {
            let point = try object(offset, "\(path).containerAnchor.absoluteOffset", allowed: ["x", "y"])
            anchor.absoluteOffset = (
                try integer(point["x"], "\(path).containerAnchor.absoluteOffset.x", default: 0, range: -100...100),
                try integer(point["y"], "\(path).containerAnchor.absoluteOffset.y", default: 0, range: -100...100)
            )
        }
        return SupplementaryItemLayout(
            elementKind: kind, width: try dimension(width, "\(path).width"), height: try dimension(height, "\(path).height"), anchor: anchor)
    }

    private static func dimension(_ value: JSONValue, _ path: String) throws(LayoutError) -> LayoutDimension {
        let members = try object(value, path, allowed: ["fractionalWidth", "fractionalHeight", "absolute", "estimated"])
        guard members.count == 1, let (kind, amount) = members.first else {
            throw LayoutError(path, "must have exactly one of fractionalWidth, fractionalHeight, absolute, estimated")
        }
        switch kind {
        case "fractionalWidth", "fractionalHeight":
            let fraction: Double
            switch amount {
            case .int(let number): fraction = Double(number)
            case .double(let number): fraction = number
            default: throw LayoutError("\(path).\(kind)", "must be a number in (0, 1]")
            }
            guard fraction > 0 && fraction <= 1 else { throw LayoutError("\(path).\(kind)", "must be a number in (0, 1]") }
            return kind == "fractionalWidth" ? .fractionalWidth(fraction) : .fractionalHeight(fraction)
        case "absolute": return .absolute(try integer(amount, "\(path).absolute", default: 1, range: 1...10_000))
        default: return .estimated(try integer(amount, "\(path).estimated", default: 1, range: 1...10_000))
        }
    }

    private static func edgeInsets(_ value: JSONValue, _ path: String) throws(LayoutError) -> EdgeInsets {
        let members = try object(value, path, allowed: ["top", "leading", "bottom", "trailing"])
        return EdgeInsets(
            top: try integer(members["top"], "\(path).top", default: 0, range: 0...1_000),
            leading: try integer(members["leading"], "\(path).leading", default: 0, range: 0...1_000),
            bottom: try integer(members["bottom"], "\(path).bottom", default: 0, range: 0...1_000),
            trailing: try integer(members["trailing"], "\(path).trailing", default: 0, range: 0...1_000))
    }

    private static func boundary(_ value: JSONValue, _ path: String, defaultKind: String) throws(LayoutError) -> BoundaryItem {
        let members = try object(value, path, allowed: defaultKind == "header" ? ["elementKind", "height", "pinToVisibleBounds"] : ["elementKind", "height"])
        var kind = defaultKind
        if let named = members["elementKind"] {
            guard case .string(let name) = named, !name.isEmpty, !hasControlCharacters(name) else {
                throw LayoutError("\(path).elementKind", "must be a non-empty string without control characters")
            }
            kind = name
        }
        return BoundaryItem(
            elementKind: kind, height: try integer(members["height"], "\(path).height", default: 1, range: 1...100),
            pinToVisibleBounds: try boolean(members["pinToVisibleBounds"], "\(path).pinToVisibleBounds"))
    }

    // MARK: Writing

    private static func json(_ section: SectionLayout) -> JSONValue {
        switch section {
        case .list(let list):
            var options: [String: JSONValue] = [
                "appearance": .string(list.appearance.rawValue), "headerMode": .string(list.headerMode.rawValue),
                "footerMode": .string(list.footerMode.rawValue), "showsSeparators": .bool(list.showsSeparators),
            ]
            if list.pinsHeaderToVisibleBounds { options["pinsHeaderToVisibleBounds"] = true }
            return ["list": .object(options)]
        case .grid(let grid):
            var members: [String: JSONValue] = [
                "group": json(grid.group), "orthogonalScrollingBehavior": .string(grid.orthogonalScrollingBehavior.rawValue),
            ]
            if grid.interGroupSpacing != 0 { members["interGroupSpacing"] = .int(grid.interGroupSpacing) }
            if grid.contentInsets != EdgeInsets() { members["contentInsets"] = json(grid.contentInsets) }
            if let header = grid.header {
                var boundary: [String: JSONValue] = ["elementKind": .string(header.elementKind), "height": .int(header.height)]
                if header.pinToVisibleBounds { boundary["pinToVisibleBounds"] = true }
                members["header"] = .object(boundary)
            }
            if let footer = grid.footer { members["footer"] = ["elementKind": .string(footer.elementKind), "height": .int(footer.height)] }
            return .object(members)
        }
    }

    private static func json(_ group: GroupLayout) -> JSONValue {
        var members: [String: JSONValue] = [
            "axis": .string(group.axis.rawValue), "width": json(group.width), "height": json(group.height),
            "subitems": .array(group.subitems.map(json)),
        ]
        if let count = group.count { members["count"] = .int(count) }
        if group.interItemSpacing != 0 { members["interItemSpacing"] = .int(group.interItemSpacing) }
        return .object(members)
    }

    private static func json(_ item: ItemLayout) -> JSONValue {
        var members: [String: JSONValue] = ["width": json(item.width), "height": json(item.height)]
        if item.contentInsets != EdgeInsets() { members["contentInsets"] = json(item.contentInsets) }
        if !item.supplementaryItems.isEmpty { members["supplementaryItems"] = .array(item.supplementaryItems.map(json)) }
        return .object(members)
    }

    private static func json(_ supplementary: SupplementaryItemLayout) -> JSONValue {
        let anchor = supplementary.anchor
        var anchorMembers: [String: JSONValue] = [
            "edges": .array(LayoutAnchor.Edge.allCases.filter { anchor.edges.contains($0) }.map { .string($0.rawValue) })
        ]
        if anchor.fractionalOffset != (0, 0) {
            anchorMembers["fractionalOffset"] = ["x": .double(anchor.fractionalOffset.x), "y": .double(anchor.fractionalOffset.y)]
        }
        if anchor.absoluteOffset != (0, 0) { anchorMembers["absoluteOffset"] = ["x": .int(anchor.absoluteOffset.x), "y": .int(anchor.absoluteOffset.y)] }
        return [
            "elementKind": .string(supplementary.elementKind), "width": json(supplementary.width), "height": json(supplementary.height),
            "containerAnchor": .object(anchorMembers),
        ]
    }

    private static func json(_ dimension: LayoutDimension) -> JSONValue {
        switch dimension {
        case .fractionalWidth(let fraction): return ["fractionalWidth": .double(fraction)]
        case .fractionalHeight(let fraction): return ["fractionalHeight": .double(fraction)]
        case .absolute(let amount): return ["absolute": .int(amount)]
        case .estimated(let amount): return ["estimated": .int(amount)]
        }
    }

    private static func json(_ insets: EdgeInsets) -> JSONValue {
        ["top": .int(insets.top), "leading": .int(insets.leading), "bottom": .int(insets.bottom), "trailing": .int(insets.trailing)]
    }
}
