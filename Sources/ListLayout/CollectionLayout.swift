/// A rectangle in terminal cells: columns across, rows down.
public struct Frame: Hashable, Sendable, CustomStringConvertible {
    public var x: Int
    public var y: Int
    public var width: Int
    public var height: Int

    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    public var maxX: Int { x + width }
    public var maxY: Int { y + height }
    public var description: String { "(\(x),\(y) \(width)×\(height))" }
}

/// What a section holds, as far as the layout needs to know.
public struct SectionInput: Hashable, Sendable {
    public var identifier: String
    public var itemCount: Int

    public init(identifier: String, itemCount: Int) {
        self.identifier = identifier
        self.itemCount = itemCount
    }
}

/// One laid-out section. Item frames are in content coordinates; in a section that scrolls
/// orthogonally, their `x` is in the section's own horizontal content (subtract its offset).
public struct LaidOutSection: Hashable, Sendable {
    public var index: Int
    public var identifier: String
    public var layout: SectionLayout
    /// The band the section occupies, across the whole width.
    public var frame: Frame
    public var items: [Frame]
    /// A header or footer: its element kind and frame.
    public struct Supplementary: Hashable, Sendable {
        public var kind: String
        public var frame: Frame
        /// A header that stays on screen while its section scrolls under it.
        public var pinned = false
    }

    /// Headers and footers.
    public var supplementaries: [Supplementary]
    /// The box drawn around a grouped or inset-grouped list's items (borders included).
    public var box: Frame?
    /// Horizontal scrolling: the behaviour, the content's width, and where each group starts.
    public var orthogonalScrollingBehavior: OrthogonalScrollingBehavior
    public var contentWidth: Int
    public var groupStarts: [Int]
    /// How many items each group holds.
    public var itemsPerGroup: Int
    /// The tallest item's height (for searching by position).
    public var tallestItem = 0
    /// The supplementary items (badges) anchored to the items of each of the group's subitems.
    public var subitemSupplementaries: [[SupplementaryItemLayout]] = []

    public var scrollsOrthogonally: Bool { orthogonalScrollingBehavior != .none }

    /// The supplementary items anchored to item `item` with their frames (content coordinates, as the
    /// item's frame), in the order the layout lists them.
    public func supplementaries(ofItem item: Int) -> [(kind: String, frame: Frame)] {
        guard !subitemSupplementaries.isEmpty, item < items.count else { return [] }
        let anchored = subitemSupplementaries[(item % max(1, itemsPerGroup)) % subitemSupplementaries.count]
        guard !anchored.isEmpty else { return [] }
        let container = items[item]
        return anchored.map { supplementary in
            let width = max(1, CollectionLayout.resolve(supplementary.width, width: container.width, height: container.height, alongWidth: true))
            let height = max(1, CollectionLayout.resolve(supplementary.height, width: container.width, height: container.height, alongWidth: false))
            return (supplementary.elementKind, supplementary.anchor.frame(width: width, height: height, in: container))
        }
    }
}

/// Something on screen: an item or a supplementary view, where it is drawn in the viewport.
public struct VisibleElement: Hashable, Sendable {
    public enum Kind: Hashable, Sendable {
        case item(Int)
        /// A header or footer of the section.
        case supplementary(String)
        /// A supplementary item (a badge) anchored to the item at this index.
        case itemSupplementary(String, item: Int)
    }

    public var section: Int
    public var kind: Kind
    /// Its full frame in viewport coordinates (may extend past the viewport's edges: clip when drawing).
    public var frame: Frame
}

/// A compositional layout computed for a terminal: every section's frames from a `LayoutDescription`,
/// the sections' item counts, the width, and the heights cells turned out to need (self-sizing).
///
/// List rows and items with an `estimated` height take the measured height when `measuredHeight`
/// knows one, else the estimate (1 row for list rows). One column is about half as wide as a row is
/// tall, so a height given as a fraction of the width is halved.
public struct CollectionLayout: Hashable, Sendable {
    public private(set) var sections: [LaidOutSection] = []
    public private(set) var contentHeight = 0
    public let width: Int

    public init(
        _ description: LayoutDescription, sections inputs: [SectionInput], width: Int, viewportHeight: Int,
        hasSupplementary: (_ section: Int, _ elementKind: String) -> Bool = { _, _ in true },
        measuredHeight: (_ section: Int, _ item: Int) -> Int? = { _, _ in nil }
    ) {
        self.width = max(width, 1)
        var y = 0
        for (index, input) in inputs.enumerated() {
            var section: LaidOutSection
            switch description.layout(ofSection: input.identifier) {
            case .list(let list):
                section = Self.list(
                    list, input: input, index: index, top: y, width: self.width, hasSupplementary: { hasSupplementary(index, $0) },
                    measuredHeight: { measuredHeight(index, $0) })
            case .grid(let grid):
                section = Self.grid(
                    grid, input: input, index: index, top: y, width: self.width, viewportHeight: viewportHeight,
                    measuredHeight: { measuredHeight(index, $0) })
            }
            y = section.frame.maxY
            section.index = index
            section.tallestItem = section.items.reduce(0) { max($0, $1.height) }
            sections.append(section)
        }
        contentHeight = y
    }

    // MARK: Lists

    private static func list(
        _ list: ListSectionConfiguration, input: SectionInput, index: Int, top: Int, width: Int,
        hasSupplementary: (String) -> Bool, measuredHeight: (Int) -> Int?
    ) -> LaidOutSection {
        var y = top
        var supplementaries: [LaidOutSection.Supplementary] = []
        let boxed = list.appearance == .grouped || list.appearance == .insetGrouped
        let inset = list.appearance == .insetGrouped ? 2 : 0
        if list.headerMode == .supplementary && hasSupplementary("header") {
            supplementaries.append(
                LaidOutSection.Supplementary(
                    kind: "header", frame: Frame(x: inset, y: y, width: width - 2 * inset, height: 1), pinned: list.pinsHeaderToVisibleBounds))
            y += 1
        }
        var box: Frame?
        let boxTop = y
        if boxed && input.itemCount > 0 { y += 1 }  // the box's top border
        let itemX = boxed ? inset + 1 : (list.appearance == .sidebar ? 1 : 0)
        let itemWidth = max(1, boxed ? width - 2 * inset - 2 : width - itemX)
        var items: [Frame] = []
        items.reserveCapacity(input.itemCount)
        for item in 0..<input.itemCount {
            let height = max(1, measuredHeight(item) ?? 1)
            items.append(Frame(x: itemX, y: y, width: itemWidth, height: height))
            y += height
        }
        if boxed && input.itemCount > 0 {
            y += 1  // bottom border
            box = Frame(x: inset, y: boxTop, width: width - 2 * inset, height: y - boxTop)
        }
        if list.footerMode == .supplementary && hasSupplementary("footer") {
            supplementaries.append(LaidOutSection.Supplementary(kind: "footer", frame: Frame(x: inset, y: y, width: width - 2 * inset, height: 1)))
            y += 1
        }
        if boxed { y += 1 }  // space between grouped sections
        return LaidOutSection(
            index: index, identifier: input.identifier, layout: .list(list), frame: Frame(x: 0, y: top, width: width, height: y - top),
            items: items, supplementaries: supplementaries, box: box, orthogonalScrollingBehavior: .none, contentWidth: width,
            groupStarts: [], itemsPerGroup: 1)
    }

    // MARK: Compositional sections

    static func resolve(_ dimension: LayoutDimension, width: Int, height: Int, alongWidth: Bool) -> Int {
        switch dimension {
        case .absolute(let amount), .estimated(let amount): return amount
        case .fractionalWidth(let fraction):
            let value = Double(width) * fraction
            return max(1, Int((alongWidth ? value : value / 2).rounded(.down)))
        case .fractionalHeight(let fraction):
            let value = Double(height) * fraction
            return max(1, Int((alongWidth ? value * 2 : value).rounded(.down)))
        }
    }

    /// The slots of one group, relative to its origin.
    private static func slots(of group: GroupLayout, width: Int, height: Int) -> [Frame] {
        var frames: [Frame] = []
        let spacing = group.interItemSpacing
        if let count = group.count {
            let item = group.subitems[0]
            let along = group.axis == .horizontal ? width : height
            let share = max(1, (along - spacing * (count - 1)) / count)
            var extra = max(0, along - spacing * (count - 1) - share * count)
            var position = 0
            for _ in 0..<count {
                let size = share + (extra > 0 ? 1 : 0)
                extra = max(0, extra - 1)
                if group.axis == .horizontal {
                    frames.append(Frame(x: position, y: 0, width: size, height: min(height, resolve(item.height, width: size, height: height, alongWidth: false))))
                } else {
                    frames.append(Frame(x: 0, y: position, width: min(width, resolve(item.width, width: width, height: size, alongWidth: true)), height: size))
                }
                position += size + spacing
            }
            return frames
        }
        var position = 0
        var index = 0
        while true {
            let item = group.subitems[index % group.subitems.count]
            let itemWidth = min(width, resolve(item.width, width: width, height: height, alongWidth: true))
            let itemHeight = min(height, resolve(item.height, width: width, height: height, alongWidth: false))
            let size = group.axis == .horizontal ? itemWidth : itemHeight
            let limit = group.axis == .horizontal ? width : height
            if !frames.isEmpty && position + size > limit { break }
            frames.append(
                group.axis == .horizontal
                    ? Frame(x: position, y: 0, width: itemWidth, height: itemHeight) : Frame(x: 0, y: position, width: itemWidth, height: itemHeight))
            position += size + spacing
            index += 1
            if position >= limit || frames.count >= 1_000 { break }
        }
        return frames
    }

    private static func grid(
        _ grid: GridSectionLayout, input: SectionInput, index: Int, top: Int, width: Int, viewportHeight: Int, measuredHeight: (Int) -> Int?
    ) -> LaidOutSection {
        var y = top
        var supplementaries: [LaidOutSection.Supplementary] = []
        let container = max(1, width - grid.contentInsets.leading - grid.contentInsets.trailing)
        if let header = grid.header {
            supplementaries.append(
                LaidOutSection.Supplementary(
                    kind: header.elementKind, frame: Frame(x: grid.contentInsets.leading, y: y, width: container, height: header.height),
                    pinned: header.pinToVisibleBounds))
            y += header.height
        }
        y += grid.contentInsets.top
        let group = grid.group
        let groupWidth = min(grid.orthogonalScrollingBehavior == .none ? container : Int.max, resolve(group.width, width: container, height: viewportHeight, alongWidth: true))
        var groupHeight = resolve(group.height, width: container, height: viewportHeight, alongWidth: false)
        let groupSlots = slots(of: group, width: groupWidth, height: groupHeight)
        let perGroup = groupSlots.count
        let groupCount = input.itemCount == 0 ? 0 : (input.itemCount + perGroup - 1) / perGroup
        // Self-sizing: an estimated group grows to its tallest measured item.
        if case .estimated = group.height {
            for item in 0..<input.itemCount {
                if let measured = measuredHeight(item) { groupHeight = max(groupHeight, measured) }
            }
        }
        var items: [Frame] = []
        items.reserveCapacity(input.itemCount)
        var groupStarts: [Int] = []
        let orthogonal = grid.orthogonalScrollingBehavior != .none
        for groupIndex in 0..<groupCount {
            let originX = orthogonal ? grid.contentInsets.leading + groupIndex * (groupWidth + grid.interGroupSpacing) : grid.contentInsets.leading
            let originY = orthogonal ? y : y + groupIndex * (groupHeight + grid.interGroupSpacing)
            groupStarts.append(originX)
            for (slotIndex, slot) in groupSlots.enumerated() {
                let item = groupIndex * perGroup + slotIndex
                guard item < input.itemCount else { break }
                let insets = group.subitems[slotIndex % group.subitems.count].contentInsets
                var height = slot.height
                if case .estimated = group.height { height = groupHeight }
                items.append(
                    Frame(
                        x: originX + slot.x + insets.leading, y: originY + slot.y + insets.top,
                        width: max(1, slot.width - insets.leading - insets.trailing), height: max(1, height - insets.top - insets.bottom)))
            }
        }
        let contentWidth: Int
        if orthogonal {
            y += groupCount > 0 ? groupHeight : 0
            contentWidth = groupCount == 0 ? width : grid.contentInsets.leading + groupCount * groupWidth + (groupCount - 1) * grid.interGroupSpacing + grid.contentInsets.trailing
        } else {
            y += groupCount == 0 ? 0 : groupCount * groupHeight + (groupCount - 1) * grid.interGroupSpacing
            contentWidth = width
        }
        y += grid.contentInsets.bottom
        if let footer = grid.footer {
            supplementaries.append(LaidOutSection.Supplementary(kind: footer.elementKind, frame: Frame(x: grid.contentInsets.leading, y: y, width: container, height: footer.height)))
            y += footer.height
        }
        var section = LaidOutSection(
            index: index, identifier: input.identifier, layout: .grid(grid), frame: Frame(x: 0, y: top, width: width, height: y - top),
            items: items, supplementaries: supplementaries, box: nil, orthogonalScrollingBehavior: grid.orthogonalScrollingBehavior,
            contentWidth: contentWidth, groupStarts: groupStarts, itemsPerGroup: perGroup)
        if group.subitems.contains(where: { !$0.supplementaryItems.isEmpty }) {
            // Slot i of a group holds subitem i % subitems (count copies of the first when `count` is set).
            section.subitemSupplementaries = group.count != nil ? [group.subitems[0].supplementaryItems] : group.subitems.map(\.supplementaryItems)
        }
        return section
    }

    // MARK: Visibility and scrolling

    /// The items and supplementary views that intersect the viewport `top ..< top + height`, with their
    /// frames in viewport coordinates; `horizontalOffsets[section]` is how far an orthogonally scrolling
    /// section is scrolled. Found by binary search over sections and rows, so a million items cost
    /// only what is visible.
    public func visibleElements(top: Int, height: Int, horizontalOffsets: [Int: Int] = [:]) -> [VisibleElement] {
        var result: [VisibleElement] = []
        let bottom = top + height
        var low = 0
        var high = sections.count
        while low < high {
            let middle = (low + high) / 2
            if sections[middle].frame.maxY <= top { low = middle + 1 } else { high = middle }
        }
        var index = low
        while index < sections.count, sections[index].frame.y < bottom {
            let section = sections[index]
            for supplementary in section.supplementaries where !supplementary.pinned && supplementary.frame.maxY > top && supplementary.frame.y < bottom {
                let frame = supplementary.frame
                result.append(VisibleElement(section: index, kind: .supplementary(supplementary.kind), frame: Frame(x: frame.x, y: frame.y - top, width: frame.width, height: frame.height)))
            }
            let offset = section.scrollsOrthogonally ? horizontalOffsets[index] ?? 0 : 0
            // Outside orthogonal sections, item tops never decrease in item order: binary-search the
            // first item that can reach below `top`.
            var first = 0
            if !section.scrollsOrthogonally {
                var last = section.items.count
                while first < last {
                    let middle = (first + last) / 2
                    if section.items[middle].y + section.tallestItem <= top { first = middle + 1 } else { last = middle }
                }
            }
            var item = first
            var decorated: [Int] = []
            while item < section.items.count {
                let frame = section.items[item]
                if !section.scrollsOrthogonally && frame.y >= bottom { break }
                let x = frame.x - offset
                if frame.maxY > top && frame.y < bottom && x + frame.width > 0 && x < width {
                    result.append(VisibleElement(section: index, kind: .item(item), frame: Frame(x: x, y: frame.y - top, width: frame.width, height: frame.height)))
                    if !section.subitemSupplementaries.isEmpty { decorated.append(item) }
                }
                item += 1
            }
            // Badges after their section's items (drawn above them), for the items on screen.
            for item in decorated {
                for (kind, frame) in section.supplementaries(ofItem: item) {
                    let x = frame.x - offset
                    guard frame.maxY > top && frame.y < bottom && x + frame.width > 0 && x < width else { continue }
                    result.append(
                        VisibleElement(section: index, kind: .itemSupplementary(kind, item: item), frame: Frame(x: x, y: frame.y - top, width: frame.width, height: frame.height)))
                }
            }
            // A pinned header last (above the items scrolling under it): at the top of the screen while
            // its section passes, pushed up by the section's end.
            for supplementary in section.supplementaries where supplementary.pinned {
                var frame = supplementary.frame
                if frame.y < top { frame.y = min(top, section.frame.maxY - frame.height) }
                guard frame.maxY > top && frame.y < bottom else { continue }
                result.append(VisibleElement(section: index, kind: .supplementary(supplementary.kind), frame: Frame(x: frame.x, y: frame.y - top, width: frame.width, height: frame.height)))
            }
            index += 1
        }
        return result
    }

    /// Where an orthogonally scrolling section's offset goes from `offset` one step forward (`direction`
    /// 1) or back (-1): an item's width for `continuous`, the next group's leading edge for
    /// `continuousGroupLeadingBoundary` and `groupPaging`, a screen width for `paging`. Clamped to the content.
    public func scrolled(section index: Int, from offset: Int, direction: Int) -> Int {
        let section = sections[index]
        guard section.scrollsOrthogonally else { return 0 }
        let maximum = max(0, section.contentWidth - width)
        let target: Int
        switch section.orthogonalScrollingBehavior {
        case .none: return 0
        case .paging:
            target = offset + direction * width
        case .continuous:
            let step = max(1, section.items.first?.width ?? 1)
            target = offset + direction * step
        case .continuousGroupLeadingBoundary, .groupPaging, .groupPagingCentered:
            let leading = section.groupStarts.map { $0 - (section.groupStarts.first ?? 0) }
            if direction > 0 {
                target = leading.first { $0 > offset } ?? maximum
            } else {
                target = leading.last { $0 < offset } ?? 0
            }
        }
        return min(max(0, target), maximum)
    }
}
