import DiffableCore
import ListLayout
import ListEngine
import ListStore
import ListWire

/// `setLayout`: the data source's compositional layout, rendered by every view.
struct SetLayoutCommand: CommandDeclaration {
    static let about = CommandAbout("setLayout", "Sets the data source's compositional layout (a default and per-section layouts) that every view renders; attached views get a layoutChanged event.", result: "{dataSource, version, layout}")
    static var effect: Command.Effect { .mutates }
    @Arg("The data source.") var dataSource: String
    @Arg(
        "A section is {list: {appearance, headerMode, footerMode, showsSeparators}} or {item?, group, interGroupSpacing?, contentInsets?, orthogonalScrollingBehavior?, header?, footer?}."
    ) var layout: LayoutDescription

    func run(_ context: CommandContext) throws(WireError) -> CommandResult {
        let json = layout.json
        return try context.state.commit(.dataSource(name: dataSource, ifVersion: nil, createAs: nil, .setLayout(layout)), connection: context.connection) {
            [dataSource] applied in
            CommandResult(
                reply: .dataSource(dataSource, after: applied.outcome) { writer in
                    writer.key("layout")
                    writer.value(json)
                })
        }
    }
}

extension LayoutDescription: JSONArgumentValue {
    public static var wireType: String { "{default?, sections?: {id: section}}" }

    public static func decode(_ value: JSONValue, name: String) throws(WireError) -> LayoutDescription {
        do throws(LayoutError) {
            return try LayoutDescription(json: value)
        } catch {
            throw WireError(.invalidArgument, "Invalid layout: \(error.path): \(error.message).")
        }
    }
}

/// `layout`: the data source's layout.
struct LayoutQuery: CommandDeclaration {
    static let about = CommandAbout("layout", "The data source's layout (a plain list in every section until setLayout).", result: "{dataSource, layout}")
    @Arg("The data source.") var dataSource: String

    func run(_ context: CommandContext) throws(WireError) -> CommandResult {
        let json = try context.dataSource(dataSource).layout.json
        let name = dataSource
        return CommandResult { writer in
            writer.key("dataSource")
            writer.string(name)
            writer.key("layout")
            writer.value(json)
        }
    }
}

extension CommandRouter {
    static var layoutCommands: [Command] { [Command(SetLayoutCommand.self), Command(LayoutQuery.self)] }
}
