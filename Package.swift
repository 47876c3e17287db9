// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "listd",
    products: [
        // The pure model: snapshots, section snapshots and the staged diff. No I/O.
        .library(name: "DiffableCore", targets: ["DiffableCore"]),
        // The wire format: strict JSON, requests, replies, the protocol's shapes of the model.
        .library(name: "ListWire", targets: ["ListWire"]),
    ],
    targets: [
        .target(name: "DiffableCore"),
        .testTarget(name: "DiffableCoreTests", dependencies: ["DiffableCore"]),
        .target(name: "ListWire", dependencies: ["DiffableCore"]),
        .testTarget(name: "ListWireTests", dependencies: ["ListWire", "DiffableCore"]),
        // `swift run -c release core-benchmarks` (see README, "Performance").
        .executableTarget(
            name: "core-benchmarks",
            dependencies: ["DiffableCore"],
            path: "Benchmarks/CoreBenchmarks"
        ),
    ],
    swiftLanguageModes: [.v6]
)
