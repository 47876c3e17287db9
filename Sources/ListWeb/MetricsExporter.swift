import DiffableCore
import ListWire
import Prometheus

/// `/metrics`: listd's `stats` in the Prometheus text format (read anew on every scrape), followed by
/// listweb's own metrics (pages, lines relayed, refusals, and how long listd took to answer the pages'
/// requests, by command).
public struct MetricsExporter: Sendable {
    /// listweb's own metrics, kept across scrapes.
    let registry: PrometheusCollectorRegistry
    let counters: RelayCounters

    public init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry(), counters: RelayCounters) {
        self.registry = registry
        self.counters = counters
    }

    /// How long listd took to answer a page's request (from listweb passing it on to the reply).
    func recordLatency(command: String, duration: Duration) {
        registry.makeDurationHistogram(
            descriptor: metric("listweb_listd_request_duration_seconds", "How long listd took to answer the requests pages made through listweb."),
            labels: [("command", command)],
            buckets: [.microseconds(100), .microseconds(250), .microseconds(500), .milliseconds(1), .microseconds(2500), .milliseconds(5),
                .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250), .seconds(1)]
        ).record(duration)
    }

    /// The exposition: listd's figures from `stats` (or `listd_up 0` when it cannot be read), then
    /// listweb's.
    public func render(stats: JSONValue?) -> [UInt8] {
        let listd = PrometheusCollectorRegistry()
        listd.makeGauge(descriptor: metric("listd_up", "Whether listweb could read listd's stats."), labels: []).set(Double(stats == nil ? 0 : 1))
        if let stats { Self.export(stats, into: listd) }
        let own = counters.snapshot
        registry.makeGauge(descriptor: metric("listweb_pages", "Pages connected now (each is a view of listd)."), labels: []).set(Double(own.open))
        registry.makeGauge(descriptor: metric("listweb_pages_opened", "Pages connected since listweb started."), labels: []).set(Double(own.opened))
        registry.makeGauge(descriptor: metric("listweb_lines_relayed", "Replies and events passed from listd to pages."), labels: []).set(Double(own.lines))
        registry.makeGauge(descriptor: metric("listweb_bytes_relayed", "Bytes passed from listd to pages."), labels: []).set(Double(own.bytes))
        registry.makeGauge(descriptor: metric("listweb_requests_refused", "Page requests listweb refused (read-only, other views, other commands)."), labels: [])
            .set(Double(own.refused))
        registry.makeGauge(descriptor: metric("listweb_pages_refused", "Pages refused because --max-pages were open."), labels: [])
            .set(Double(own.refusedPages))
        var bytes = listd.emitToBuffer()
        registry.emit(into: &bytes)
        return bytes
    }

    /// listd's `stats`, metric by metric. Totals are counters (`_total`), levels gauges.
    static func export(_ stats: JSONValue, into registry: PrometheusCollectorRegistry) {
        func gauge(_ name: String, _ help: String, _ value: JSONValue?, labels: [(String, String)] = []) {
            guard let number = value?.doubleValue else { return }
            registry.makeGauge(descriptor: metric(name, help), labels: labels).set(number)
        }
        func counter(_ name: String, _ help: String, _ value: JSONValue?, labels: [(String, String)] = []) {
            guard let number = value?.doubleValue, number >= 0 else { return }
            registry.makeCounter(descriptor: metric(name, help), labels: labels).increment(by: number)
        }
        gauge("listd_uptime_seconds", "Seconds since listd started.", stats["uptimeSeconds"])
        gauge("listd_connections", "Connections open now.", stats["connections"]?["current"])
        counter("listd_connections_accepted_total", "Connections accepted.", stats["connections"]?["accepted"])
        counter("listd_connections_refused_total", "Connections refused (limits).", stats["connections"]?["refused"])
        gauge("listd_held_output_bytes", "Unsent bytes of paused connections.", stats["connections"]?["heldOutputBytes"])
        gauge("listd_views", "Views attached now.", stats["views"])
        gauge("listd_items", "Items in every data source.", stats["items"])
        gauge("listd_resident_memory_bytes", "listd's resident memory.", stats["memory"]?["residentBytes"])
        let dataSources = stats["dataSources"]?.arrayValue ?? []
        gauge("listd_data_sources", "Data sources served.", .int(dataSources.count))
        for dataSource in dataSources {
            guard let name = dataSource["name"]?.stringValue else { continue }
            let labels = [("data_source", name)]
            gauge("listd_data_source_items", "Items of a data source.", dataSource["items"], labels: labels)
            gauge("listd_data_source_version", "A data source's version.", dataSource["version"], labels: labels)
            gauge("listd_data_source_views", "Views attached to a data source.", dataSource["views"], labels: labels)
        }
        if case .object(let commands)? = stats["commands"] {
            for (command, count) in commands { counter("listd_requests_total", "Requests by command.", count, labels: [("command", command)]) }
        }
        if case .object(let errors)? = stats["errors"] {
            for (code, count) in errors { counter("listd_errors_total", "Error replies by code.", count, labels: [("code", code)]) }
        }
        counter("listd_events_sent_total", "Events sent to views.", stats["events"]?["sent"])
        counter("listd_views_overflowed_total", "Views cut for falling behind (overflow).", stats["events"]?["viewsOverflowed"])
        counter("listd_permission_denied_total", "Requests refused by the access policy.", stats["access"]?["permissionDenied"])
        counter("listd_quota_refused_total", "Changes refused by a per-user quota.", stats["access"]?["quotaRefused"])
        for registration in stats["cells"]?["registrations"]?.arrayValue ?? [] {
            guard let name = registration["registration"]?.stringValue else { continue }
            let labels = [("registration", name)]
            counter("listd_cells_created_total", "Cells created (none was free in the pool).", registration["created"], labels: labels)
            counter("listd_cells_reused_total", "Cells taken from a reuse pool.", registration["reused"], labels: labels)
            gauge("listd_cells_displayed", "Cells displayed now.", registration["displayed"], labels: labels)
            gauge("listd_cells_pooled", "Cells waiting in reuse pools.", registration["pooled"], labels: labels)
        }
        for plugin in stats["plugins"]?.arrayValue ?? [] {
            guard let name = plugin["name"]?.stringValue else { continue }
            let labels = [("plugin", name)]
            counter("listd_plugin_requests_total", "Configure requests sent to a plugin.", plugin["requests"], labels: labels)
            counter("listd_plugin_cells_total", "Cells a plugin was asked to configure.", plugin["cells"], labels: labels)
            counter("listd_plugin_timeouts_total", "Configure requests a plugin did not answer in time.", plugin["timeouts"], labels: labels)
            counter("listd_plugin_errors_total", "Plugin answers that were errors.", plugin["errors"], labels: labels)
            gauge("listd_plugin_pending", "Configure requests waiting on a plugin.", plugin["pending"], labels: labels)
            gauge("listd_plugin_latency_p50_seconds", "A plugin's median answer time.", plugin["p50Milliseconds"].flatMap(\.doubleValue).map { .double($0 / 1000) }, labels: labels)
            gauge("listd_plugin_latency_p99_seconds", "A plugin's 99th percentile answer time.", plugin["p99Milliseconds"].flatMap(\.doubleValue).map { .double($0 / 1000) }, labels: labels)
        }
        if let storage = stats["storage"] {
            let labels = [("store", storage["store"]?.stringValue ?? "")]
            gauge("listd_store_available", "Whether the store can be written (1) or listd refuses changes (0).", storage["available"].map { $0 == .bool(true) ? .int(1) : .int(0) }, labels: labels)
            counter("listd_store_groups_written_total", "Groups of changes written (group commit).", storage["groupsWritten"], labels: labels)
            counter("listd_store_mutations_written_total", "Changes made durable.", storage["mutationsWritten"], labels: labels)
            counter("listd_store_write_failures_total", "Writes that failed (their changes undone).", storage["writeFailures"], labels: labels)
            counter("listd_store_write_seconds_total", "Time spent writing.", storage["writeMilliseconds"].flatMap(\.doubleValue).map { .double($0 / 1000) }, labels: labels)
            counter("listd_store_wait_seconds_total", "Time changes waited to be written.", storage["waitMilliseconds"].flatMap(\.doubleValue).map { .double($0 / 1000) }, labels: labels)
            if let shared = storage["shared"] {
                gauge("listd_store_lag", "Changes of other instances not applied here yet.", shared["lag"], labels: labels)
                counter("listd_store_changes_followed_total", "Changes of other instances applied here.", shared["changesFollowed"], labels: labels)
                counter("listd_store_conflicts_total", "Writes that lost to another instance's and were retried.", shared["conflicts"], labels: labels)
                counter("listd_store_reconnects_total", "Reconnections to the shared store.", shared["reconnects"], labels: labels)
            }
        }
    }
}

/// A metric's name and help text.
func metric(_ name: String, _ help: String) -> MetricNameDescriptor {
    MetricNameDescriptor(metricName: name, unitName: "", helpText: help)
}

extension JSONValue {
    /// A number as a Double (integers too); nil for anything else.
    var doubleValue: Double? {
        switch self {
        case .int(let value): return Double(value)
        case .double(let value): return value
        default: return nil
        }
    }
}
