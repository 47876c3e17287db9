/// libFuzzer's entry point of `listd-fuzz-commands`: a few request lines through the router and the
/// engine of a new in-process ephemeral server, on a connection without a channel. The first byte picks
/// the mode:
/// - bit 0 clear: the rest is raw bytes, split at newlines into request lines (at most `maximumLines`);
/// - bit 0 set: data source `d` is set up, then the rest drives `MutationLineGenerator` (mutation lines,
///   mostly plain, some in shapes a fast decoder must refuse);
/// - bits 1 and 2 set and bit 3 clear (an eighth of inputs): a twin server gets every line spelt
///   another way (`LineVariant`) and must answer the same.
/// See `CommandsSession` for the invariants checked.
@_cdecl("LLVMFuzzerTestOneInput")
public func listdCommandsFuzzTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    guard let mode = bytes.first else { return 0 }
    let session = CommandsSession(withTwin: mode & twinMask == twinMode)
    if mode & 1 == 0 {
        for line in bytes.dropFirst().split(separator: 0x0A, omittingEmptySubsequences: false).prefix(maximumLines) {
            session.request(Array(line))
        }
    } else {
        session.request(MutationLineGenerator.setup)
        var generator = MutationLineGenerator(bytes: ArraySlice(bytes.dropFirst()))
        while let line = generator.next() { session.request(line) }
    }
    session.finish()
    return 0
}

/// The mode bits that add the twin server: bits 1 and 2 set, bit 3 clear (it doubles an input's cost:
/// an eighth of inputs have it).
let twinMask: UInt8 = 0b1110
let twinMode: UInt8 = 0b0110

/// Request lines per input, raw or generated: an input is a short conversation (each line costs tens
/// of microseconds under ASan; libFuzzer runs many short inputs better than few long ones).
let maximumLines = 4

/// ASan's defaults for this fuzzer (`ASAN_OPTIONS` still overrides each): no allocation stacks, no fake
/// stacks, no filling of new allocations, a smaller quarantine. Together about a quarter of the time.
@_cdecl("__asan_default_options")
public func listdCommandsFuzzAsanDefaults() -> UnsafePointer<CChar> {
    // A literal: its bytes are constant data, read before Swift's runtime has started.
    let options: StaticString = "malloc_context_size=0:detect_stack_use_after_return=0:max_malloc_fill_size=0:quarantine_size_mb=16"
    return UnsafeRawPointer(options.utf8Start).assumingMemoryBound(to: CChar.self)
}
