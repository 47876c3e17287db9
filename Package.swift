// swift-tools-version:6.0
import PackageDescription

/// The modules on every request's path are built without run-time exclusivity checks in release builds: each
/// access to a class's stored property otherwise costs a call into the runtime (about a tenth of an append's
/// instructions, measured with callgrind). Debug builds, which the tests run, keep the checks.
///
/// `LISTD_FUZZ_COVERAGE=listd` (set by `Fuzz/build-commands`, never otherwise): these modules alone carry
/// libFuzzer's coverage, so that `listd-fuzz-commands` does not scan the counters of every package after
/// each input.
let requestPathSettings: [SwiftSetting] =
    [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))]
    + (Context.environment["LISTD_FUZZ_COVERAGE"] == "listd"
        ? [.unsafeFlags(["-sanitize=fuzzer", "-sanitize-coverage=edge,pc-table,inline-8bit-counters"])] : [])

let package = Package(
    name: "listd",
    products: [
        // The pure model: snapshots, section snapshots and the staged diff. No I/O.
        .library(name: "DiffableCore", targets: ["DiffableCore"]),
        // The wire format: strict JSON, requests, replies, the protocol's shapes of the model.
        .library(name: "ListWire", targets: ["ListWire"]),
        // Cell registrations, content configurations and reuse pools.
        .library(name: "CellCore", targets: ["CellCore"]),
        .library(name: "ListLayout", targets: ["ListLayout"]),
        // The state that lasts: typed changes, their stored form, the Store protocols.
        .library(name: "ListStore", targets: ["ListStore"]),
        // The one writer of the state (the fuzzer sets its quotas).
        .library(name: "ListEngine", targets: ["ListEngine"]),
        // The embedded store (the fuzzer's durable mode writes one).
        .library(name: "ListStoreSQLite", targets: ["ListStoreSQLite"]),
        .library(name: "ListAccess", targets: ["ListAccess"]),
        // The daemon's engine.
        .library(name: "ListServer", targets: ["ListServer"]),
        // Test-only: a server without socket or threads (InProcessServer), for the fuzzer (Fuzz/), the
        // unit tests and the in-process benchmarks.
        .library(name: "ListServerTestKit", targets: ["ListServerTestKit"]),
        // Test-only: stores that fail on demand (SQLite with faults, a shared store in memory), for the
        // durability tests, the server's tests and the fuzzer.
        .library(name: "StoreTestKit", targets: ["StoreTestKit"]),
        .executable(name: "listd", targets: ["listd"]),
        .executable(name: "listctl", targets: ["listctl"]),
        .executable(name: "listview", targets: ["listview"]),
        // Views in a web browser, and listd's stats for Prometheus.
        .executable(name: "listweb", targets: ["listweb"]),
        // Makes a plugin cell provider a few lines (see README, "Plugins").
        .library(name: "ListPluginKit", targets: ["ListPluginKit"]),
        .executable(name: "emoji-plugin", targets: ["emoji-plugin"]),
        .executable(name: "card-plugin", targets: ["card-plugin"]),
        .executable(name: "home-owner", targets: ["home-owner"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket.git", from: "2.8.1"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
    ],
    targets: [
        .target(name: "DiffableCore", swiftSettings: requestPathSettings),
        // A seeded random generator shared by the tests and benchmarks (no product).
        .target(name: "TestSupport"),
        .testTarget(name: "DiffableCoreTests", dependencies: ["DiffableCore", "TestSupport"]),
        // Cells: registrations, content configurations, templates, state, reuse pools. No I/O.
        .target(
            name: "CellCore",
            dependencies: ["DiffableCore"],
            swiftSettings: requestPathSettings
        ),
        .testTarget(name: "CellCoreTests", dependencies: ["CellCore", "DiffableCore"]),
        .target(name: "ListWire", dependencies: ["DiffableCore"], swiftSettings: requestPathSettings, plugins: ["GenerateArgumentDecoding"]),
        // Writes each declaration's `init(arguments:)` at build time (scripts/generate-argument-decoding).
        .plugin(name: "GenerateArgumentDecoding", capability: .buildTool(), path: "Sources/GenerateArgumentDecoding"),
        // Compositional layouts: the description a data source holds, and the layout computed for a terminal.
        .target(name: "ListLayout", dependencies: ["DiffableCore"]),
        .testTarget(name: "ListLayoutTests", dependencies: ["ListLayout", "DiffableCore"]),
        .testTarget(name: "ListWireTests", dependencies: ["ListWire", "DiffableCore", "TestSupport"], plugins: ["GenerateArgumentDecoding"]),
        // The state that lasts and its one commit path: typed changes applied all or nothing. No I/O.
        .target(name: "ListStore", dependencies: ["DiffableCore", "CellCore", "ListLayout", "ListWire"], swiftSettings: requestPathSettings),
        // The one writer of the state: the model, the served data sources and their retained events, every
        // event line views get. Setters are internal to it, so nothing else can write the state. No I/O.
        .target(name: "ListEngine", dependencies: ["ListStore", "DiffableCore", "CellCore", "ListLayout", "ListWire"], swiftSettings: requestPathSettings),
        .testTarget(name: "ListEngineTests", dependencies: ["ListEngine", "ListStore", "DiffableCore", "CellCore", "ListLayout", "ListWire", "TestSupport"]),
        // SQLite from the system (libsqlite3-dev), for the embedded store.
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        // The embedded store: the state directory, its lock, and SQLite behind the Store protocol.
        .target(name: "ListStoreSQLite", dependencies: ["ListStore", "CSQLite", "CellCore", "DiffableCore", "FileSafety"]),
        .testTarget(name: "ListStoreSQLiteTests", dependencies: ["ListStoreSQLite", "ListStore", "ListEngine", "DiffableCore", "CellCore", "ListLayout", "ListWire", "TestSupport"]),
        // libpq from the system (libpq-dev), for the PostgreSQL store.
        .systemLibrary(name: "CPostgres", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        // The PostgreSQL store: listd's state in a PostgreSQL database, behind the Store protocol.
        .target(name: "ListStorePostgres", dependencies: ["ListStore", "ListStoreSQLite", "CPostgres", "CellCore", "DiffableCore"]),
        .systemLibrary(name: "CSystemd", pkgConfig: "libsystemd", providers: [.apt(["libsystemd-dev"])]),
        // Who may do what: peer identities, access rules, the policy. Pure (uids and gids, no lookups).
        .target(name: "ListAccess", swiftSettings: requestPathSettings),
        // Paths no other user can change: trusted directories, files opened without following links.
        .target(name: "FileSafety"),
        .testTarget(name: "FileSafetyTests", dependencies: ["FileSafety"]),
        .testTarget(name: "ListAccessTests", dependencies: ["ListAccess"]),
        // Tests only: connect to a socket as another user (a forked child drops to that uid first).
        .target(name: "CTestCredentials", path: "Tests/CTestCredentials"),
        // Tests and benchmarks only: a real PostgreSQL in a temporary directory (initdb, pg_ctl).
        .target(name: "PostgresTestServer", dependencies: ["CTestCredentials"], path: "Tests/PostgresTestServer"),
        // Durability: the commit pipeline (group commit, parking, undo after a failed write, checkpoints,
        // upkeep, sync, backup), the writer thread, and the follower's state machine. Any `Store`.
        // (CSystemd for its thread-niceness shim.)
        .target(
            name: "ListDurability",
            dependencies: [
                "CSystemd", "DiffableCore", "ListEngine", "ListStore", "ListWire", .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"), .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: requestPathSettings),
        // Stores that fail on demand, for tests and the fuzzer (no product of the server).
        .target(
            name: "StoreTestKit",
            dependencies: ["ListStore", "ListStoreSQLite", "ListEngine", "DiffableCore", "CellCore", .product(name: "NIOConcurrencyHelpers", package: "swift-nio")]),
        // The durability module alone: the writer, the pipeline (grouping, parking, recovery, checkpoints)
        // over the engine, and the follower's state machine. Nothing of the server.
        .testTarget(
            name: "ListDurabilityTests",
            dependencies: [
                "ListDurability", "ListEngine", "ListStore", "ListWire", "DiffableCore", "CellCore", "StoreTestKit", "TestSupport",
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"), .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        // The daemon's engine: socket, connections, data sources, views, systemd glue.
        .target(
            name: "ListServer",
            dependencies: [
                "DiffableCore", "CellCore", "ListWire", "CSystemd", "ListStore", "ListEngine", "ListDurability", "ListAccess", "FileSafety",
                "ListLayout", .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: requestPathSettings,
            plugins: ["GenerateArgumentDecoding"]
        ),
        // A server on an embedded event loop (no socket, no threads): the whole command path in process.
        .target(
            name: "ListServerTestKit",
            dependencies: [
                "ListServer", "DiffableCore", "ListAccess", "ListStore", "ListEngine", "ListDurability", "ListWire", "StoreTestKit", .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"), .product(name: "Logging", package: "swift-log"),
            ]),
        .executableTarget(
            name: "listd",
            dependencies: [
                "ListServer", "ListDurability", "ListStore", "ListStoreSQLite", "ListStorePostgres", "ListAccess", "ListClient", "FileSafety",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // A blocking client of the socket: listctl, tests, benchmarks, the plugin kit.
        .target(name: "ListClient", dependencies: ["ListWire", "DiffableCore", "FileSafety"]),
        .testTarget(name: "ListClientTests", dependencies: ["ListClient", "TestSupport"]),
        // What a terminal view draws (cells, widths, the view's model), and the listview executable.
        .target(name: "ListViewCore", dependencies: ["DiffableCore", "ListLayout", "ListWire"]),
        .testTarget(name: "ListViewCoreTests", dependencies: ["ListViewCore", "ListLayout", "DiffableCore"]),
        .executableTarget(
            name: "listview",
            dependencies: [
                "ListViewCore", "ListLayout", "ListClient", "ListWire", "DiffableCore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),
        // listweb's server: the HTTP and WebSocket front, the relay to listd, the token, the metrics, and the
        // page itself (plain HTML, CSS and JavaScript in Web/, embedded in the binary).
        .target(
            name: "ListWeb",
            dependencies: [
                "ListWire", "DiffableCore", "ListClient", "FileSafety",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            resources: [
                .embedInCode("Web/index.html"), .embedInCode("Web/source.html"), .embedInCode("Web/style.css"), .embedInCode("Web/index.js"),
                .embedInCode("Web/source.js"), .embedInCode("Web/view.js"), .embedInCode("Web/model.js"), .embedInCode("Web/layout.js"),
                .embedInCode("Web/cells.js"), .embedInCode("Web/socket.js"), .embedInCode("Web/access.js"),
            ]),
        .testTarget(name: "ListWebTests", dependencies: ["ListWeb", "ListWire", "DiffableCore"]),
        .executableTarget(
            name: "listweb",
            dependencies: [
                "ListWeb", "ListClient", "FileSafety", "CSystemd",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]),
        .target(name: "ListPluginKit", dependencies: ["ListClient", "ListWire", "DiffableCore"]),
        .executableTarget(name: "emoji-plugin", dependencies: ["ListPluginKit", "DiffableCore"], path: "plugins/emoji"),
        // The card plugin's pure part (what a Home card shows), and the plugin around it.
        .target(name: "CardFormatting", dependencies: ["DiffableCore"], path: "plugins/CardFormatting"),
        .testTarget(name: "CardFormattingTests", dependencies: ["CardFormatting", "DiffableCore"]),
        .executableTarget(name: "card-plugin", dependencies: ["ListPluginKit", "CardFormatting"], path: "plugins/card"),
        // The demo's data owner: the seed Home screen's infinite company row, on display signals.
        .executableTarget(name: "home-owner", dependencies: ["ListPluginKit", "ListClient", "ListWire", "DiffableCore"], path: "plugins/home-owner"),
        .executableTarget(
            name: "listctl",
            dependencies: [
                "ListWire", "DiffableCore", "ListClient", "ListViewCore", "FileSafety",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // Integration tests: the real listd binary on a socket in a temporary directory.
        .testTarget(
            name: "ListServerTests",
            dependencies: ["ListWire", "DiffableCore", "ListClient", "CTestCredentials", "PostgresTestServer", "TestSupport", "ListStorePostgres", "ListStore", "listd", "listctl", "listview", "emoji-plugin", "card-plugin", "home-owner", "listweb"],
            // Golden frames, read from the source tree.
            exclude: ["Frames"]),
        // The connection handler and the line framer in an EmbeddedChannel (no socket, no process); the
        // server over stores that fail on demand (in process, and following a shared store).
        .testTarget(
            name: "ListServerUnitTests",
            dependencies: [
                "ListServer", "ListServerTestKit", "StoreTestKit", "ListWire", "DiffableCore", "ListAccess", "ListStore", "ListEngine", "ListDurability", "ListStoreSQLite", "CSystemd", "TestSupport",
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"), .product(name: "Logging", package: "swift-log"),
            ]),
        // `swift run -c release core-benchmarks` (see README, "Performance").
        .executableTarget(
            name: "core-benchmarks",
            dependencies: ["DiffableCore", "CellCore", "ListWire", "ListClient", "ListLayout", "ListViewCore", "ListEngine", "ListStore", "TestSupport"],
            path: "Benchmarks/CoreBenchmarks"
        ),
        // `swift build -c release && swift run -c release server-benchmarks` (see README, "Performance").
        .executableTarget(
            name: "server-benchmarks",
            dependencies: [
                "DiffableCore", "ListWire", "ListClient", "ListServer", "ListServerTestKit", "ListStoreSQLite", "PostgresTestServer",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"), "AllocationCounter", "CEpoll",
            ],
            path: "Benchmarks/ServerBenchmarks"
        ),
        // Counts the benchmark process's heap allocations (allocations per request).
        .target(name: "AllocationCounter", path: "Benchmarks/AllocationCounter"),
        // epoll for the benchmark client (fan-out to 10,000 views).
        .target(name: "CEpoll", path: "Benchmarks/CEpoll"),
    ],
    swiftLanguageModes: [.v6]
)
