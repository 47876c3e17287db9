import CellCore
import DiffableCore
import ListWire

extension ServerState {
    /// The `stats` result's members, which listweb's `/metrics` exports too: the counters of `stats`
    /// (`ServerStats`) with what the other parts hold now (connections, views, cells, plugins, the store).
    /// What `caller` may not read (other users' data sources, pids) is left out.
    func writeStats(for caller: ConnectionHandler, to writer: inout JSONWriter) {
        let state = self
        writer.key("uptimeSeconds")
        writer.int(Int((ContinuousClock.now - state.stats.startedAt).components.seconds))
        writer.key("connections")
        writer.beginObject()
        writer.key("current")
        writer.int(state.connections.count)
        writer.key("accepted")
        writer.int(state.stats.connectionsAccepted)
        writer.key("refused")
        writer.int(state.stats.connectionsRefused)
        writer.key("partialLineBytes")
        writer.int(state.connections.partialLineBytes)
        writer.key("heldOutputBytes")
        writer.int(state.heldOutput().total)
        writer.key("closedForHeldOutput")
        writer.int(state.stats.connectionsClosedForHeldOutput)
        writer.key("clients")
        writer.beginArray()
        // Totals over data sources the caller may not read would tell them apart from missing
        // ones: administrators see everything, others what they may read.
        let everything = state.policy.isAdministrator(caller.identity)
        let readable = state.dataSources.values.filter { everything || state.canRead($0.model, caller) }
        for id in state.connections.keys.sorted() {
            let connection = state.connections[id]!
            let views = everything || connection.identity.uid == caller.identity.uid ? connection.views.count : 0
            var entry: [String: JSONValue] = [
                "id": .int(id), "uid": .int(Int(connection.identity.uid)), "pid": .int(Int(connection.identity.pid)),
                "views": .int(views),
            ]
            if let user = connection.identity.user { entry["user"] = .string(user) }
            if let client = connection.clientName { entry["client"] = .string(client) }
            if let plugin = connection.plugin { entry["plugin"] = .string(plugin.name) }
            writer.value(.object(entry))
        }
        writer.endArray()
        writer.endObject()
        writer.key("views")
        writer.int(everything ? state.viewCount : readable.reduce(0) { $0 + $1.views.count })
        writer.key("items")
        writer.int(everything ? state.totalItems : readable.reduce(0) { $0 + $1.snapshot.numberOfItems })
        writer.key("dataSources")
        writer.beginArray()
        for name in state.dataSources.keys.sorted() {
            let dataSource = state.dataSources[name]!
            guard state.canRead(dataSource.model, caller) else { continue }
            writer.value([
                "name": .string(name), "version": .int(dataSource.version),
                "sections": .int(dataSource.snapshot.numberOfSections), "items": .int(dataSource.snapshot.numberOfItems),
                "views": .int(dataSource.views.count),
            ])
        }
        writer.endArray()
        writer.key("cells")
        writer.beginObject()
        writer.key("registrations")
        writer.beginArray()
        for key in state.registrationOrder {
            writer.beginObject()
            writer.key("registration")
            writer.string(Registration.name(ofKey: key))
            writer.key("owner")
            writer.int(Int(state.registrations[key]?.owner ?? 0))
            CommandRouter.writeTotals(state.cellTotals(registration: key), to: &writer)
            writer.endObject()
        }
        writer.endArray()
        writer.key("views")
        writer.beginArray()
        for name in state.dataSources.keys.sorted() where state.canRead(state.dataSources[name]!.model, caller) {
            for view in state.dataSources[name]!.attachedViews {
                let counters = view.cells.counters.values
                writer.value([
                    "view": .string(view.name), "dataSource": .string(name),
                    "displayed": .int(view.cells.displayedCount),
                    "pooled": .int(view.cells.pooledCount),
                    "created": .int(counters.reduce(0) { $0 + $1.created }),
                    "reused": .int(counters.reduce(0) { $0 + $1.reused }),
                    "released": .int(counters.reduce(0) { $0 + $1.released }),
                ])
            }
        }
        writer.endArray()
        writer.key("registrationsRepeated")
        writer.int(state.stats.registrationsRepeated)
        writer.endObject()
        writer.key("plugins")
        writer.beginArray()
        for plugin in Set(state.plugins.byType.values.map(ObjectIdentifier.init)).compactMap({ id in state.plugins.byType.values.first { ObjectIdentifier($0) == id } }).sorted(by: { $0.name < $1.name }) {
            writer.value([
                "name": .string(plugin.name), "provides": .array(plugin.types.map { .string($0) }),
                "requests": .int(plugin.requests), "cells": .int(plugin.cellsRequested), "timeouts": .int(plugin.timeouts),
                "pending": .int(plugin.pending.count),
                "errors": .int(plugin.errors), "p50Milliseconds": .double(plugin.percentile(0.5)),
                "p99Milliseconds": .double(plugin.percentile(0.99)),
                "connectedSeconds": .int(Int((ContinuousClock.now - plugin.connectedAt).components.seconds)),
            ])
        }
        writer.endArray()
        writer.key("supervisedPlugins")
        writer.beginArray()
        for plugin in state.plugins.supervisor?.statuses ?? [] {
            var entry: [String: JSONValue] = [
                "name": .string(plugin.name), "executable": .string(plugin.executable), "running": .bool(plugin.running),
                "starts": .int(plugin.starts),
            ]
            if let pid = plugin.pid, state.policy.isAdministrator(caller.identity) { entry["pid"] = .int(Int(pid)) }
            if let lastExit = plugin.lastExit { entry["lastExit"] = .string(lastExit) }
            writer.value(.object(entry))
        }
        writer.endArray()
        writer.key("memory")
        writer.value(["residentBytes": .int(residentBytes())])
        writer.key("commands")
        writer.value(.object(state.stats.commandCounts(names: CommandRouter.shared.commandOrder).mapValues { .int($0) }))
        writer.key("errors")
        writer.value(.object(state.stats.errorCounts.mapValues { .int($0) }))
        writer.key("events")
        writer.value(["sent": .int(state.stats.eventsSent), "viewsOverflowed": .int(state.stats.viewsOverflowed)])
        writer.key("access")
        writer.value([
            "permissionDenied": .int(state.stats.permissionDenials), "quotaRefused": .int(state.stats.quotaRefusals),
            // What each user's data sources store (maxBytesPerUser counts it), by uid: every user's
            // for administrators, one's own for the others.
            "storedBytesByUser": .object(
                Dictionary(
                    uniqueKeysWithValues: state.model.storedBytesByOwner
                        .filter { state.policy.isAdministrator(caller.identity) || $0.key == caller.identity.uid }
                        .map { (String($0.key), JSONValue.int($0.value)) })),
            // Every part of each user's account (maxBytesPerUser counts them all), by uid
            // (a root relay's as "0-relay"), under the same rule.
            "accounts": state.accountsJSON(visibleTo: caller),
        ])
        if let pipeline = state.storage.pipeline {
            writer.key("storage")
            var storage: [String: JSONValue] = [
                "store": .string(pipeline.store.kind),
                "available": .bool(pipeline.unavailableReason == nil), "restoreRetries": .int(pipeline.restoreRetries),
                "groupsWritten": .int(pipeline.groupsWritten), "mutationsWritten": .int(pipeline.mutationsWritten),
                "recordsWritten": .int(pipeline.recordsWritten),
                "checkpointsWritten": .int(pipeline.checkpointsWritten), "writeFailures": .int(pipeline.writeFailures),
                "writeMilliseconds": .int(Int(pipeline.writeTime / .milliseconds(1))),
                "waitMilliseconds": .int(Int(pipeline.waitTime / .milliseconds(1))),
                "writesInFlight": .int(pipeline.writesInFlight),
            ]
            if let follower = state.storage.follower {
                storage["shared"] = [
                    "lag": .int(follower.lag), "reconnects": .int(follower.store.reconnects), "conflicts": .int(pipeline.conflicts),
                    "changesFollowed": .int(follower.changesFollowed), "dataSourcesReloaded": .int(follower.dataSourcesReloaded),
                    "notices": .int(follower.noticesReceived), "readFailures": .int(follower.readFailures),
                ]
            }
            writer.value(.object(storage))
        }
        writer.key("limits")
        CommandRouter.writeLimits(state.configuration, to: &writer)
    }
}
