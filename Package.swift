// swift-tools-version:6.2
// Nearcard: a peer-to-peer card-exchange node for the local network.
// The targets follow the layers of docs/ARCHITECTURE.md; a target imports only the ones below it,
// and only the C* system-library targets see C headers (each through exactly one wrapper).
import PackageDescription

let package = Package(
    name: "Nearcard",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "nearcard", targets: ["nearcard"]),
        .library(name: "NearcardCrypto", targets: ["NearcardCrypto"]),
        .library(name: "NearcardModel", targets: ["NearcardModel"]),
        .library(name: "NearcardProtocol", targets: ["NearcardProtocol"]),
        .library(name: "NearcardStore", targets: ["NearcardStore"]),
        .library(name: "NearcardDiscovery", targets: ["NearcardDiscovery"]),
        .library(name: "NearcardNode", targets: ["NearcardNode"]),
        .library(name: "NearcardQR", targets: ["NearcardQR"]),
        .library(name: "NearcardSemaphore", targets: ["NearcardSemaphore"]),
        .library(name: "NearcardSimulation", targets: ["NearcardSimulation"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
    ],
    targets: [
        // The C libraries: the only modules that see C. Most are linked as the program starts; CAvahi,
        // CZBar and CXML are small C loaders that open their library (dlopen) when a command first needs
        // it (CLoad: what the three share), so the commands that never browse, scan or sync do not load
        // twenty shared libraries (docs/ARCHITECTURE.md, docs/PERFORMANCE.md). Their headers come
        // from the -dev packages.
        .systemLibrary(name: "CSodium", pkgConfig: "libsodium", providers: [.apt(["libsodium-dev"])]),
        .systemLibrary(name: "COpenSSL", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .target(name: "CLoad"),
        .target(name: "CAvahi", dependencies: ["CLoad"]),
        .systemLibrary(name: "CQREncode", pkgConfig: "libqrencode", providers: [.apt(["libqrencode-dev"])]),
        .target(name: "CZBar", dependencies: ["CLoad"]),
        // The one SQLite call GRDB does not offer and Swift cannot make (variadic): SQLite is GRDB's.
        .target(name: "CSQLite", linkerSettings: [.linkedLibrary("sqlite3")]),
        // libxml2's headers are in a directory of their own; only CXML's C file sees them.
        .target(name: "CXML", dependencies: ["CLoad"], cSettings: [.unsafeFlags(["-I/usr/include/libxml2"])]),
        .systemLibrary(name: "CPNG", pkgConfig: "libpng16", providers: [.apt(["libpng-dev"])]),
        .systemLibrary(name: "CJPEG", pkgConfig: "libjpeg", providers: [.apt(["libjpeg62-turbo-dev"])]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        // The C library's own headers that Swift's Glibc module leaves out (sys/timex.h).
        .systemLibrary(name: "CLibC"),

        // did:key, multibase, JCS, JSON, ECDSA P-256 (libcrypto), X25519/Ed25519/sealed box/AEAD/Argon2id (libsodium), JWS/JWT.
        // The one shape of a module's error (`ModuleError<Kind>`): every module below the node names its own.
        .target(name: "NearcardErrors", dependencies: ["NearcardText"]),
        // PURE: gettext catalogs (.mo), plural rules, the languages a person asked for. No disk, no globals.
        .target(name: "NearcardText"),
        .target(name: "NearcardCrypto", dependencies: ["NearcardErrors", "CSodium", "COpenSSL"]),
        // Card, sharing policy, ProximityPayload, selective-disclosure proof, Contact, vCard.
        // One wrapper for libjpeg and libpng: QR codes' images, and card photos (made and checked).
        .target(name: "NearcardImage", dependencies: ["NearcardErrors", "CJPEG", "CPNG"]),
        .target(name: "NearcardModel", dependencies: ["NearcardErrors", "NearcardCrypto", "NearcardImage"]),
        // PURE: framing, Noise XX, the exchange state machine, SAS. No sockets, no clock, no disk.
        .target(name: "NearcardProtocol", dependencies: ["NearcardErrors", "NearcardCrypto", "NearcardModel"]),
        // DNS-SD: the Avahi implementation (libavahi-client) and the TXT record.
        .target(name: "NearcardDiscovery", dependencies: ["NearcardErrors", "CAvahi"]),
        // Semaphore v4 group proofs: Groth16 over BN254 and Keccak-256, in Swift (no C, nothing fetched).
        .target(name: "NearcardSemaphore", dependencies: ["NearcardCrypto", "NearcardModel"]),
        // QR envelopes: generate, render (libqrencode, libpng), scan (zbar), route, verify; OID4VP.
        .target(
            name: "NearcardQR",
            dependencies: ["NearcardErrors", "NearcardCrypto", "NearcardModel", "NearcardSemaphore", "NearcardImage", "CQREncode", "CZBar", "CZlib"]),
        // Identity key files and the book: one store API, two backends, SQLite through GRDB (the default)
        // and PostgreSQL through postgres-nio (bot fleets).
        .target(
            name: "NearcardStore",
            dependencies: [
                "NearcardErrors", "NearcardCrypto", "NearcardModel", "NearcardSemaphore", "CSQLite",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        // Scanning as every face does it: QR outcomes kept in the store by its one rule.
        .target(
            name: "NearcardScan", dependencies: ["NearcardCrypto", "NearcardModel", "NearcardProtocol", "NearcardStore", "NearcardNode", "NearcardQR"]),
        // The local web app (`nearcard ui`): pages and an API on loopback, through the node's facade only.
        .target(
            name: "NearcardWeb",
            dependencies: [
                "NearcardCrypto", "NearcardModel", "NearcardDiscovery", "NearcardNode", "NearcardControl", "NearcardQR", "NearcardScan", "NearcardImage",
                "NearcardText",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
            ],
            resources: [
                .embedInCode("Assets/index.html"), .embedInCode("Assets/app.js"), .embedInCode("Assets/app.css"), .embedInCode("Assets/icon.svg"),
            ],
            packageAccess: false),
        // The command-line interface: the only place that prints for humans.
        // It sees the node only through NearcardNode's facade: no NIO, no protocol (the values the facade
        // hands out, PeerIdentity and ProtocolError, are NearcardModel's).
        .executableTarget(
            name: "nearcard",
            dependencies: [
                "NearcardCrypto", "NearcardModel", "NearcardDiscovery", "NearcardNode", "NearcardQR",
                "NearcardSemaphore", "NearcardSimulation", "NearcardWeb", "NearcardScan", "NearcardControl", "NearcardMetrics", "NearcardProcess",
                "NearcardAddressBook", "NearcardImage", "NearcardText",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ], packageAccess: false),

        // Programs' faces above the facade: the JSON-lines interface (events out, commands in) and the bot's
        // written policy. Built without package access: it sees NearcardNode's facade only.
        .target(
            name: "NearcardControl",
            dependencies: [
                "NearcardCrypto", "NearcardModel", "NearcardProtocol", "NearcardDiscovery", "NearcardNode", "NearcardQR", "NearcardScan",
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            packageAccess: false),

        // `--metrics HOST:PORT`: the node's swift-metrics served in Prometheus's text format (Hummingbird), for
        // every face that runs a node (listen, bot, ui).
        .target(
            name: "NearcardMetrics",
            dependencies: [
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ]),

        // Child processes (posix_spawn, pipes, signals): the desktop's notify-send and xdg-open for the CLI, the
        // lab's daemons for simulations and tests.
        .target(name: "NearcardProcess"),

        // Scripted simulations: N real node processes in network namespaces, driven through JSON lines.
        .target(name: "NearcardSimulation", dependencies: ["NearcardCrypto", "NearcardModel", "NearcardStore", "NearcardProcess"]),

        // CardDAV sync of the contacts (RFC 6352 over WebDAV): the account, discovery, the three-way merge
        // into the server's copy. HTTP through AsyncHTTPClient, the XML through Foundation's XMLParser.
        .target(
            name: "NearcardAddressBook",
            dependencies: [
                "NearcardErrors", "NearcardCrypto", "NearcardModel", "NearcardStore", "NearcardProcess", "CXML",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]),

        // Composition: listener/dialer (SwiftNIO), session driver, consent and admission, events.
        .target(
            name: "NearcardNode",
            dependencies: [
                "NearcardCrypto", "NearcardModel", "NearcardProtocol", "NearcardDiscovery", "NearcardStore", "NearcardSemaphore", "NearcardAddressBook",
                "NearcardErrors", "NearcardText",
                "CLibC",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ]),

        // The benchmarks (`make bench`, benchmarks/): each figure a ratio against a floor measured in the same
        // run. The floor: the same primitives called straight through libsodium and libcrypto from C.
        .target(
            name: "CBaseline", path: "benchmarks/Sources/CBaseline",
            linkerSettings: [.linkedLibrary("sodium"), .linkedLibrary("crypto"), .linkedLibrary("ssl")]),
        .executableTarget(
            name: "nearcard-bench",
            dependencies: [
                "NearcardCrypto", "NearcardSemaphore", "NearcardModel", "NearcardProtocol", "NearcardStore", "NearcardDiscovery",
                "NearcardNode", "NearcardControl", "NearcardSimulation", "NearcardProcess", "CBaseline",
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ], path: "benchmarks/Sources/nearcard-bench"),

        // Helpers for the tests that drive the real executable and the real daemons.
        .target(name: "NearcardTestSupport", dependencies: ["NearcardCrypto", "NearcardSimulation", "NearcardProcess"], path: "Tests/Support"),

        .testTarget(name: "NearcardCryptoTests", dependencies: ["NearcardCrypto"]),
        .testTarget(name: "NearcardModelTests", dependencies: ["NearcardModel", "NearcardCrypto", "NearcardImage"]),
        .testTarget(name: "NearcardAddressBookTests", dependencies: ["NearcardAddressBook", "NearcardStore", "NearcardModel"]),
        .testTarget(name: "NearcardProtocolTests", dependencies: ["NearcardProtocol", "NearcardModel", "NearcardCrypto"]),
        .testTarget(name: "NearcardDiscoveryTests", dependencies: ["NearcardDiscovery"]),
        .testTarget(name: "NearcardTextTests", dependencies: ["NearcardText"]),
        .testTarget(name: "NearcardSemaphoreTests", dependencies: ["NearcardSemaphore", "NearcardCrypto"]),
        .testTarget(name: "NearcardQRTests", dependencies: ["NearcardQR", "NearcardImage", "NearcardModel", "NearcardCrypto", "NearcardTestSupport"]),
        .testTarget(
            name: "NearcardNodeTests",
            dependencies: [
                "NearcardNode", "NearcardDiscovery", "NearcardStore", "NearcardProtocol", "NearcardModel", "NearcardCrypto",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ]),
        .testTarget(
            name: "NearcardWebTests",
            dependencies: [
                "NearcardWeb", "NearcardNode", "NearcardStore", "NearcardCrypto",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]),
        .testTarget(
            name: "NearcardControlTests",
            dependencies: ["NearcardControl", "NearcardNode", "NearcardStore", "NearcardProtocol", "NearcardModel", "NearcardCrypto"]),
        .testTarget(
            name: "NearcardStoreTests",
            dependencies: ["NearcardStore", "NearcardModel", "NearcardCrypto", "NearcardSimulation", "NearcardProcess", "NearcardTestSupport"]),
        .testTarget(
            name: "NearcardCLITests",
            dependencies: ["nearcard", "NearcardCrypto", "NearcardStore", "NearcardSimulation", "NearcardProcess", "NearcardTestSupport"]),
        .testTarget(
            name: "NearcardLANTests",
            dependencies: ["nearcard", "NearcardCrypto", "NearcardModel", "NearcardStore", "NearcardSimulation", "NearcardProcess", "NearcardTestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)

// Boundaries the compiler holds, on every Swift target: a module's imports are its own business unless its
// public API names them (`public import`); a file sees only the members of modules it imports itself;
// an existential says so (`any P`); a warning is an error.
for target in package.targets where target.type != .system && target.name != "CBaseline" {
    target.swiftSettings =
        (target.swiftSettings ?? []) + [
            .enableUpcomingFeature("InternalImportsByDefault"),
            .enableUpcomingFeature("MemberImportVisibility"),
            .enableUpcomingFeature("ExistentialAny"),
            .treatAllWarnings(as: .error),
        ]
}
