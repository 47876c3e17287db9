/// A first-in, first-out queue over one array: elements leave from the front by moving a head index
/// past them (nothing shifts per removal); the array is emptied once everything has left, and compacted
/// once the part already left is most of it. For the queues on a request's path (replies waiting their
/// turn, changes in flight), where `Array.removeFirst` would move every element behind the first.
public struct FrontQueue<Element> {
    /// From `head` on (before it: left, emptied).
    private var slots: [Element?] = []
    private var head = 0
    /// Capacity kept when the queue empties (a burst's larger array is given back).
    private let keptCapacity: Int

    /// - Parameter keptCapacity: the capacity kept when the queue empties.
    public init(keptCapacity: Int = 64) { self.keptCapacity = keptCapacity }

    public var isEmpty: Bool { head == slots.count }
    public var count: Int { slots.count - head }

    /// The front element (the oldest).
    public var first: Element? { isEmpty ? nil : slots[head] }
    /// The back element (the newest).
    public var last: Element? { isEmpty ? nil : slots[slots.count - 1] }

    /// The elements, front first.
    public var elements: [Element] { slots[head...].map { $0! } }

    public mutating func append(_ element: Element) { slots.append(element) }

    /// Removes and returns the front element.
    public mutating func popFirst() -> Element? {
        guard head < slots.count else { return nil }
        let element = slots[head].take()
        head += 1
        compact()
        return element
    }

    /// The element `offset` places behind the front (`nil` past the back).
    public subscript(offset offset: Int) -> Element? {
        get { offset >= 0 && head + offset < slots.count ? slots[head + offset] : nil }
        set {
            guard offset >= 0, head + offset < slots.count, let newValue else { return }
            slots[head + offset] = newValue
        }
    }

    /// Removes every element.
    public mutating func removeAll() {
        slots.removeAll(keepingCapacity: slots.capacity <= keptCapacity)
        head = 0
    }

    private mutating func compact() {
        if head == slots.count {
            removeAll()
        } else if head > 64, head * 2 > slots.count {
            slots.removeFirst(head)
            head = 0
        }
    }
}
