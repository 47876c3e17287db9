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

    public init(appearance: Appearance = .plain, headerMode: HeaderMode = .none, footerMode: FooterMode = .none, showsSeparators: Bool = true) {
        self.appearance = appearance
        self.headerMode = headerMode
        self.footerMode = footerMode
        self.showsSeparators = showsSeparators
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

/// `NSCollectionLayoutItem`: a size and insets.
public struct ItemLayout: Hashable, Sendable {
    public var width: LayoutDimension
    public var height: LayoutDimension
    public var contentInsets = EdgeInsets()

    public init(width: LayoutDimension, height: LayoutDimension, contentInsets: EdgeInsets = EdgeInsets()) {
        self.width = width
        self.height = height
        self.contentInsets = contentInsets
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

    public init(elementKind: String, height: Int = 1) {
        self.elementKind = elementKind
        self.height = height
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
}
