import DiffableCore

/// A size along one axis, as `NSCollectionLayoutDimension` gives it, in terminal cells (columns across,
/// rows down).
public enum LayoutDimension: Hashable, Sendable {
    /// A fraction of the container's width.
    case fractionalWidth(Double)
    /// A fraction of the container's height (for an item: its group's height).
    case fractionalHeight(Double)
    /// Exactly this many columns or rows.
    case absolute(Int)
    /// About this many; the content may change it (list rows and self-sizing items).
    case estimated(Int)
}

/// `UICollectionLayoutListConfiguration`: a section laid out as a list.
public struct ListSectionConfiguration: Hashable, Sendable {
    public enum Appearance: String, Hashable, Sendable, CaseIterable {
        case plain, grouped, insetGrouped, sidebar
    }

    public enum HeaderMode: String, Hashable, Sendable, CaseIterable {
        case none, supplementary, firstItemInSection
    }

    public enum FooterMode: String, Hashable, Sendable, CaseIterable {
        case none, supplementary
    }

    public var appearance: Appearance = .plain
    public var headerMode: HeaderMode = .none
    public var footerMode: FooterMode = .none
    public var showsSeparators = true
    /// The supplementary header stays at the top of the screen while its section scrolls under it
    /// (`pinToVisibleBounds` of the section's header item).
    public var pinsHeaderToVisibleBounds = false

    public init(
        appearance: Appearance = .plain, headerMode: HeaderMode = .none, footerMode: FooterMode = .none, showsSeparators: Bool = true,
        pinsHeaderToVisibleBounds: Bool = false
    ) {
        self.appearance = appearance
        self.headerMode = headerMode
        self.footerMode = footerMode
        self.showsSeparators = showsSeparators
        self.pinsHeaderToVisibleBounds = pinsHeaderToVisibleBounds
    }
}

/// Margins inside a section, group or item (`NSDirectionalEdgeInsets`).
public struct EdgeInsets: Hashable, Sendable {
    public var top = 0, leading = 0, bottom = 0, trailing = 0

    public init(top: Int = 0, leading: Int = 0, bottom: Int = 0, trailing: Int = 0) {
        self.top = top
        self.leading = leading
        self.bottom = bottom
        self.trailing = trailing
    }
}

/// `NSCollectionLayoutAnchor`: where a supplementary item sits on its item. The edges it touches
/// (none along an axis: centred along it; both: stretched is not offered, the first wins), moved by a
/// fraction of the supplementary's own size or by whole cells (so a badge can overhang a corner).
public struct LayoutAnchor: Hashable, Sendable {
    public enum Edge: String, Hashable, Sendable, CaseIterable {
        case top, leading, bottom, trailing
    }

    public var edges: Set<Edge>
    /// A fraction of the supplementary's width (x) and height (y); positive x moves it trailing, positive y down.
    public var fractionalOffset: (x: Double, y: Double) {
        get { (fractionalX, fractionalY) }
        set { (fractionalX, fractionalY) = newValue }
    }
    /// Whole columns (x) and rows (y), added to the fractional offset.
    public var absoluteOffset: (x: Int, y: Int) {
        get { (absoluteX, absoluteY) }
        set { (absoluteX, absoluteY) = newValue }
    }
    private var fractionalX = 0.0, fractionalY = 0.0
    private var absoluteX = 0, absoluteY = 0

    public init(edges: Set<Edge>, fractionalOffset: (x: Double, y: Double) = (0, 0), absoluteOffset: (x: Int, y: Int) = (0, 0)) {
        self.edges = edges
        (fractionalX, fractionalY) = fractionalOffset
        (absoluteX, absoluteY) = absoluteOffset
    }

    /// The frame of a `width`×`height` supplementary anchored this way to `container`.
    public func frame(width: Int, height: Int, in container: Frame) -> Frame {
        var x = container.x + (container.width - width) / 2
        if edges.contains(.leading) { x = container.x } else if edges.contains(.trailing) { x = container.maxX - width }
        var y = container.y + (container.height - height) / 2
        if edges.contains(.top) { y = container.y } else if edges.contains(.bottom) { y = container.maxY - height }
        x += Int((fractionalX * Double(width)).rounded()) + absoluteX
        y += Int((fractionalY * Double(height)).rounded()) + absoluteY
        return Frame(x: x, y: y, width: width, height: height)
    }
}

/// `NSCollectionLayoutSupplementaryItem`: a supplementary view anchored to each item of its kind (a
/// badge), sized in cells or as a fraction of the item, drawn above the item.
public struct SupplementaryItemLayout: Hashable, Sendable {
    public var elementKind: String
    public var width: LayoutDimension
    public var height: LayoutDimension
    public var anchor: LayoutAnchor

    public init(elementKind: String, width: LayoutDimension, height: LayoutDimension, anchor: LayoutAnchor) {
        self.elementKind = elementKind
        self.width = width
        self.height = height
        self.anchor = anchor
    }
}

/// `NSCollectionLayoutItem`: a size, insets and the supplementary items anchored to it.
public struct ItemLayout: Hashable, Sendable {
    public var width: LayoutDimension
    public var height: LayoutDimension
    public var contentInsets = EdgeInsets()
    public var supplementaryItems: [SupplementaryItemLayout] = []

    public init(width: LayoutDimension, height: LayoutDimension, contentInsets: EdgeInsets = EdgeInsets(), supplementaryItems: [SupplementaryItemLayout] = []) {
        self.width = width
        self.height = height
        self.contentInsets = contentInsets
        self.supplementaryItems = supplementaryItems
    }
}

/// `NSCollectionLayoutGroup`: items side by side (horizontal) or stacked (vertical): `count` copies of
/// the first subitem sharing the group evenly, or the subitems in order, repeated until the group is full.
public struct GroupLayout: Hashable, Sendable {
    public enum Axis: String, Hashable, Sendable {
        case horizontal, vertical
    }

    public var axis: Axis
    public var width: LayoutDimension
    public var height: LayoutDimension
    public var subitems: [ItemLayout]
    public var count: Int?
    public var interItemSpacing = 0

    public init(axis: Axis, width: LayoutDimension, height: LayoutDimension, subitems: [ItemLayout], count: Int? = nil, interItemSpacing: Int = 0) {
        self.axis = axis
        self.width = width
        self.height = height
        self.subitems = subitems
        self.count = count
        self.interItemSpacing = interItemSpacing
    }
}

/// `UICollectionLayoutSectionOrthogonalScrollingBehavior`.
public enum OrthogonalScrollingBehavior: String, Hashable, Sendable, CaseIterable {
    case none, continuous, continuousGroupLeadingBoundary, paging, groupPaging, groupPagingCentered
}

/// A header or footer of a compositional section (`NSCollectionLayoutBoundarySupplementaryItem`).
public struct BoundaryItem: Hashable, Sendable {
    public var elementKind: String
    public var height: Int
    /// A header that stays at the top of the screen while its section scrolls under it.
    public var pinToVisibleBounds: Bool

    public init(elementKind: String, height: Int = 1, pinToVisibleBounds: Bool = false) {
        self.elementKind = elementKind
        self.height = height
        self.pinToVisibleBounds = pinToVisibleBounds
    }
}

/// `NSCollectionLayoutSection`: groups repeated down the section (or across it, when it scrolls
/// orthogonally), with spacing, insets and boundary supplementary items.
public struct GridSectionLayout: Hashable, Sendable {
    public var group: GroupLayout
    public var interGroupSpacing = 0
    public var contentInsets = EdgeInsets()
    public var orthogonalScrollingBehavior: OrthogonalScrollingBehavior = .none
    public var header: BoundaryItem?
    public var footer: BoundaryItem?

    public init(
        group: GroupLayout, interGroupSpacing: Int = 0, contentInsets: EdgeInsets = EdgeInsets(),
        orthogonalScrollingBehavior: OrthogonalScrollingBehavior = .none, header: BoundaryItem? = nil, footer: BoundaryItem? = nil
    ) {
        self.group = group
        self.interGroupSpacing = interGroupSpacing
        self.contentInsets = contentInsets
        self.orthogonalScrollingBehavior = orthogonalScrollingBehavior
        self.header = header
        self.footer = footer
    }
}

/// How one section is laid out.
public enum SectionLayout: Hashable, Sendable {
    case list(ListSectionConfiguration)
    case grid(GridSectionLayout)
}

/// A data source's layout: a default for every section and entries for particular sections, as a
/// `UICollectionViewCompositionalLayout` with a section provider would give them.
public struct LayoutDescription: Hashable, Sendable {
    public var defaultLayout: SectionLayout
    public var sections: [String: SectionLayout]

    /// A plain list everywhere (what a view uses before `setLayout`).
    public init(defaultLayout: SectionLayout = .list(ListSectionConfiguration()), sections: [String: SectionLayout] = [:]) {
        self.defaultLayout = defaultLayout
        self.sections = sections
    }

    /// The layout of the section `identifier`.
    public func layout(ofSection identifier: String) -> SectionLayout {
        sections[identifier] ?? defaultLayout
    }

    /// Every element kind anchored to items in some section (badges).
    public var itemSupplementaryKinds: Set<String> {
        var kinds = Set<String>()
        for layout in [defaultLayout] + Array(sections.values) {
            guard case .grid(let grid) = layout else { continue }
            for subitem in grid.group.subitems { kinds.formUnion(subitem.supplementaryItems.map(\.elementKind)) }
        }
        return kinds
    }

    /// Whether supplementary views of `elementKind` in the section `identifier` are anchored to its items
    /// (badges: addressed by the item's index path) rather than to the section (headers and footers).
    public func anchorsToItems(elementKind: String, inSection identifier: String) -> Bool {
        guard case .grid(let grid) = layout(ofSection: identifier) else { return false }
        return grid.group.subitems.contains { $0.supplementaryItems.contains { $0.elementKind == elementKind } }
    }
}
