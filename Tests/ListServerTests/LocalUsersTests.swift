import CTestCredentials
import DiffableCore
import Foundation
import ListClient
import ListWire
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The user the tests act as besides root: `nobody`, with its own group.
let otherUID: UInt32 = 65534
let otherGID: UInt32 = 65534

/// Connects to `daemon` as `uid`/`gid`: a forked child drops to them and connects, so listd's
/// `SO_PEERCRED` reads them (the test process must be root, as CI's is).
func connect(_ daemon: Daemon, uid: UInt32 = otherUID, gid: UInt32 = otherGID, groups: [UInt32] = []) throws -> LineConnection {
    // Under the launch lock: the forked child holds a copy of every descriptor until it exits.
    let descriptor = ChildProcessLaunch.exclusively {
        groups.withUnsafeBufferPointer { listd_test_connect_as(daemon.socketPath, uid, gid, $0.baseAddress, $0.count) }
    }
    guard descriptor >= 0 else { throw ClientError("cannot connect as uid \(uid): \(String(cString: strerror(errno)))") }
    return LineConnection(adopting: descriptor)
}

/// A daemon another user can reach: a socket of mode 0666 in a directory others may enter.
func sharedDaemon(arguments: [String] = [], configuration: JSONValue? = nil) throws -> Daemon {
    let directory = try makeTemporaryDirectory()
    chmod(directory, 0o755)
    return try Daemon(arguments: ["--socket-mode", "0666"] + arguments, configuration: configuration, directory: directory)
}

@Suite("Local users: kernel identities, owners, the policy, quotas", .serialized)
struct LocalUsersTests {
    @Test func helloReportsTheKernelsIdentity() throws {
        let daemon = try sharedDaemon()
        let other = try connect(daemon)
        let hello = try other.request(["cmd": "hello", "client": "as-nobody"]).result()
        #expect(hello["uid"] == .int(Int(otherUID)) && hello["gid"] == .int(Int(otherGID)) && hello["user"] == "nobody")
        #expect(hello["pid"]?.intValue.map { $0 > 0 } == true)
        let root = try daemon.connect()
        #expect(try root.request(["cmd": "hello"]).result()["uid"] == 0)
        let clients = try root.request(["cmd": "stats"]).result()["connections"]?["clients"]?.arrayValue ?? []
        #expect(clients.contains { $0["uid"] == .int(Int(otherUID)) && $0["user"] == "nobody" && $0["client"] == "as-nobody" })
        #expect(clients.contains { $0["uid"] == 0 && $0["user"] == "root" })
    }

    @Test func anotherUserReadsRootsDataButChangesNothing() throws {
        let daemon = try sharedDaemon()
        let root = try daemon.connect()
        for request: JSONValue in [
            ["cmd": "apply", "dataSource": "tasks", "snapshot": ["sections": [["id": "S", "items": ["a", "b"]]]]],
            ["cmd": "register", "registration": "row", "contentConfiguration": ["type": "cell", "text": "{{title}}"]],
            ["cmd": "setCellProvider", "dataSource": "tasks", "rules": [], "default": "row"],
            ["cmd": "attach", "dataSource": "tasks", "view": "roots"],
            ["cmd": "dequeue", "view": "roots", "indexPaths": [[0, 0]]],
        ] {
            _ = try root.request(request).result()
        }
        let before = try root.request(["cmd": "snapshot", "dataSource": "tasks"]).result()
        let other = try connect(daemon)

        // Reading is allowed.
        #expect(try other.request(["cmd": "snapshot", "dataSource": "tasks"]).result()["sections"] == before["sections"])
        #expect(try other.request(["cmd": "numberOfItems", "dataSource": "tasks"]).result()["count"] == 2)
        let listed = try other.request(["cmd": "listDataSources"]).result()["dataSources"]?.arrayValue.first
        #expect(listed?["owner"] == 0 && listed?["ownerName"] == "root" && listed?["access"] == "read")
        _ = try other.request(["cmd": "attach", "dataSource": "tasks", "view": "mine"]).result()
        _ = try other.request(["cmd": "dequeue", "view": "mine", "indexPaths": [[0, 1]]]).result()

        // `stats` counts the views of one's own connections only; an administrator sees everyone's.
        func clients(_ connection: LineConnection) throws -> [JSONValue] {
            try connection.request(["cmd": "stats"]).result()["connections"]?["clients"]?.arrayValue ?? []
        }
        let seenByOther = try clients(other)
        #expect(seenByOther.contains { $0["uid"] == .int(Int(otherUID)) && $0["views"] == 1 })
        #expect(!seenByOther.contains { $0["uid"] == 0 && $0["views"] != 0 })
        #expect(try clients(root).contains { $0["uid"] == 0 && $0["views"] == 1 })

        // The message PROTOCOL.md shows, word for word.
        let denied = try other.request(["id": 1, "cmd": "appendItems", "dataSource": "tasks", "items": ["x"]])
        #expect(
            denied["error"]?["message"]
                == #"Data source "tasks" is owned by root (uid 0); user nobody (uid 65534) has read access (default), and to change its content needs write."#)
        #expect(denied["error"]?["owner"] == 0 && denied["error"]?["ownerName"] == "root" && denied["error"]?["required"] == "write")

        // Every kind of change to root's data source, registration and view is refused.
        let mutations: [JSONValue] = [
            ["cmd": "appendSections", "dataSource": "tasks", "sections": ["T"]],
            ["cmd": "deleteItems", "dataSource": "tasks", "items": ["a"]],
            ["cmd": "moveItem", "dataSource": "tasks", "item": "a", "afterItem": "b"],
            ["cmd": "updateItems", "dataSource": "tasks", "items": [["id": "a", "data": ["title": "pwned"]]]],
            ["cmd": "deleteAllItems", "dataSource": "tasks"],
            ["cmd": "apply", "dataSource": "tasks", "snapshot": ["sections": []]],
            ["cmd": "batch", "dataSource": "tasks", "operations": [["cmd": "deleteItems", "items": ["a"]]]],
            ["cmd": "applySectionSnapshot", "dataSource": "tasks", "section": "S", "snapshot": ["items": [["id": "z"]]]],
            ["cmd": "expand", "dataSource": "tasks", "section": "S", "items": ["a"]],
            ["cmd": "collapse", "dataSource": "tasks", "section": "S", "items": ["a"]],
            ["cmd": "setLayout", "dataSource": "tasks", "layout": [:]],
            ["cmd": "setCellProvider", "dataSource": "tasks", "rules": [], "default": "row"],
            ["cmd": "setSupplementaryProvider", "dataSource": "tasks", "elementKind": "header", "rules": []],
            ["cmd": "dropDataSource", "dataSource": "tasks"],
            ["cmd": "register", "registration": "row", "replace": true, "owner": "root", "contentConfiguration": ["type": "cell", "text": "mine"]],
            ["cmd": "unregister", "registration": "row", "owner": 0],
            ["cmd": "setState", "view": "roots", "item": "a", "state": ["selected": true]],
            ["cmd": "endDisplaying", "view": "roots", "cells": ["1"]],
            ["cmd": "dequeue", "view": "roots", "indexPaths": [[0, 0]]],
            ["cmd": "backup"],
        ]
        for mutation in mutations {
            let reply = try other.request(mutation)
            #expect(reply.errorCode == "permission-denied", "\(mutation): \(reply)")
        }
        // Registering makes the user's own registration of that name (root's stays root's).
        let own = try other.request(["cmd": "register", "registration": "row", "contentConfiguration": ["type": "cell", "text": "{{title}}"]]).result()
        #expect(own["created"] == true && own["owner"] == .int(Int(otherUID)))

        #expect(try root.request(["cmd": "snapshot", "dataSource": "tasks"]).result() == before)
        #expect(try root.request(["cmd": "registrations"]).result()["registrations"]?.arrayValue.count == 2)
        let stats = try root.request(["cmd": "stats"]).result()
        #expect(stats["access"]?["permissionDenied"] == .int(mutations.count + 1))
        #expect(stats["errors"]?["permission-denied"] == .int(mutations.count + 1))
        // Root may still do anything.
        _ = try root.request(["cmd": "appendItems", "dataSource": "tasks", "items": ["c"]]).result()
        try daemon.stop()
        let log = daemon.log
        #expect(log.contains("permission denied") && log.contains("user=nobody") && log.contains("command=appendItems"), "\(log.suffix(2_000))")
    }

    @Test func anotherUserOwnsWhatItCreatesAcrossRestarts() throws {
        let state = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: state) }
        var daemon = try sharedDaemon(arguments: ["--state-directory", state])
        let other = try connect(daemon)
        _ = try other.request(["cmd": "apply", "dataSource": "mine", "snapshot": ["sections": [["id": "S", "items": ["a"]]]]]).result()
        _ = try other.request(["cmd": "register", "registration": "nobodys", "contentConfiguration": ["type": "cell"]]).result()
        _ = try daemon.request(["cmd": "apply", "dataSource": "roots", "snapshot": ["sections": []]]).result()
        try daemon.stop()

        daemon = try sharedDaemon(arguments: ["--state-directory", state])
        let again = try connect(daemon)
        let listed = try again.request(["cmd": "listDataSources"]).result()["dataSources"]?.arrayValue ?? []
        #expect(listed.first { $0["name"] == "mine" }?["owner"] == .int(Int(otherUID)))
        #expect(listed.first { $0["name"] == "mine" }?["access"] == "admin")
        _ = try again.request(["cmd": "appendItems", "dataSource": "mine", "items": ["b"]]).result()
        _ = try again.request(["cmd": "setLayout", "dataSource": "mine", "layout": [:]]).result()
        #expect(try again.request(["cmd": "appendItems", "dataSource": "roots", "items": ["x"]]).errorCode == "permission-denied")
        _ = try again.request(["cmd": "unregister", "registration": "nobodys"]).result()
        _ = try again.request(["cmd": "dropDataSource", "dataSource": "mine"]).result()
    }

    @Test func anAccessRuleGrantsWriteToASharedDataSource() throws {
        let daemon = try sharedDaemon(configuration: [
            "access": [
                ["dataSources": "shared-*", "users": ["nobody"], "access": "write"],
                ["dataSources": "private-*", "users": ["*"], "access": "none"],
            ]
        ])
        for name in ["shared-board", "private-notes", "other"] {
            _ = try daemon.request(["cmd": "apply", "dataSource": .string(name), "snapshot": ["sections": [["id": "S", "items": ["a"]]]]]).result()
        }
        let other = try connect(daemon)
        _ = try other.request(["cmd": "appendItems", "dataSource": "shared-board", "items": ["b"]]).result()
        #expect(try other.request(["cmd": "setLayout", "dataSource": "shared-board", "layout": [:]]).errorCode == "permission-denied")
        #expect(try other.request(["cmd": "appendItems", "dataSource": "other", "items": ["b"]]).errorCode == "permission-denied")
        // A data source nobody may not even read is, to nobody, one that does not exist: every command
        // gets exactly what it gets for a name that is not there (no owner, no hint).
        for request: JSONValue in [
            ["cmd": "snapshot", "dataSource": "private-notes"], ["cmd": "appendItems", "dataSource": "private-notes", "items": ["x"]],
            ["cmd": "apply", "dataSource": "private-notes", "snapshot": ["sections": []]], ["cmd": "dropDataSource", "dataSource": "private-notes"],
            ["cmd": "createDataSource", "dataSource": "private-notes"], ["cmd": "attach", "dataSource": "private-notes"],
            ["cmd": "access", "dataSource": "private-notes"],
        ] {
            let hidden = try other.request(request)
            var absentRequest = request
            if case .object(var members) = request {
                members["dataSource"] = "private-nothere"
                absentRequest = .object(members)
            }
            let absent = try other.request(absentRequest)
            #expect(hidden["ok"] == false || request["cmd"] == "access", "\(request)")
            let hiddenText = String(decoding: hidden.jsonBytes, as: UTF8.self).replacingOccurrences(of: "private-notes", with: "NAME")
            #expect(hiddenText == String(decoding: absent.jsonBytes, as: UTF8.self).replacingOccurrences(of: "private-nothere", with: "NAME"))
        }
        let names = try other.request(["cmd": "listDataSources"]).result()["dataSources"]?.arrayValue.compactMap { $0["name"]?.stringValue }
        #expect(names == ["other", "shared-board"])
        // Rules reserve the names they cover: nobody gets less than write on private-*, and a user no
        // rule for shared-* names cannot take such a name first.
        #expect(try other.request(["cmd": "createDataSource", "dataSource": "private-mine"]).errorCode == "permission-denied")
        _ = try other.request(["cmd": "createDataSource", "dataSource": "shared-new"]).result()
        let stranger = try connect(daemon, uid: 65533, gid: 65533)
        #expect(try stranger.request(["cmd": "createDataSource", "dataSource": "shared-other"]).errorCode == "permission-denied")
        _ = try stranger.request(["cmd": "createDataSource", "dataSource": "strangers"]).result()
        // Asking about another user is for administrators.
        #expect(try other.request(["cmd": "access", "dataSource": "other", "user": "root"]).errorCode == "permission-denied")
        let access = try daemon.request(["cmd": "access", "dataSource": "shared-board", "user": "nobody"]).result()
        #expect(access["access"] == "write" && access["reason"] == "rule 0" && access["uid"] == .int(Int(otherUID)))
        #expect(try other.request(["cmd": "access", "dataSource": "other"]).result()["access"] == "read")
        #expect(try daemon.request(["cmd": "snapshot", "dataSource": "shared-board"]).result()["sections"]?.arrayValue.first?["items"] == ["a", "b"])
    }

    @Test func accessRulesAreReloadedAndABadOneKeepsTheRunningOnes() throws {
        let daemon = try sharedDaemon(configuration: ["access": [["dataSources": "shared", "users": ["nobody"], "access": "write"]]])
        _ = try daemon.request(["cmd": "apply", "dataSource": "shared", "snapshot": ["sections": [["id": "S", "items": []]]]]).result()
        let other = try connect(daemon)
        _ = try other.request(["cmd": "appendItems", "dataSource": "shared", "items": ["a"]]).result()
        let path = daemon.directory + "/listd.json"
        try Data(JSONValue.object(["access": [["dataSources": "shared", "users": ["*"], "access": "read"]]]).jsonBytes)
            .write(to: URL(fileURLWithPath: path))
        try reload(daemon)
        #expect(try other.request(["cmd": "appendItems", "dataSource": "shared", "items": ["b"]]).errorCode == "permission-denied")
        // A rule naming a user that does not exist: the reload is refused, the running rules stay.
        try Data(JSONValue.object(["access": [["dataSources": "shared", "users": ["no-such-user-here"], "access": "write"]]]).jsonBytes)
            .write(to: URL(fileURLWithPath: path))
        try reload(daemon)
        #expect(try other.request(["cmd": "appendItems", "dataSource": "shared", "items": ["b"]]).errorCode == "permission-denied")
        try daemon.stop()
        #expect(daemon.log.contains("there is no user \"no-such-user-here\""), "\(daemon.log.suffix(1_000))")
        // At start, the same mistake stops listd with EX_CONFIG, naming the file and the rule.
        let bad = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: bad) }
        try Data(JSONValue.object(["access": [["dataSources": "x", "groups": ["no-such-group-here"], "access": "write"]]]).jsonBytes)
            .write(to: URL(fileURLWithPath: bad + "/bad.json"))
        let refused = try runExecutable("listd", ["--ephemeral", "--socket", bad + "/s", "--config", bad + "/bad.json"])
        #expect(refused.status == 78 && refused.err.contains("\"access\"[0].groups: there is no group \"no-such-group-here\""), "\(refused)")
    }

    @Test func groupRulesUseTheKernelsSupplementaryGroups() throws {
        // Group 100 ("users") is not nobody's in the user database: only the connecting process has it.
        let daemon = try sharedDaemon(configuration: ["access": [["dataSources": "team", "groups": [100], "access": "write"]]])
        _ = try daemon.request(["cmd": "apply", "dataSource": "team", "snapshot": ["sections": [["id": "S", "items": []]]]]).result()
        let member = try connect(daemon, groups: [100, 4242])
        _ = try member.request(["cmd": "appendItems", "dataSource": "team", "items": ["a"]]).result()
        let outsider = try connect(daemon, groups: [4242])
        #expect(try outsider.request(["cmd": "appendItems", "dataSource": "team", "items": ["b"]]).errorCode == "permission-denied")
    }

    @Test func aReloadThatTakesAccessAwayDetachesViews() throws {
        let daemon = try sharedDaemon(configuration: [:])
        _ = try daemon.request(["cmd": "apply", "dataSource": "notes", "snapshot": ["sections": [["id": "S", "items": ["a"]]]]]).result()
        let view = try connect(daemon)
        _ = try view.request(["cmd": "attach", "dataSource": "notes", "view": "v"]).result()
        try Data(JSONValue.object(["access": [["dataSources": "notes", "users": ["*"], "access": "none"]]]).jsonBytes)
            .write(to: URL(fileURLWithPath: daemon.directory + "/listd.json"))
        try reload(daemon)
        #expect(try view.readJSON() == ["event": "dropped", "dataSource": "notes", "view": "v", "reason": "access"])
        _ = try daemon.request(["cmd": "appendItems", "dataSource": "notes", "items": ["secret"]]).result()
        try view.send(line: #"{"id":"p","cmd":"ping"}"#)
        #expect(try view.readJSON() == ["id": "p", "ok": true, "result": [:]], "no changes event reaches the detached view")
    }

    @Test func onlyTrustedUsersBecomePluginsAndTypesCannotBeHijacked() throws {
        var daemon = try sharedDaemon()
        var other = try connect(daemon)
        let refused = try other.request(["cmd": "hello", "role": "plugin", "name": "evil", "provides": ["emoji"]])
        #expect(refused.errorCode == "permission-denied")
        try daemon.stop()

        daemon = try sharedDaemon(configuration: ["trustedPluginUsers": ["nobody"]])
        let real = try daemon.connect()
        _ = try real.request(["cmd": "hello", "role": "plugin", "name": "real", "provides": ["badge"]]).result()
        other = try connect(daemon)
        #expect(try other.request(["cmd": "hello", "role": "plugin", "name": "evil", "provides": ["badge"]]).errorCode == "plugin-type-taken")
        _ = try other.request(["cmd": "hello", "role": "plugin", "name": "fine", "provides": ["stars"]]).result()
    }

    @Test func aSupervisedPluginsTypesStayReservedWhileItRestarts() throws {
        let plugin = binaryDirectory.appendingPathComponent("emoji-plugin").path
        let daemon = try sharedDaemon(arguments: ["--plugin", plugin])
        let root = try daemon.connect()
        func supervised() throws -> JSONValue? {
            try root.request(["cmd": "stats"]).result()["supervisedPlugins"]?.arrayValue.first
        }
        func providers() throws -> [JSONValue] { try root.request(["cmd": "stats"]).result()["plugins"]?.arrayValue ?? [] }
        var deadline = ContinuousClock.now + .seconds(20)
        while try providers().isEmpty {
            guard ContinuousClock.now < deadline else { throw ClientError("the emoji plugin never connected") }
            Thread.sleep(forTimeInterval: 0.02)
        }
        let pid = try #require(try supervised()?["pid"]?.intValue)
        kill(Int32(pid), SIGKILL)
        // Root is trusted, yet while the supervisor restarts the plugin its type is not up for grabs.
        var attempts = 0
        deadline = ContinuousClock.now + .seconds(20)
        while try supervised()?["pid"]?.intValue == pid || (try providers().isEmpty) {
            guard ContinuousClock.now < deadline else { throw ClientError("the emoji plugin was not restarted") }
            let hijacker = try daemon.connect()
            let reply = try hijacker.request(["cmd": "hello", "role": "plugin", "name": "hijack", "provides": ["emoji"]])
            #expect(reply.errorCode == "plugin-type-taken", "\(reply)")
            attempts += 1
        }
        #expect(attempts > 0)
        #expect(try providers().first?["name"] != "hijack")
    }

    /// Right after listd starts, before its supervised plugin connected, a trusted plugin user cannot
    /// take that plugin's type: the supervised plugin gets it on its first start.
    @Test func aSupervisedPluginsTypesAreReservedFromListdsStart() throws {
        // The emoji plugin, held back until the test lets it go (so that the other user comes first).
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let plugin = directory + "/emoji"
        let emoji = binaryDirectory.appendingPathComponent("emoji-plugin").path
        try "#!/bin/sh\nwhile [ ! -e '\(directory)/go' ]; do sleep 0.02; done\nexec '\(emoji)'\n".write(toFile: plugin, atomically: true, encoding: .utf8)
        chmod(plugin, 0o755)
        let daemon = try sharedDaemon(arguments: ["--plugin", plugin], configuration: ["trustedPluginUsers": ["nobody"]])
        let mallory = try connect(daemon)
        let early = try mallory.request(["cmd": "hello", "role": "plugin", "name": "early", "provides": ["emoji"]])
        #expect(early.errorCode == "plugin-type-taken", "\(early)")
        #expect(early["error"]?["message"]?.stringValue?.contains("listd is starting its supervised plugins (emoji)") == true, "\(early)")
        try #require(FileManager.default.createFile(atPath: directory + "/go", contents: nil))
        let root = try daemon.connect()
        func providers() throws -> [JSONValue] { try root.request(["cmd": "stats"]).result()["plugins"]?.arrayValue ?? [] }
        #expect(try eventually { try providers().first?["provides"] == ["emoji"] })
        let supervised = try root.request(["cmd": "stats"]).result()["supervisedPlugins"]?.arrayValue.first
        #expect(supervised?["starts"] == 1, "\(String(describing: supervised))")
        // Once it is up, other types are free for other plugins.
        let later = try connect(daemon)
        _ = try later.request(["cmd": "hello", "role": "plugin", "name": "later", "provides": ["stars"]]).result()
    }

    /// alice (nobody here) unregisters a registration her data source's cell provider names; mallory
    /// (uid 65533) registers the name: alice's cells never render mallory's template, before or after a
    /// restart (her provider names her own namespace); only naming mallory's explicitly uses it.
    @Test func aRegistrationNameTakenByAnotherUserIsNotUsedInstead() throws {
        let directory = try makeTemporaryDirectory()
        chmod(directory, 0o755)
        let state = directory + "/state"
        let first = try Daemon(arguments: ["--socket-mode", "0666", "--state-directory", state], directory: directory)
        var daemon = first
        var alice = try connect(daemon)
        _ = try alice.request(["cmd": "register", "registration": "aliceRow", "contentConfiguration": ["type": "cell", "text": "{{title}}"]]).result()
        _ = try alice.request(["cmd": "apply", "dataSource": "a", "snapshot": ["sections": [["id": "S", "items": [["id": "A1", "data": ["title": "secret A1"]]]]]]]).result()
        _ = try alice.request(["cmd": "setCellProvider", "dataSource": "a", "rules": [], "default": "aliceRow"]).result()
        _ = try alice.request(["cmd": "attach", "dataSource": "a", "view": "v"]).result()
        func cell() throws -> JSONValue {
            try alice.request(["cmd": "dequeue", "view": "v", "indexPaths": [[0, 0]]])
        }
        #expect(try cell().result()["cells"]?.arrayValue.first?["content"]?["text"] == "secret A1")
        _ = try alice.request(["cmd": "unregister", "registration": "aliceRow"]).result()
        let mallory = try connect(daemon, uid: 65533, gid: 65533)
        _ = try mallory.request(["cmd": "register", "registration": "aliceRow", "contentConfiguration": ["type": "cell", "text": "HACKED {{title}}"]]).result()
        for round in 0..<2 {
            let refused = try cell()
            #expect(refused.errorCode == "registration-not-found", "round \(round): \(refused)")
            #expect(refused["error"]?["message"]?.stringValue?.contains("does not exist among nobody's registrations") == true, "\(refused)")
            guard round == 0 else { break }
            // The binding is part of the stored state.
            try first.stop()
            daemon = try Daemon(arguments: ["--socket-mode", "0666", "--state-directory", state], directory: directory)
            alice = try connect(daemon)
            _ = try alice.request(["cmd": "attach", "dataSource": "a", "view": "v"]).result()
        }
        // Setting the provider again still names her own namespace; mallory's only when named with its owner.
        #expect(try alice.request(["cmd": "setCellProvider", "dataSource": "a", "rules": [], "default": "aliceRow"]).errorCode == "registration-not-found")
        _ = try alice.request(["cmd": "setCellProvider", "dataSource": "a", "rules": [], "default": ["name": "aliceRow", "owner": 65533]]).result()
        #expect(try cell().result()["cells"]?.arrayValue.first?["content"]?["text"] == "HACKED secret A1")
    }

    /// Another user's many unfinished lines pass `maxPartialLineBytesTotal`: that user's connections are
    /// closed, root's one long line (longer than any of theirs) is not and is answered once finished.
    @Test func theGlobalCapOnUnfinishedLinesClosesTheUserHoldingTheMost() throws {
        let daemon = try sharedDaemon(configuration: ["maxPartialLineBytesTotal": 1_000_000])
        let root = try daemon.connect()
        let text = String(repeating: "r", count: 400_000)
        let line = Array(#"{"cmd":"apply","dataSource":"big","snapshot":{"sections":[{"id":"S","items":[{"id":"a","data":{"text":""#.utf8)
            + Array(text.utf8) + Array(#""}}]}]}}"#.utf8)
        try root.send(bytes: Array(line.dropLast(10)))
        #expect(try eventually { try daemon.request(["cmd": "stats"]).result()["connections"]?["partialLineBytes"]?.intValue ?? 0 >= 400_000 })
        var theirs: [LineConnection] = []
        for _ in 0..<10 {
            let connection = try connect(daemon)
            try connection.send(bytes: Array(repeating: 0x20, count: 150_000))
            theirs.append(connection)
        }
        #expect(try eventually { try daemon.request(["cmd": "stats"]).result()["connections"]?["partialLineBytes"]?.intValue ?? .max <= 1_000_000 })
        var closed = 0
        for connection in theirs {
            // A shed connection has its error waiting; the others have nothing to say.
            if let reply = try? connection.readJSON(timeout: .milliseconds(200)) {
                #expect(reply.errorCode == "line-too-long")
                #expect(reply["error"]?["message"]?.stringValue?.contains("user nobody (uid 65534) holds the most") == true, "\(reply)")
                closed += 1
            }
        }
        #expect(closed >= 1, "the other user's lines were shed")
        try root.send(bytes: Array(line.suffix(10)) + [0x0A])
        let reply = try #require(try root.readJSON(timeout: .seconds(20)))
        #expect(reply["ok"] == true, "root's line survived: \(reply)")
    }

    /// Another user appends big payloads: past `maxBytesPerUser` its changes that add bytes are refused
    /// (root's go on); `access` and `stats` show the bytes; removing makes room again.
    @Test func storedBytesPerUserAreCapped() throws {
        let daemon = try sharedDaemon(configuration: ["maxBytesPerUser": 3_000_000])
        let other = try connect(daemon)
        _ = try other.request(["cmd": "appendSections", "dataSource": "mine", "sections": ["S"]]).result()
        let payload = JSONValue.string(String(repeating: "p", count: 1_000_000))
        var accepted = 0
        var refusal: JSONValue?
        for index in 0..<10 {
            let reply = try other.request(["cmd": "appendItems", "dataSource": "mine", "items": [["id": .string("big-\(index)"), "data": ["t": payload]]]])
            if reply["ok"] == true { accepted += 1 } else { refusal = reply; break }
        }
        #expect(accepted == 3, "\(accepted) accepted")
        #expect(refusal?.errorCode == "quota-exceeded" && refusal?["error"]?["quota"] == "maxBytesPerUser", "\(String(describing: refusal))")
        let usage = try other.request(["cmd": "access", "dataSource": "mine"]).result()
        let bytes = try #require(usage["usage"]?["bytes"]?.intValue)
        #expect(bytes > 3_000_000 && bytes < 3_100_000 && usage["quota"]?["maxBytesPerUser"] == 3_000_000, "\(usage)")
        #expect(try daemon.request(["cmd": "stats"]).result()["access"]?["storedBytesByUser"]?["65534"] == .int(bytes))
        // Root is exempt; the other user may remove, and then add again.
        _ = try daemon.request(["cmd": "apply", "dataSource": "roots", "snapshot": ["sections": [["id": "S", "items": [["id": "r", "data": ["t": payload]]]]]]]).result()
        _ = try other.request(["cmd": "deleteItems", "dataSource": "mine", "items": ["big-0", "big-1"]]).result()
        _ = try other.request(["cmd": "appendItems", "dataSource": "mine", "items": [["id": "again", "data": ["t": payload]]]]).result()
    }

    /// Cell provider rules are not stored payloads, but their size is bounded: a rule matching a huge
    /// value is refused, the provider as it was stays.
    @Test func aCellProviderHasABoundedSize() throws {
        let daemon = try sharedDaemon(arguments: ["--demo"])
        let other = try connect(daemon)
        _ = try other.request(["cmd": "register", "registration": "row", "contentConfiguration": ["type": "cell", "text": "{{title}}"]]).result()
        _ = try other.request(["cmd": "appendSections", "dataSource": "mine", "sections": ["S"]]).result()
        let huge = JSONValue.string(String(repeating: "m", count: 70_000))
        let refused = try other.request([
            "cmd": "setCellProvider", "dataSource": "mine", "rules": [["match": ["field": "kind", "equals": huge], "registration": "row"]],
        ])
        #expect(refused.errorCode == "limit-exceeded" && refused["error"]?["message"]?.stringValue?.contains("the limit is 65536 bytes") == true, "\(refused)")
        _ = try other.request(["cmd": "setCellProvider", "dataSource": "mine", "rules": [], "default": "row"]).result()
    }

    @Test func connectionsPerUserAreLimited() throws {
        let daemon = try sharedDaemon(configuration: ["maxConnectionsPerUser": 4])
        var served: [LineConnection] = []
        var refused = 0
        for _ in 0..<6 {
            let connection = try connect(daemon)
            // A refused connection may already be closed for writing: its one line is still there to read.
            try? connection.send(line: #"{"id":"p","cmd":"ping"}"#)
            let reply = try #require(try connection.readJSON())
            if reply["ok"] == true {
                served.append(connection)
            } else {
                #expect(reply.errorCode == "quota-exceeded" && reply["error"]?["quota"] == "maxConnectionsPerUser", "\(reply)")
                #expect(try connection.readLine(timeout: .seconds(5)) == nil, "a refused connection is closed after its one line")
                refused += 1
            }
        }
        #expect(served.count == 4 && refused == 2)
        // Root's connections are served meanwhile.
        let roots = try (0..<6).map { _ in try daemon.connect() }
        for connection in roots { _ = try connection.request(["cmd": "ping"]).result() }
        for connection in served { _ = try connection.request(["cmd": "ping"]).result() }
        let stats = try roots[0].request(["cmd": "stats"]).result()
        #expect(stats["connections"]?["refused"] == 2 && stats["access"]?["quotaRefused"] == 2)
    }

    @Test func perUserQuotasStopOnlyThatUser() throws {
        let daemon = try sharedDaemon(configuration: ["maxDataSourcesPerUser": 2, "maxItemsPerUser": 3])
        let other = try connect(daemon)
        _ = try other.request(["cmd": "createDataSource", "dataSource": "a"]).result()
        _ = try other.request(["cmd": "apply", "dataSource": "b", "snapshot": ["sections": [["id": "S", "items": ["1", "2", "3"]]]]]).result()
        let third = try other.request(["cmd": "createDataSource", "dataSource": "c"])
        #expect(third.errorCode == "quota-exceeded" && third["error"]?["quota"] == "maxDataSourcesPerUser")
        let more = try other.request(["cmd": "appendItems", "dataSource": "b", "items": ["4"]])
        #expect(more.errorCode == "quota-exceeded" && more["error"]?["quota"] == "maxItemsPerUser")
        // Root is exempt; its work goes on.
        for name in ["r1", "r2", "r3"] {
            _ = try daemon.request(["cmd": "apply", "dataSource": .string(name), "snapshot": ["sections": [["id": "S", "items": ["1", "2", "3", "4"]]]]]).result()
        }
        let usage = try other.request(["cmd": "access", "dataSource": "b"]).result()["usage"]
        #expect(usage?["dataSources"] == 2 && usage?["items"] == 3 && usage?["registrations"] == 0, "\(String(describing: usage))")
        #expect(usage?["account"]?["data"] == 4, "identifiers: S and three one-byte items")
        #expect(usage?["bytes"] == usage?["account"]?["total"] && (usage?["account"]?["changeLog"]?.intValue ?? 0) > 0, "the events retained count too")
        #expect(try daemon.request(["cmd": "stats"]).result()["access"]?["quotaRefused"] == 2)
    }

    @Test func theSocketIsCreatedWithItsFinalModeAndGroup() throws {
        var daemon = try Daemon()
        var status = stat()
        #expect(stat(daemon.socketPath, &status) == 0)
        #expect(status.st_mode & 0o777 == 0o600)
        try daemon.stop()
        let directory = try makeTemporaryDirectory()
        chmod(directory, 0o755)
        daemon = try Daemon(arguments: ["--socket-mode", "0660", "--socket-group", "nogroup"], directory: directory)
        #expect(stat(daemon.socketPath, &status) == 0)
        #expect(status.st_mode & 0o777 == 0o660 && status.st_gid == otherGID)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasPrefix(".l") }
        #expect(leftovers.isEmpty)
        // nobody is in the socket's group (its primary group): it may connect; root always may.
        _ = try connect(daemon).request(["cmd": "ping"]).result()
        #expect(throws: ClientError.self) { try connect(daemon, uid: 65533, gid: 65533) }
        #expect(runExecutableStatus(["--socket-mode", "999", "--ephemeral"]) == 64)
    }

    /// Another user attaches views under the names listd would make up for the next connections: those
    /// connections' views get other names, never an error.
    @Test func madeUpViewNamesCannotBeSquatted() throws {
        let daemon = try sharedDaemon(arguments: ["--demo"])
        let probe = try daemon.connect()
        let probed = try #require(try probe.request(["cmd": "attach", "dataSource": "home"]).result()["view"]?.stringValue)
        let parts = probed.split(separator: "-")
        let next = try #require(parts.count == 3 ? Int(parts[1]) : nil) + 1
        let mallory = try connect(daemon)
        var squatted: Set<String> = []
        for connectionID in next..<(next + 3) {
            for number in 1...5 {
                let name = "view-\(connectionID)-\(number)"
                #expect(try mallory.request(["cmd": "attach", "dataSource": "home", "view": .string(name)])["ok"] == true)
                squatted.insert(name)
            }
        }
        for _ in 0..<2 {
            let root = try daemon.connect()
            let attached = try root.request(["cmd": "attach", "dataSource": "home"])
            let name = try #require(attached.result()["view"]?.stringValue)
            #expect(!squatted.contains(name), "\(name)")
            #expect(try root.request(["cmd": "attach", "dataSource": "emoji"])["ok"] == true, "a second view of the same connection")
        }
    }
}

/// The exit status of listd run with `arguments` (for options it refuses at once).
func runExecutableStatus(_ arguments: [String]) -> Int32 {
    (try? runExecutable("listd", arguments).status) ?? -1
}
