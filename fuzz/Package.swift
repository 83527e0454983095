// swift-tools-version:6.1
// Nearcard's fuzz targets (libFuzzer). Each target is a product of its own, built with
//   swift build --product fuzz-frame --sanitize=fuzzer -Xswiftc -sanitize=fuzzer,address
// (one combined -sanitize value: see scripts/fuzz.sh) and run by scripts/fuzz.sh (make fuzz). Seeds
// live in fuzz/corpus/<target>/ and are made by `swift run make-seeds` (an ordinary build). Only pure
// layers are fuzzed here: no sockets, no disk.
import PackageDescription

let targets = ["fuzz-frame", "fuzz-noise", "fuzz-session", "fuzz-payload", "fuzz-qr", "fuzz-jwt", "fuzz-route", "fuzz-txt"]

let package = Package(
    name: "NearcardFuzz",
    platforms: [.macOS(.v14)],
    products: targets.map { .executable(name: $0, targets: [$0]) } + [.executable(name: "make-seeds", targets: ["make-seeds"])],
    dependencies: [.package(name: "Nearcard", path: "..")],
    targets: [
        .target(name: "FuzzSupport", dependencies: [
            .product(name: "NearcardCrypto", package: "Nearcard"),
            .product(name: "NearcardModel", package: "Nearcard"),
            .product(name: "NearcardProtocol", package: "Nearcard"),
            .product(name: "NearcardQR", package: "Nearcard"),
            .product(name: "NearcardDiscovery", package: "Nearcard"),
        ]),
        .executableTarget(name: "make-seeds", dependencies: ["FuzzSupport"]),
    ] + targets.map {
        // libFuzzer supplies main(); the target only defines LLVMFuzzerTestOneInput.
        .executableTarget(name: $0, dependencies: ["FuzzSupport"], swiftSettings: [.unsafeFlags(["-parse-as-library"])])
    },
    swiftLanguageModes: [.v6]
)
