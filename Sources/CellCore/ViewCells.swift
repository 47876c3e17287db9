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
        /// About the bytes `configured` takes (`ConfiguredCell.approximateByteCount`).
        public fileprivate(set) var configuredBytes = 0
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
    /// Every live cell, by its number (`c7` is cell 7): integer keys, no string hashed per look-up.
    public private(set) var cells = CellTable()
    /// One entry per registration this view took cells of (a handful: searched in order, no hashing):
    /// its free cells (a stack: the most recently returned is reused first) and its counters.
    private var registrations: [RegistrationCells] = []
    /// The number of the displayed cell of each item (or supplementary key).
    private var displayed: [String: Int] = [:]
    private var nextNumber = 1
    /// The bytes of the configurations displayed cells keep.
    private var configuredBytes = 0

    /// What a live cell costs besides its configuration (its entry, identifiers, state), for accounts.
    public static let cellOverheadBytes = 256

    /// About the bytes this view's cells hold: every live cell's entry and the displayed cells' last
    /// configurations (what a viewer's account charges for `cells`). O(1).
    public var keptBytes: Int { configuredBytes + cells.count * Self.cellOverheadBytes }

    private struct RegistrationCells: Sendable {
        let name: String
        var free: [Int] = []
        var counters = Counters()
    }

    /// The live cells of a view by number; read by a cell's identifier (`"c7"`).
    public struct CellTable: Sendable {
        fileprivate var byNumber: [Int: Cell] = [:]

        /// The cell whose identifier is `id`, if it lives.
        public subscript(id: String) -> Cell? {
            ViewCells.number(of: id).flatMap { byNumber[$0] }
        }

        /// Every live cell, in no particular order.
        public var values: Dictionary<Int, Cell>.Values { byNumber.values }

        public var count: Int { byNumber.count }
    }

    public init(poolLimit: Int = 256) {
        self.poolLimit = poolLimit
    }

    /// The number in a cell identifier (`"c7"` → 7); `nil` for anything else.
    static func number(of id: String) -> Int? {
        var utf8 = id.utf8.makeIterator()
        guard utf8.next() == UInt8(ascii: "c") else { return nil }
        var number = 0
        var digits = 0
        while let byte = utf8.next() {
            guard byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"), digits < 18 else { return nil }
            number = number * 10 + Int(byte &- UInt8(ascii: "0"))
            digits += 1
        }
        return digits > 0 && (digits == 1 || id.utf8.dropFirst().first != UInt8(ascii: "0")) ? number : nil
    }

    private mutating func registrationIndex(_ name: String) -> Int {
        if let index = registrations.firstIndex(where: { $0.name == name }) { return index }
        registrations.append(RegistrationCells(name: name))
        return registrations.count - 1
    }

    /// A cell of `registration` to display for `key`: the one already displaying it, else one from the
    /// pool, else a new one. A displayed cell is never handed out for a second key. O(1).
    public mutating func obtain(registration: String, for key: String) -> (id: String, reused: Bool, alreadyDisplayed: Bool) {
        if let current = displayed[key], let cell = cells.byNumber[current] {
            if cell.registration == registration { return (cell.id, false, true) }
            release(number: current)  // the item now needs another registration
        }
        let pool = registrationIndex(registration)
        // Popped in place: a copy of the pool would copy the whole array on every dequeue.
        if let number = registrations[pool].free.popLast() {
            registrations[pool].counters.reused += 1
            displayed[key] = number
            return cells.byNumber[number]!.displayed(for: key)
        }
        let number = nextNumber
        nextNumber += 1
        let id = "c\(number)"
        cells.byNumber[number] = Cell(id: id, registration: registration, displayedFor: key)
        displayed[key] = number
        registrations[pool].counters.created += 1
        return (id, false, false)
    }

    /// Records a cell's configuration; returns whether it replaced a different content type (the iOS 16
    /// "content view must be replaced" warning).
    public mutating func configured(_ id: String, with configuration: ConfiguredCell) -> Bool {
        replacedContentType(configuring: id, with: configuration) != nil
    }

    /// Records a cell's configuration; returns the content type it had when that was another one (the
    /// iOS 16 "content view must be replaced" warning), else `nil`.
    public mutating func replacedContentType(configuring id: String, with configuration: ConfiguredCell) -> String? {
        guard let number = Self.number(of: id), cells.byNumber[number] != nil else { return nil }
        configuredBytes -= cells.byNumber[number]!.configuredBytes
        let (replaced, registration) = cells.byNumber[number]!.configure(with: configuration)
        configuredBytes += cells.byNumber[number]!.configuredBytes
        if replaced != nil { registrations[registrationIndex(registration)].counters.contentConfigurationsReplaced += 1 }
        return replaced
    }

    public mutating func setState(_ state: CellState, of id: String) {
        guard let number = Self.number(of: id) else { return }
        cells.byNumber[number]?.state = state
    }

    /// Takes a displayed cell off the screen: back to its pool (prepared for reuse: content and state
    /// gone), or released when the pool is full. Returns `false` for an unknown or pooled cell.
    @discardableResult
    public mutating func release(_ id: String) -> Bool {
        guard let number = Self.number(of: id) else { return false }
        return release(number: number)
    }

    @discardableResult
    private mutating func release(number: Int) -> Bool {
        guard let key = cells.byNumber[number]?.displayedFor else { return false }
        displayed[key] = nil
        configuredBytes -= cells.byNumber[number]!.configuredBytes
        let pool = registrationIndex(cells.byNumber[number]!.registration)
        if registrations[pool].free.count < poolLimit {
            cells.byNumber[number]!.prepareForReuse()
            registrations[pool].free.append(number)
        } else {
            cells.byNumber[number] = nil
            registrations[pool].counters.released += 1
        }
        return true
    }

    /// Drops every cell of a registration (it was unregistered): pooled ones at once, displayed ones too.
    public mutating func drain(registration: String) {
        for (number, cell) in cells.byNumber where cell.registration == registration {
            if let key = cell.displayedFor { displayed[key] = nil }
            configuredBytes -= cell.configuredBytes
            cells.byNumber[number] = nil
        }
        if let index = registrations.firstIndex(where: { $0.name == registration }) { registrations[index].free = [] }
    }

    /// Whether the cell `id` lives and is displayed (not pooled).
    public func isDisplayed(_ id: String) -> Bool {
        guard let number = Self.number(of: id) else { return false }
        return cells.byNumber[number]?.displayedFor != nil
    }

    /// The state of the cell `id` (`nil` when no such cell lives).
    public func state(of id: String) -> CellState? {
        guard let number = Self.number(of: id) else { return nil }
        return cells.byNumber[number]?.state
    }

    /// The cell displayed for `key`, if any.
    public func displayedCell(for key: String) -> Cell? { displayed[key].flatMap { cells.byNumber[$0] } }

    /// The keys (items, supplementary keys) that have a displayed cell.
    public var displayedKeys: Dictionary<String, Int>.Keys { displayed.keys }

    /// Every displayed cell with its key.
    public var displayedCells: [(key: String, id: String)] {
        displayed.compactMap { key, number in cells.byNumber[number].map { (key, $0.id) } }
    }

    public var displayedCount: Int { displayed.count }

    public func pooledCount(_ registration: String) -> Int {
        registrations.first { $0.name == registration }?.free.count ?? 0
    }

    /// Free cells over every registration.
    public var pooledCount: Int { registrations.reduce(0) { $0 + $1.free.count } }

    public func displayedCount(_ registration: String) -> Int {
        displayed.values.reduce(0) { $0 + (cells.byNumber[$1]?.registration == registration ? 1 : 0) }
    }

    /// The counters of one registration in this view (zero when it took none of its cells).
    public func counters(of registration: String) -> Counters {
        registrations.first { $0.name == registration }?.counters ?? Counters()
    }

    /// The counters of each registration this view took cells of.
    public var counters: [String: Counters] {
        Dictionary(registrations.map { ($0.name, $0.counters) }, uniquingKeysWith: { first, _ in first })
    }
}

extension ViewCells.Cell {
    /// Displayed for `key` again, taken from the pool.
    fileprivate mutating func displayed(for key: String) -> (id: String, reused: Bool, alreadyDisplayed: Bool) {
        displayedFor = key
        return (id, true, false)
    }

    /// Records a configuration; returns the content type it replaced (when another), and the registration.
    fileprivate mutating func configure(with configuration: ConfiguredCell) -> (replaced: String?, registration: String) {
        let replaced = contentType != nil && contentType != configuration.type ? contentType : nil
        contentType = configuration.type
        configured = configuration
        configuredBytes = configuration.approximateByteCount
        return (replaced, registration)
    }

    /// Off the screen, into the pool: no key, configuration or state.
    fileprivate mutating func prepareForReuse() {
        displayedFor = nil
        configured = nil
        configuredBytes = 0
        state = CellState()
    }
}

extension ConfiguredCell {
    /// About the bytes the configuration takes as JSON (content, background, accessories).
    public var approximateByteCount: Int {
        type.utf8.count + content.approximateByteCount + background.approximateByteCount + accessories.approximateByteCount
    }
}
