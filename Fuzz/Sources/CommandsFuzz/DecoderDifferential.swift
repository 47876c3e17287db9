import DiffableCore
import ListWire

/// The request decoder's fast path against its general path, on one line: whatever the one-pass
/// decoder (`Request.decode(line:)`) takes must be the request the reference decoding (`JSONParser.parse`,
/// then `Request.init(_:)`) makes of the same line: the same command, `id` and arguments, with `items`
/// and `snapshot` compared as the commands read them (items, sections). A line the fast path refuses is
/// not checked here (the router falls back to the general path); the end-to-end comparison of replies
/// and states is `Session`'s twin server.
enum DecoderDifferential {
    static func check(_ line: [UInt8]) {
        guard let fast = line.withUnsafeBytes({ Request.decode(line: $0) }) else { return }
        let reference: Request
        do {
            reference = try Request(try JSONParser.parse(line))
        } catch {
            violation("the fast decoder took a line the reference path refuses (\(error))", request: line)
        }
        if fast.command != reference.command { violation("fast cmd \(fast.command.debugDescription) ≠ \(reference.command.debugDescription)", request: line) }
        if fast.id != reference.id { violation("fast id \(String(describing: fast.id)) ≠ \(String(describing: reference.id))", request: line) }
        if let id = reference.id, fast.echoedID?.bytes != line.withUnsafeBytes({ Request.rawID(in: $0) }) ?? id.jsonBytes {
            violation("the fast path echoes another id than the line's bytes", request: line)
        }
        let decodedMembers: Set<String> = ["items", "snapshot"]
        for (name, value) in fast.arguments.members where reference.arguments.members[name] != value {
            violation("argument \(name.debugDescription): fast \(value) ≠ \(String(describing: reference.arguments.members[name]))", request: line)
        }
        for name in reference.arguments.members.keys where fast.arguments.members[name] == nil {
            var probe = fast.arguments
            if !decodedMembers.contains(name) || !probe.isPresent(name) {
                violation("argument \(name.debugDescription) is missing on the fast path", request: line)
            }
        }
        for name in decodedMembers where reference.arguments.members[name] == nil {
            var probe = fast.arguments
            if probe.isPresent(name) { violation("the fast path made up argument \(name.debugDescription)", request: line) }
        }
        var (fastArguments, referenceArguments) = (fast.arguments, reference.arguments)
        if reference.arguments.members["items"] != nil {
            let fastItems = Result<[Item], WireError> { () throws(WireError) in try fastArguments.items("items") }
            let referenceItems = Result<[Item], WireError> { () throws(WireError) in try referenceArguments.items("items") }
            if fastItems != referenceItems { violation("items: fast \(fastItems) ≠ reference \(referenceItems)", request: line) }
        }
        if reference.arguments.members["snapshot"] != nil, reference.command == "apply" {
            let fastSnapshot = Result<[SnapshotEntry], WireError> { () throws(WireError) in try fastArguments.snapshot("snapshot").map(SnapshotEntry.init) }
            let referenceSnapshot = Result<[SnapshotEntry], WireError> { () throws(WireError) in try referenceArguments.snapshot("snapshot").map(SnapshotEntry.init) }
            if fastSnapshot != referenceSnapshot { violation("snapshot: fast \(fastSnapshot) ≠ reference \(referenceSnapshot)", request: line) }
        }
    }

    /// One section of a decoded snapshot, comparable.
    private struct SnapshotEntry: Equatable {
        let section: Section
        let items: [Item]
        init(_ entry: (section: Section, items: [Item])) { (section, items) = (entry.section, entry.items) }
    }
}
