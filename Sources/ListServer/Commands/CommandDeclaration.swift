import ListWire

/// A command declared once, as a type: its stored properties are its arguments (`@Arg`s, and
/// groups of them such as `MutationTarget`), decoded from the request in one pass and in declaration
/// order (`@ArgumentDecoding`); `describe`, PROTOCOL.md's tables and the unknown-argument check come from
/// the same declaration (`Command.init(_:)`, through a documentation instance made by `init()`).
///
/// A request runs as: arguments decoded (the first bad one is the error) → `validate` (checks across
/// arguments, or against the configuration) → arguments nobody declared rejected → `run`.
protocol CommandDeclaration: ArgumentDecodable {
    /// Its name, what it does and the shape of its result, for `describe`.
    static var about: CommandAbout { get }
    /// What it does to the state that lasts (`.reads` unless it says otherwise).
    static var effect: Command.Effect { get }

    /// The documentation instance: every argument with its summary, no values.
    init()

    /// Checks that need several arguments, or the configuration; runs before unknown arguments are
    /// looked for (as each command read its arguments before).
    mutating func validate(_ context: CommandContext) throws(WireError)

    /// Runs the command (again, for a mutation that lost to another instance's commit).
    func run(_ context: CommandContext) throws(WireError) -> CommandResult

    /// The data source and version a mutation is for (the router runs it again after catching up
    /// when `ifVersion` is newer than the version held here).
    var mutationTarget: MutationTarget? { get }
}

extension CommandDeclaration {
    static var effect: Command.Effect { .reads }
    mutating func validate(_ context: CommandContext) throws(WireError) {}
    var mutationTarget: MutationTarget? { nil }
}

/// A mutation: its target first, then its own arguments.
protocol MutationDeclaration: CommandDeclaration {
    var target: MutationTarget { get }
}

extension MutationDeclaration {
    static var effect: Command.Effect { .mutates }
    var mutationTarget: MutationTarget? { target }
}

/// What every mutation reads first: the data source, the version it must be at, and whether views
/// animate. Decoded flat, from the request's own members.
@ArgumentDecoding
struct MutationTarget: ArgumentGroup {
    @Arg("The data source.") var dataSource: String
    @Arg("Apply only if the data source is at this version (else version-conflict).") var ifVersion: Count?
    @Arg("false: views apply the changes without animation (UIKit's apply(_:animatingDifferences:)); default true.")
    var animatingDifferences: Bool?

    /// `ifVersion`, as a number.
    var expectedVersion: Int? { ifVersion?.value }
    /// Whether views animate the change (the default).
    var animates: Bool { animatingDifferences ?? true }
}

extension Command {
    /// The command `declaration` declares: its documentation from a documentation instance, its
    /// handler decoding the declaration from each request.
    init<Declaration: CommandDeclaration>(_ declaration: Declaration.Type) {
        self.init(
            name: Declaration.about.name, summary: Declaration.about.summary, arguments: ArgumentDocumentation.of(Declaration()),
            result: Declaration.about.result, effect: Declaration.effect
        ) { arguments, context throws(WireError) in
            var command = try Declaration(arguments: &arguments)
            try command.validate(context)
            return PreparedCommand(target: command.mutationTarget) { context throws(WireError) in try command.run(context) }
        }
    }
}

/// What `describe` says of a command besides its arguments.
struct CommandAbout: Sendable {
    /// The command's name, as requests give it in `cmd`.
    let name: String
    /// What it does.
    let summary: String
    /// The shape of its result.
    let result: String

    init(_ name: String, _ summary: String, result: String) {
        self.name = name
        self.summary = summary
        self.result = result
    }
}

/// A request's command, decoded and validated, ready to run.
struct PreparedCommand {
    /// A mutation's target (for the router's retry after catching up).
    var target: MutationTarget?
    let run: (CommandContext) throws(WireError) -> CommandResult
}
