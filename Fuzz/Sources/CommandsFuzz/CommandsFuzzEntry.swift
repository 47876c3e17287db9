/// libFuzzer's entry point of `listd-fuzz-commands`: request lines through the router and the engine of
/// an in-process ephemeral server, many thousand inputs a second. The first byte picks the mode:
/// - bit 0 clear: the rest is raw bytes, split at newlines into request lines (at most 64);
/// - bit 0 set: data source `d` is set up, then the rest drives `MutationLineGenerator` (mutation lines,
///   mostly plain, some in shapes a fast decoder must refuse);
/// - bit 1 set: a twin server gets every line spelt another way (`LineVariant`) and must answer the same.
/// Inputs share one server (emptied after each, see `CommandsSession.end`). See `CommandsSession` for the
/// invariants checked.
@_cdecl("LLVMFuzzerTestOneInput")
public func listdCommandsFuzzTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    guard let mode = bytes.first else { return 0 }
    let session = CommandsSession.begin(withTwin: mode & 2 != 0)
    var connectionUsed = false
    if mode & 1 == 0 {
        connectionUsed = usesConnection(bytes)
        for line in bytes.dropFirst().split(separator: 0x0A, omittingEmptySubsequences: false).prefix(64) {
            session.request(Array(line))
        }
    } else {
        session.request(MutationLineGenerator.setup)
        var generator = MutationLineGenerator(bytes: ArraySlice(bytes.dropFirst()))
        while let line = generator.next() { session.request(line) }
    }
    session.finish()
    session.end(connectionUsed: connectionUsed)
    return 0
}

/// Words of the commands whose effects live with a connection (views, cells, a plugin's hello, repeated
/// registers) and a backslash (which may spell any of them): an input with one gets new servers after.
private let connectionWords: [[UInt8]] = ["hello", "attach", "dequeue", "isplaying", "setState", "watch", "configured", "prefetch", "register", "backup", "\\"].map { Array($0.utf8) }

/// Whether raw-mode `bytes` may have left something with the connection (see `connectionWords`).
private func usesConnection(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
    connectionWords.contains { word in
        var index = 0
        while index + word.count <= bytes.count {
            if bytes[index] == word[0], bytes[index..<index + word.count].elementsEqual(word) { return true }
            index += 1
        }
        return false
    }
}
