import DiffableCore

/// "Did you mean" for the command-line tools (the rule lives in DiffableCore, where registrations use it too).
public typealias Spelling = DiffableCore.Spelling
