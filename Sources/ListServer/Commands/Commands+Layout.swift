import DiffableCore
import ListLayout
import ListEngine
import ListStore
import ListWire

extension CommandRouter {
    static var layoutCommands: [Command] {
        [
            Command(
                name: "setLayout",
                summary: "Sets the data source's compositional layout (a default and per-section layouts) that every view renders; attached views get a layoutChanged event.",
                arguments: [
                    ArgumentSpec("dataSource", "string", required: true, "The data source."),
                    ArgumentSpec(
                        "layout", "{default?, sections?: {id: section}}", required: true,
                        "A section is {list: {appearance, headerMode, footerMode, showsSeparators}} or {item?, group, interGroupSpacing?, contentInsets?, orthogonalScrollingBehavior?, header?, footer?}."),
                ],
                result: "{dataSource, version, layout}", effect: .mutates
            ) { arguments, _ throws(WireError) in
                let name = try arguments.string("dataSource")
                let json = try arguments.required("layout")
                let layout: LayoutDescription
                do throws(LayoutError) {
                    layout = try LayoutDescription(json: json)
                } catch {
                    throw WireError(.invalidArgument, "Invalid layout: \(error.path): \(error.message).")
                }
                return { context throws(WireError) in
                    let committed = try context.state.commit(
                        .dataSource(name: name, ifVersion: nil, createAs: nil, .setLayout(layout)), connection: context.connection)
                    let json = layout.json
                    return committed.result(dataSource: name) { writer in
                        writer.key("layout")
                        writer.value(json)
                    }
                }
            },
            Command(
                name: "layout", summary: "The data source's layout (a plain list in every section until setLayout).",
                arguments: [ArgumentSpec("dataSource", "string", required: true, "The data source.")],
                result: "{dataSource, layout}"
            ) { arguments, _ throws(WireError) in
                let name = try arguments.string("dataSource")
                return { context throws(WireError) in
                    let json = try context.dataSource(name).layout.json
                    return CommandResult { writer in
                        writer.key("dataSource")
                        writer.string(name)
                        writer.key("layout")
                        writer.value(json)
                    }
                }
            },
        ]
    }
}
