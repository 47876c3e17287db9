import CellCore
import DiffableCore
import ListEngine
import ListStore
import ListWire
import NIOCore

/// Configures the cells views display: takes one from its registration's pool for the view (or a new
/// one), renders its content configuration, and configures displayed cells again after a change. Used
/// by the commands that hand out cells and by the publisher after a change.
enum CellConfigurator {
    /// Takes a cell for `key` (displayed, pooled or new) and configures it. With `work`, the rendering
    /// steps count toward the request's (see `RenderWork`).
    static func configureCell(
        view: ViewSession, key: String, registration: Registration, context makeContext: (CellState) -> TemplateContext,
        position: CellReply.Position, outline: OutlinePlacement? = nil, work: RenderWork? = nil
    ) -> CellReply {
        let (id, reused) = view.obtainCell(registration: registration.key, for: key)
        var state = view.cells.state(of: id)!
        // An outline item's expansion is the outline's, not the cell's.
        if let outline, state.expanded != outline.expanded {
            state.expanded = outline.expanded
            view.cells.setState(state, of: id)
        }
        var reply = CellReply(
            id: id, position: position, registration: registration.name, reused: reused, state: state,
            indentationLevel: outline?.level ?? 0)
        do throws(CellError) {
            let context = makeContext(state)
            let configured = try (work ?? RenderWork()).spend(on: registration) { budget throws(CellError) in
                try registration.configure(context, budget: &budget)
            }
            if let previousType = view.cells.replacedContentType(configuring: id, with: configured) {
                reply.replacedWarning =
                    "Cell \(id) of registration \"\(registration.name)\" had a \(previousType) configuration and now gets a \(configured.type) one: the content view must be replaced. Use separate registrations for different types of cells."
            }
            reply.configured = configured
        } catch {
            view.cells.release(id)
            reply.error = WireError(error)
        }
        return reply
    }

    /// Where an item sits in its section's stored outline, as `view` shows it (its own expansion, when it
    /// has one); `nil` when the section has no outline (or the item is not in it).
    static func outlinePlacement(of item: String, inSection section: String, in dataSource: DataSource, view: ViewSession) -> OutlinePlacement? {
        guard let outline = dataSource.outlines[section], let level = try? outline.level(of: item) else { return nil }
        let expanded = view.expansion?.isExpanded(item, inSection: section, outline: outline) ?? ((try? outline.isExpanded(item)) ?? false)
        return OutlinePlacement(expanded: expanded, level: level)
    }

    /// A displayed cell configured again: at once, or once its plugin answers `request` (the placeholder
    /// holds the cell's previous content, which stays when the plugin fails).
    enum Reconfiguration {
        case configured(CellReply)
        case plugin(PluginCellRequest, placeholder: CellReply)
    }

    /// Configures a displayed cell again for what it shows now (same cell identifier); `nil` when what it
    /// showed is gone.
    /// `work` is the render budget shared by the cells of one request or one change (see `RenderWork`).
    static func reconfigure(
        view: ViewSession, cell id: String, in dataSource: DataSource, registrations: [String: Registration], work: RenderWork = RenderWork()
    ) -> Reconfiguration? {
        guard let cell = view.cells.cells[id], let key = cell.displayedFor,
            let registration = registrations[cell.registration]
                ?? (cell.registration == DefaultPresentation.name ? DefaultPresentation.registration : nil)
        else { return nil }
        let snapshot = view.snapshot(in: dataSource)
        if let (elementKind, item) = anchoredSupplementary(ofKey: key) {
            guard let path = snapshot.indexPath(ofItem: item), let data = snapshot.data(ofItem: item) else { return nil }
            let section = snapshot.sectionIdentifier(at: path.section)!
            return .configured(
                configureCell(
                    view: view, key: key, registration: registration,
                    context: { TemplateContext(item: item, data: data, section: section, indexPath: path, state: $0) },
                    position: .supplementary(path, elementKind: elementKind, section: section, item: item), work: work))
        }
        if registration.pluginType != nil {
            guard let path = snapshot.indexPath(ofItem: key), let data = snapshot.data(ofItem: key) else { return nil }
            let section = snapshot.sectionIdentifier(at: path.section)!
            let placement = outlinePlacement(of: key, inSection: section, in: dataSource, view: view)
            var state = cell.state
            if let placement, state.expanded != placement.expanded {
                state.expanded = placement.expanded
                view.cells.setState(state, of: id)
            }
            let context = TemplateContext(item: key, data: data, section: section, indexPath: path, state: state)
            let placeholder = CellReply(
                id: id, position: .item(path, key), registration: registration.name, reused: false, state: state,
                indentationLevel: placement?.level ?? 0, configured: cell.configured)
            return .plugin(PluginCellRequest(index: 0, registration: registration, context: context, cell: id), placeholder: placeholder)
        }
        if key.hasPrefix("\u{1}") {
            let parts = key.split(separator: "\u{1}", omittingEmptySubsequences: false)
            guard parts.count == 4, let index = snapshot.index(ofSection: String(parts[2])), let section = snapshot.section(at: index) else { return nil }
            let path = IndexPath(section: index, item: Int(parts[3]) ?? 0)
            return .configured(
                configureCell(
                    view: view, key: key, registration: registration,
                    context: { TemplateContext(item: section.id, data: section.data, section: section.id, indexPath: path, state: $0) },
                    position: .supplementary(path, elementKind: String(parts[1]), section: section.id), work: work))
        }
        guard let path = snapshot.indexPath(ofItem: key), let data = snapshot.data(ofItem: key) else { return nil }
        let section = snapshot.sectionIdentifier(at: path.section)!
        var configured = configureCell(
            view: view, key: key, registration: registration,
            context: { TemplateContext(item: key, data: data, section: section, indexPath: path, state: $0) },
            position: .item(path, key), outline: outlinePlacement(of: key, inSection: section, in: dataSource, view: view), work: work)
        configured.reorderable = dataSource.cellProvider?.canReorder(Item(key, data: data), inSection: section) ?? false
        return .configured(configured)
    }
}

/// An item's place in an outline, as its cell shows it: the disclosure's state and the indentation.
struct OutlinePlacement: Equatable {
    /// Whether the item's children are visible.
    var expanded: Bool
    /// The item's depth: 0 at the root level.
    var level: Int
}

/// The rendering steps the cells of one request have taken together, against
/// `TemplateLimits.maxRequestRenderSteps`: once they are spent, the request's further cells fail with
/// `limit-exceeded` without rendering, so that no request holds the event loop for long.
final class RenderWork {
    private(set) var steps = 0
    let limit: Int

    init(limit: Int = TemplateLimits.standard.maxRequestRenderSteps) {
        self.limit = limit
    }

    /// Runs `render` with a fresh budget of the registration's limits and counts the steps it took (also
    /// when it throws).
    ///
    /// - Throws: `CellError` (`limit-exceeded`) when the request's steps are already spent, or what
    ///   `render` throws.
    func spend<Result>(
        on registration: Registration, _ render: (inout RenderBudget) throws(CellError) -> Result
    ) throws(CellError) -> Result {
        guard steps < limit else {
            throw CellError(
                .limitExceeded,
                "The cells before this one took the request's \(limit) rendering steps: ask for fewer cells at a time (registration \"\(registration.name)\").")
        }
        var budget = RenderBudget(limits: registration.limits)
        defer { steps += budget.steps }
        return try render(&budget)
    }
}
