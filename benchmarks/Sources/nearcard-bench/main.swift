import Foundation

#if canImport(Glibc)
    import Glibc
#endif

// nearcard-bench [GROUP…]: runs the benchmarks and prints a Markdown table per group.
// The node groups run the release `nearcard` of the package one level up (make bench builds it).
let groups: [(name: String, title: String)] = [
    ("crypto", "Crypto wrappers against their C libraries (median of 21 alternating batches, same run)"),
    ("semaphore", "Semaphore v4 proof verification (depth 10), beside arkworks and py_ecc on the same proof, same run"),
    ("exchange", "One exchange on loopback, beside its crypto floor and a mutual-TLS 1.3 handshake, same run"),
    ("throughput", "One bot serving K concurrent clients for 30 s, beside the crypto floor"),
    ("cpu", "A bot's own CPU per exchange, at saturation and at light load, beside the crypto of its half (same run)"),
    ("store", "A bot on PostgreSQL beside the same bot on SQLite, and three bots on one PostgreSQL (same clients, same run)"),
    ("memory", "Resident size of a node, idle and holding 1,000 open sessions"),
    ("discovery", "Node start → seen by another node, beside avahi-browse on the same event"),
    (
        "crowd",
        "A crowd on one LAN (nearcard simulate --topology star, each node on its own address): discovery, exchanges, latency, then what the crowd costs idle (NEARCARD_BENCH_CROWD sizes, NEARCARD_BENCH_IDLE seconds); then 60 all pairs, a conference of 200 and 4 bots on PostgreSQL, and 100 in namespaces (NEARCARD_BENCH_SHAPES=0: not)"
    ),
    ("crowd-discovery", "N nodes on one avahi-daemon: until every node has seen every other, beside avahi-browse on the same daemon"),
    ("presence", "Resolving 200 announcements against 1,000 contacts' presence keys (PROTOCOL.md §3), beside the same loop in C"),
    ("parts", "Where one side's time goes in an exchange: each step alone, median of 201"),
    ("flood", "Honest exchanges while a half-open flood from N addresses tries to fill the node, beside the same node idle"),
    ("scale", "nearcard simulate --peers N --timeout 60: the largest N with every pair exchanged"),
    (
        "command",
        "Fast from Enter: whole commands exec → exit, beside python3, openssl s_client and a script's loop (same run, interleaved); then peers and exchange NAME on a lab LAN of 1, 10 and 50 nodes (NEARCARD_BENCH_SIZES), beside avahi-browse and exchange HOST:PORT"
    ),
]
let args = CommandLine.arguments.dropFirst().filter { !$0.hasPrefix("--") }
// `nearcard-bench profile SECONDS`: the in-memory exchange in a loop and nothing else, for `perf record`.
if args.first == "profile" {
    try profileInMemoryExchange(seconds: Double(args.dropFirst().first ?? "") ?? 10)
    exit(0)
}
let wanted = args.isEmpty ? groups.map(\.name) : Array(args)
/// Printed at once (a pipe would otherwise hold the tables of a long run until the end).
func emit(_ text: String) { FileHandle.standardOutput.write(Data((text + "\n").utf8)) }

for name in wanted {
    guard let group = groups.first(where: { $0.name == name }) else {
        emit("unknown benchmark group \(name); known: \(groups.map(\.name).joined(separator: ", "))")
        exit(64)
    }
    emit("## \(group.title)\n")
    do {
        switch name {
        case "crypto": emit(markdownTable(try cryptoBenchmarks()))
        case "semaphore":
            // Run from benchmarks/ (make bench): the package root is one level up.
            let root = URL(fileURLWithPath: FileManager.default.currentDirectoryPath).deletingLastPathComponent()
            emit(try semaphoreBenchmarks(root: root))
        case "exchange": emit(try await exchangeLatencyBenchmark(rounds: Int(ProcessInfo.processInfo.environment["NEARCARD_BENCH_ROUNDS"] ?? "") ?? 41))
        case "throughput": emit(try await botThroughputBenchmark())
        case "cpu": emit(try await botCPUBenchmark())
        case "store": emit(try await storeBenchmark())
        case "memory": emit(try await memoryBenchmark())
        case "discovery": emit(try await discoveryBenchmark())
        case "crowd":
            let sizes = ProcessInfo.processInfo.environment["NEARCARD_BENCH_CROWD"]?.split(separator: ",").compactMap { Int($0) }
            let idle = Double(ProcessInfo.processInfo.environment["NEARCARD_BENCH_IDLE"] ?? "") ?? 60
            let shapes = ProcessInfo.processInfo.environment["NEARCARD_BENCH_SHAPES"] != "0"
            emit(try crowdBenchmark(sizes: sizes ?? [10, 50, 100, 200, 500], idle: idle, shapes: shapes))
        case "crowd-discovery":
            let sizes = ProcessInfo.processInfo.environment["NEARCARD_BENCH_CROWD"]?.split(separator: ",").compactMap { Int($0) }
            let rounds = Int(ProcessInfo.processInfo.environment["NEARCARD_BENCH_CROWD_ROUNDS"] ?? "") ?? 3
            emit(try await crowdDiscoveryBenchmark(sizes: sizes ?? [10, 50, 100, 200], rounds: rounds))
        case "presence": emit(presenceBenchmark())
        case "flood":
            let sizes = ProcessInfo.processInfo.environment["NEARCARD_BENCH_FLOODS"]?.split(separator: ",").compactMap { Int($0) }
            emit(try await floodBenchmark(floods: sizes ?? [0, 8, 32, 64, 128]))
        case "scale":
            let sizes = ProcessInfo.processInfo.environment["NEARCARD_BENCH_SIZES"]?.split(separator: ",").compactMap { Int($0) }
            emit(try sizes.map { try simulationScaleBenchmark(sizes: $0) } ?? simulationScaleBenchmark())
        case "command":
            let rounds = Int(ProcessInfo.processInfo.environment["NEARCARD_BENCH_ROUNDS"] ?? "") ?? 31
            emit(try await commandBenchmark(rounds: rounds, loop: Int(ProcessInfo.processInfo.environment["NEARCARD_BENCH_LOOP"] ?? "") ?? 100))
            let sizes = ProcessInfo.processInfo.environment["NEARCARD_BENCH_SIZES"]?.split(separator: ",").compactMap { Int($0) }
            emit(try await commandDiscoveryBenchmark(sizes: sizes ?? [1, 10, 50], rounds: min(rounds, 11)))
        case "parts": emit(try exchangePartsBenchmark(rounds: Int(ProcessInfo.processInfo.environment["NEARCARD_BENCH_ROUNDS"] ?? "") ?? 201))
        default: break
        }
    } catch {
        emit("nearcard-bench: \(name) failed: \(error)\n")
        exit(1)
    }
}
