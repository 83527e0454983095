// swift-tools-version:6.1
// Nearcard's benchmarks: each figure is a ratio against a floor measured in the same run.
// Run with `make bench` (or `swift run -c release nearcard-bench` here).
import PackageDescription

let package = Package(
    name: "NearcardBenchmarks",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(name: "Nearcard", path: ".."),
    ],
    targets: [
        // The floor: the same primitives called straight through libsodium and libcrypto from C.
        .target(name: "CBaseline", linkerSettings: [.linkedLibrary("sodium"), .linkedLibrary("crypto"), .linkedLibrary("ssl")]),
        .executableTarget(name: "nearcard-bench", dependencies: [
            .product(name: "NearcardCrypto", package: "Nearcard"),
            .product(name: "NearcardSemaphore", package: "Nearcard"),
            .product(name: "NearcardModel", package: "Nearcard"),
            .product(name: "NearcardProtocol", package: "Nearcard"),
            .product(name: "NearcardStore", package: "Nearcard"),
            .product(name: "NearcardDiscovery", package: "Nearcard"),
            .product(name: "NearcardNode", package: "Nearcard"),
            .product(name: "NearcardSimulation", package: "Nearcard"),
            "CBaseline",
        ]),
    ],
    swiftLanguageModes: [.v6]
)
