import CellCore
import DiffableCore
import ListEngine
import ListStore
import ListWire
import NIOCore

extension CellConfigurator {
    /// One cell for a plugin to configure: where its answer goes in the reply, and what it shows.
    struct PluginCellRequest {
        var index: Int
        var registration: Registration
        var context: TemplateContext
        var cell: String
        /// What the view shows in the cell (the item's identifier).
        var key: String { context.item }
    }

    /// Why cells go to their plugin: a dequeue hands out no cell that failed; a reconfigure keeps the
    /// displayed cell and its previous content, and reports the error beside it.
    enum PluginConfigurePurpose {
        case dequeue
        case reconfigure
    }

    /// One cell of a configure event: `{cell, registration, type, indexPath, item, data, state, properties}`,
    /// written straight from the model (this is the plugin path's hottest loop).
    static func writeConfigureCell(_ entry: PluginCellRequest, type: String, to writer: inout JSONWriter) {
        let context = entry.context
        writer.beginObject()
        writer.key("cell")
        writer.string(entry.cell)
        writer.key("registration")
        writer.string(entry.registration.name)
        writer.key("type")
        writer.string(type)
        writer.key("indexPath")
        writer.indexPath(context.indexPath)
        writer.key("item")
        writer.string(context.item)
        writer.key("data")
        writer.value(context.data)
        // As in dequeue replies: only the flags that are on, and the custom keys.
        writer.key("state")
        CellReply.writeState(context.state, to: &writer)
        writer.key("properties")
        if entry.registration.hasContentProperties {
            writer.value(entry.registration.pluginProperties(context))
        } else {
            writer.beginObject()
            writer.endObject()
        }
        writer.endObject()
    }

    /// Sends plugin cells to their plugins (one configure request per plugin), and calls `done` once every
    /// one has an answer, an error or has timed out. `replies` holds every cell of the reply, in order;
    /// plugin cells are placeholders until then.
    static func configurePluginCells(
        _ requests: [PluginCellRequest], replies: [CellReply], purpose: PluginConfigurePurpose,
        view: ViewSession, sources: CellSources, eventLoop: EventLoop, done: @escaping ([CellReply]) -> Void
    ) {
        var replies = replies
        var byType: [String: [PluginCellRequest]] = [:]
        for request in requests { byType[request.registration.pluginType!, default: []].append(request) }
        var outstanding = 0
        func fail(_ entry: PluginCellRequest, _ code: ErrorCode, _ message: String) {
            if purpose == .dequeue { view.cells.release(entry.cell) }
            replies[entry.index].error = WireError(code, message)
        }
        var finished = false
        func finishIfDone() {
            if outstanding == 0 && !finished {
                finished = true
                done(replies)
            }
        }
        for (type, entries) in byType {
            guard let plugin = sources.plugins.byType[type] else {
                for entry in entries { fail(entry, .pluginUnavailable, "No connected plugin provides \"\(type)\".") }
                continue
            }
            outstanding += 1
            plugin.configure(
                ids: entries.map(\.cell), writeCells: { writer in for entry in entries { writeConfigureCell(entry, type: type, to: &writer) } },
                deadline: .milliseconds(Int64(sources.pluginDeadlineMilliseconds)),
                limits: (sources.maximumPluginPendingRequests, sources.maximumOutputBytesHard), eventLoop: eventLoop
            ) { answers in
                outstanding -= 1
                for entry in entries {
                    guard let answers else {
                        fail(entry, .pluginTimeout, "Plugin \"\(plugin.name)\" did not configure the cell within \(sources.pluginDeadlineMilliseconds) ms.")
                        continue
                    }
                    guard let answer = answers[entry.cell] else {
                        fail(entry, .pluginUnavailable, "Plugin \"\(plugin.name)\" is gone or gave no answer for this cell.")
                        continue
                    }
                    if case .object(let error)? = answer["error"] {
                        plugin.errors += 1
                        fail(entry, .pluginUnavailable, "Plugin \"\(plugin.name)\": \(error["message"]?.stringValue ?? "error")")
                        continue
                    }
                    guard case .object(let content)? = answer["content"] else {
                        plugin.errors += 1
                        fail(entry, .pluginUnavailable, "Plugin \"\(plugin.name)\" sent content of the wrong shape.")
                        plugin.close(reason: "configured: cell \(entry.cell) has no content object")
                        continue
                    }
                    // A plugin providing several types may answer with any of them (UIKit: a cell given
                    // another content configuration type); a type it does not provide is a protocol error.
                    var contentType = type
                    if let named = content["type"] {
                        guard case .string(let name) = named, plugin.types.contains(name) else {
                            plugin.errors += 1
                            fail(entry, .pluginUnavailable, "Plugin \"\(plugin.name)\" answered with a content type it does not provide.")
                            plugin.close(reason: "configured: cell \(entry.cell) has content type \(named), not one of \(plugin.types)")
                            continue
                        }
                        contentType = name
                    }
                    let configured = entry.registration.configured(
                        withPluginContent: content, type: "plugin:" + contentType, background: answer["background"],
                        accessories: answer["accessories"], entry.context)
                    // The view may have let the cell go (or reused it for another item) while the plugin worked.
                    guard view.cells.displayedCell(for: entry.key)?.id == entry.cell else {
                        replies[entry.index].configured = configured
                        continue
                    }
                    if let previous = view.cells.replacedContentType(configuring: entry.cell, with: configured) {
                        replies[entry.index].replacedWarning =
                            "Cell \(entry.cell) of registration \"\(entry.registration.name)\" had a \(previous) configuration and now gets a \(configured.type) one: the content view must be replaced. Use separate registrations for different types of cells."
                    }
                    replies[entry.index].configured = configured
                }
                finishIfDone()
            }
        }
        finishIfDone()
    }
}
