// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "listd",
    products: [
        // The pure model: snapshots, section snapshots and the staged diff. No I/O.
        .library(name: "DiffableCore", targets: ["DiffableCore"]),
    ],
    targets: [
        .target(name: "DiffableCore"),
        .testTarget(name: "DiffableCoreTests", dependencies: ["DiffableCore"]),
        // `swift run -c release core-benchmarks` (see README, "Performance").
        .executableTarget(
            name: "core-benchmarks",
            dependencies: ["DiffableCore"],
            path: "Benchmarks/CoreBenchmarks"
        ),
    ],
    swiftLanguageModes: [.v6]
)
