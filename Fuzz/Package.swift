// swift-tools-version:5.4
// libFuzzer works only from a separate package with tools version ≤ 5.x: newer tools link executables
// with `--defsym main=…`, which collides with libFuzzer's own main. Build and run: see README.md.
import PackageDescription

let package = Package(
    name: "listd-fuzz",
    dependencies: [.package(name: "listd", path: "..")],
    targets: [
        // The thorough one: a mode byte picks raw request lines or generated valid-looking commands, another
        // user, a durable store that fails; a server per input with heavy checks (about 160 inputs a second).
        .executableTarget(
            name: "listd-fuzz",
            dependencies: [
                .product(name: "ListServer", package: "listd"),
                .product(name: "ListServerTestKit", package: "listd"),
                .product(name: "ListWire", package: "listd"),
                .product(name: "DiffableCore", package: "listd"),
                .product(name: "ListAccess", package: "listd"),
                .product(name: "ListStore", package: "listd"),
                .product(name: "ListEngine", package: "listd"),
                .product(name: "ListStoreSQLite", package: "listd"),
                .product(name: "StoreTestKit", package: "listd"),
            ],
            path: "Sources/ListdFuzz"
        ),
        // The light one (300–1,500 inputs a second per core under ASan): request lines through the router
        // and the engine of an ephemeral in-process server, mutation lines in plain and unusual spellings,
        // a twin server compared line by line.
        .executableTarget(
            name: "listd-fuzz-commands",
            dependencies: [
                .product(name: "ListServer", package: "listd"),
                .product(name: "ListServerTestKit", package: "listd"),
                .product(name: "ListWire", package: "listd"),
                .product(name: "DiffableCore", package: "listd"),
            ],
            path: "Sources/CommandsFuzz",
            // libFuzzer's main whether or not the build instruments everything (`-Xswiftc -sanitize=fuzzer`,
            // as ./smoke builds it); ./build-commands instruments listd's request-path modules alone, not
            // this harness (its own branches would steer the fuzzer).
            linkerSettings: [.unsafeFlags(["-sanitize=fuzzer"])]
        ),
    ]
)
