/// libFuzzer's entry point. The first byte picks the mode:
/// - bit 0 clear: the rest is raw bytes, split at newlines into request lines (at most 256);
/// - bit 0 set: the rest drives `CommandGenerator`, which writes valid-looking requests;
/// - bit 1 set: the requests come from an ordinary user, while root owns what they mostly name;
/// - bit 2 set: the server is durable, over a SQLite store in a fresh directory whose writes fail now
///   and then (bits 3–5 pick how often, see `FlakyStore`).
/// Each input runs against a fresh server (`Session`), which checks the invariants after every line
/// and aborts when one breaks.
@_cdecl("LLVMFuzzerTestOneInput")
public func listdFuzzTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let mode = bytes.first else { return 0 }
    let session = Session(asAnotherUser: mode & 2 != 0, store: mode & 4 != 0 ? FlakyStore(plan: mode >> 3) : nil)
    if mode & 1 == 0 {
        for line in bytes.dropFirst().split(separator: 0x0A, omittingEmptySubsequences: false).prefix(256) {
            session.request(Array(line))
        }
    } else {
        var generator = CommandGenerator(bytes: bytes.dropFirst())
        while let line = generator.next() { session.request(Array(line.utf8)) }
    }
    session.finish()
    return 0
}
