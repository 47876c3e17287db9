import DiffableCore

/// The cells of one view: every live cell, which item each displayed cell shows, and one bounded reuse
/// pool per registration, like a collection view's reuse queues.
///
/// ```
/// dequeue(item "a", registration R) → pool of R empty → new cell c1, displayed for "a"
/// endDisplaying(c1)                 → c1 back in R's pool
/// dequeue(item "b", registration R) → c1 again (reused), now displayed for "b"
/// ```
public struct ViewCells: Sendable {
    public struct Cell: Hashable, Sendable {
        public let id: String
        public let registration: String
        /// The item (or supplementary key) it shows while displayed; `nil` while pooled.
        public var displayedFor: String?
        /// The content configuration type it was last configured with.
        public var contentType: String?
        public var state = CellState()
        /// The last configuration, while displayed.
        public var configured: ConfiguredCell?
    }

    /// Counters for one registration in this view.
    public struct Counters: Hashable, Sendable {
        public var created = 0
        public var reused = 0
        public var released = 0
        public var contentConfigurationsReplaced = 0

        public init(created: Int = 0, reused: Int = 0, released: Int = 0, contentConfigurationsReplaced: Int = 0) {
            self.created = created
            self.reused = reused
            self.released = released
            self.contentConfigurationsReplaced = contentConfigurationsReplaced
        }
    }

    /// The most cells kept in one registration's pool; beyond it, cells leaving the screen are released.
    public var poolLimit: Int
    public private(set) var cells: [String: Cell] = [:]
    /// Free cells by registration (a stack: the most recently returned is reused first).
    public private(set) var pools: [String: [String]] = [:]
    /// The displayed cell of each item (or supplementary key).
    public private(set) var displayed: [String: String] = [:]
    public private(set) var counters: [String: Counters] = [:]
    private var nextNumber = 1

    public init(poolLimit: Int = 256) {
        self.poolLimit = poolLimit
    }

    /// A cell of `registration` to display for `key`: the one already displaying it, else one from the
    /// pool, else a new one. A displayed cell is never handed out for a second key. O(1).
    public mutating func obtain(registration: String, for key: String) -> (id: String, reused: Bool, alreadyDisplayed: Bool) {
        if let current = displayed[key] {
            if cells[current]?.registration == registration { return (current, false, true) }
            release(current)  // the item now needs another registration
        }
        // Popped in place: a copy of the pool would copy the whole array on every dequeue.
        if let id = pools[registration]?.popLast() {
            cells[id]!.displayedFor = key
            displayed[key] = id
            counters[registration, default: Counters()].reused += 1
            return (id, true, false)
        }
        let id = "c\(nextNumber)"
        nextNumber += 1
        cells[id] = Cell(id: id, registration: registration, displayedFor: key)
        displayed[key] = id
        counters[registration, default: Counters()].created += 1
        return (id, false, false)
    }

    /// Records a cell's configuration; returns whether it replaced a different content type (the iOS 16
    /// "content view must be replaced" warning).
    public mutating func configured(_ id: String, with configuration: ConfiguredCell) -> Bool {
        guard var cell = cells[id] else { return false }
        let replaced = cell.contentType != nil && cell.contentType != configuration.type
        if replaced { counters[cell.registration, default: Counters()].contentConfigurationsReplaced += 1 }
        cell.contentType = configuration.type
        cell.configured = configuration
        cells[id] = cell
        return replaced
    }

    public mutating func setState(_ state: CellState, of id: String) {
        cells[id]?.state = state
    }

    /// Takes a displayed cell off the screen: back to its pool (prepared for reuse: content and state
    /// gone), or released when the pool is full. Returns `false` for an unknown or pooled cell.
    @discardableResult
    public mutating func release(_ id: String) -> Bool {
        guard var cell = cells[id], let key = cell.displayedFor else { return false }
        displayed[key] = nil
        cell.displayedFor = nil
        cell.configured = nil
        cell.state = CellState()
        if pools[cell.registration, default: []].count < poolLimit {
            pools[cell.registration, default: []].append(id)
            cells[id] = cell
        } else {
            cells[id] = nil
            counters[cell.registration, default: Counters()].released += 1
        }
        return true
    }

    /// Drops every cell of a registration (it was unregistered): pooled ones at once, displayed ones too.
    public mutating func drain(registration: String) {
        for (id, cell) in cells where cell.registration == registration {
            if let key = cell.displayedFor { displayed[key] = nil }
            cells[id] = nil
        }
        pools[registration] = nil
    }

    /// The cell displayed for `key`, if any.
    public func displayedCell(for key: String) -> Cell? { displayed[key].flatMap { cells[$0] } }

    public var displayedCount: Int { displayed.count }

    public func pooledCount(_ registration: String) -> Int { pools[registration]?.count ?? 0 }

    public func displayedCount(_ registration: String) -> Int {
        displayed.values.reduce(0) { $0 + (cells[$1]?.registration == registration ? 1 : 0) }
    }
}
