import DiffableCore
@testable import ListWeb
import ListWire
import Testing

@Suite("listweb: /metrics from listd's stats")
struct MetricsExporterTests {
    /// The sample lines of the exposition (`name{labels} value`), without comments.
    func samples(_ bytes: [UInt8]) -> [String: String] {
        var samples: [String: String] = [:]
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " ") else { continue }
            samples[String(line[..<space])] = String(line[line.index(after: space)...])
        }
        return samples
    }

    @Test func statsBecomeCountersAndGauges() throws {
        let stats = try JSONParser.parse(Array("""
            {"uptimeSeconds": 12, "connections": {"current": 3, "accepted": 9, "refused": 1}, "views": 2, "items": 151,
             "dataSources": [{"name": "home", "items": 6, "version": 4, "views": 2}],
             "commands": {"attach": 2, "dequeue": 7}, "errors": {"index-out-of-range": 1},
             "events": {"sent": 40, "viewsOverflowed": 0}, "access": {"permissionDenied": 5, "quotaRefused": 0},
             "cells": {"registrations": [{"registration": "row", "created": 3, "reused": 4, "displayed": 2, "pooled": 1}]},
             "plugins": [{"name": "emoji", "requests": 2, "cells": 9, "timeouts": 0, "errors": 0, "pending": 0, "p50Milliseconds": 1.5, "p99Milliseconds": 3.0}],
             "storage": {"store": "sqlite", "available": true, "groupsWritten": 3, "mutationsWritten": 5, "writeFailures": 0, "writeMilliseconds": 20, "waitMilliseconds": 2,
                         "shared": {"lag": 0, "changesFollowed": 1, "conflicts": 0, "reconnects": 0}},
             "memory": {"residentBytes": 1000}}
            """.utf8))
        let exporter = MetricsExporter(counters: RelayCounters())
        exporter.recordLatency(command: "dequeue", duration: .milliseconds(2))
        let found = samples(exporter.render(stats: stats))
        #expect(found["listd_up"] == "1.0")
        #expect(found[#"listd_requests_total{command="dequeue"}"#].flatMap(Double.init) == 7)
        #expect(found[#"listd_errors_total{code="index-out-of-range"}"#].flatMap(Double.init) == 1)
        #expect(found[#"listd_data_source_items{data_source="home"}"#].flatMap(Double.init) == 6)
        #expect(found["listd_events_sent_total"].flatMap(Double.init) == 40)
        #expect(found[#"listd_cells_reused_total{registration="row"}"#].flatMap(Double.init) == 4)
        #expect(found[#"listd_plugin_latency_p99_seconds{plugin="emoji"}"#].flatMap(Double.init) == 0.003)
        #expect(found[#"listd_store_available{store="sqlite"}"#].flatMap(Double.init) == 1)
        #expect(found[#"listd_store_lag{store="sqlite"}"#].flatMap(Double.init) == 0)
        #expect(found[#"listweb_listd_request_duration_seconds_count{command="dequeue"}"#].flatMap(Double.init) == 1)
        #expect(found["listweb_pages"] == "0.0")
    }

    @Test func withoutListdOnlyUpZeroAndListwebsOwn() {
        let found = samples(MetricsExporter(counters: RelayCounters()).render(stats: nil))
        #expect(found["listd_up"] == "0.0")
        #expect(found.keys.allSatisfy { $0.hasPrefix("listweb_") || $0 == "listd_up" })
    }
}
