// swift-tools-version:5.4
// libFuzzer works only from a separate package with tools version ≤ 5.x: newer tools link executables
// with `--defsym main=…`, which collides with libFuzzer's own main. Build and run: see README.md.
import PackageDescription

let package = Package(
    name: "listd-fuzz",
    dependencies: [.package(name: "listd", path: "..")],
    targets: [
        // One fuzz target: a mode byte picks raw request lines or generated valid-looking commands.
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
        )
    ]
)
