/// Choices driven by fuzz bytes: each consumes one byte (0 once the bytes are used up).
struct ByteChoices {
    private(set) var bytes: ArraySlice<UInt8>

    init(_ bytes: ArraySlice<UInt8>) { self.bytes = bytes }

    var isEmpty: Bool { bytes.isEmpty }
    mutating func byte() -> Int { Int(bytes.popFirst() ?? 0) }
    /// 0 ..< count.
    mutating func below(_ count: Int) -> Int { count <= 1 ? 0 : byte() % count }
    mutating func pick<T>(_ choices: [T]) -> T { choices[below(choices.count)] }
    /// True `percent` times in 100.
    mutating func chance(_ percent: Int) -> Bool { byte() * 100 < percent * 256 }
    /// 0 through `max` elements.
    mutating func some<T>(_ max: Int, _ element: (inout Self) -> T) -> [T] {
        (0..<below(max + 1)).map { _ in element(&self) }
    }
}
