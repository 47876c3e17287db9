import DiffableCore

extension Arguments {
    /// The message for the arguments `unknown` (sorted), each followed by the closest of `candidates` when
    /// one is close enough to be a typo (`Spelling.closest`): `Unknown argument "tosection"; did you mean
    /// "toSection"?`, or for several `Unknown arguments "extra", "tosection" (did you mean "toSection"?).`
    static func unknownArgumentsMessage(_ unknown: [String], suggestingFrom candidates: [String]) -> String {
        // A declared name left unread (one of two alternatives given together) is no suggestion for itself.
        let closest = { (name: String) in Spelling.closest(to: name, in: candidates.lazy.filter { $0 != name }) }
        if unknown.count == 1 {
            return "Unknown argument \"\(unknown[0])\"" + (closest(unknown[0]).map { "; did you mean \"\($0)\"?" } ?? ".")
        }
        let listed = unknown.map { name in "\"\(name)\"" + (closest(name).map { " (did you mean \"\($0)\"?)" } ?? "") }
        return "Unknown arguments \(listed.joined(separator: ", "))."
    }
}

extension Arguments {
    /// The error for a required argument that is absent. When the request gives an argument no command
    /// read yet whose name is close to it, that one is named (`Missing argument "items"; "itemz" was
    /// given: did you mean "items"?`): a misspelt required argument is told as such, not only as missing.
    public func missing(_ name: String) -> WireError {
        // Sorted: the same request gets the same hint whatever path decoded the line.
        let unread = givenNames.filter { $0 != name && !wasRead($0) }.sorted()
        let hint = Spelling.closest(to: name, in: unread).map { "; \"\($0)\" was given: did you mean \"\(name)\"?" } ?? "."
        return WireError(.invalidArgument, "Missing argument \"\(name)\"" + hint)
    }
}

extension EditCodec.Kind {
    /// The names of the arguments an edit of this kind declares (for "did you mean" in `batch`'s
    /// operations), worked out once from the declarations.
    public var argumentNames: [String] { Self.argumentNamesByKind[self] ?? [] }

    private static let argumentNamesByKind: [EditCodec.Kind: [String]] = Dictionary(
        uniqueKeysWithValues: allCases.map { kind in (kind, ArgumentDocumentation.of(kind.declaration.init()).map(\.name)) })
}
