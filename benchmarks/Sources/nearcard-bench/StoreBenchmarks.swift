import CBaseline
import Foundation
import NIOConcurrencyHelpers
import NearcardModel
import NearcardNode
import NearcardProcess
import NearcardSimulation
import NearcardStore

#if canImport(Glibc)
    import Glibc
    import NearcardProtocol
#endif

/// Issue 19: one bot on PostgreSQL against the same bot on SQLite (same clients, same run), then three
/// bots on one PostgreSQL, with the database's own share of the CPU.
func storeBenchmark(clients: Int = 16, seconds: Double = 15) async throws -> String {
    precondition(cb_init() == 0)
    raiseFileLimit()
    let scratch = try Scratch("store")
    let exe = try nearcardExecutable()
    let server = try BenchPostgres(root: scratch.root + "/pg")
    defer { server.stop() }
    let policy = scratch.root + "/policy.json"
    try #"{"version": 1, "accept": "everyone", "message": "Thanks, {name}!", "knownContact": "update", "maxConcurrentSessions": 1024}"#
        .write(toFile: policy, atomically: true, encoding: .utf8)
    let limits = ["--max-sessions", "1024", "--max-sessions-per-address", "1024", "--connections-per-minute", "1000000"]
    let clientContexts = try (0..<clients).map { try scratch.service("Client \($0)") }

    struct Row {
        let name: String
        let result: BotLoad.Result
        let botCPU: Double
        let dbCPU: Double
    }
    var rows: [Row] = []
    func run(_ name: String, stores: [String?], homes: [NearcardHome]) async throws {
        var bots: [NodeProcess] = []
        for (i, store) in stores.enumerated() {
            let args =
                [exe, "bot", "--policy", policy, "--home", homes[i].path, "--port", "0", "--no-discovery", "--log-level", "critical"]
                + limits + (store.map { ["--store", $0, "--node-name", "bot\(i + 1)"] } ?? [])
            bots.append(try NodeProcess(args, log: scratch.root + "/\(name)-\(i).log", keep: false))
        }
        defer { for b in bots { b.stop() } }
        let targets = try bots.map { bot -> DialTarget in
            let started = try waitForStarted(bot)
            return loopbackTarget(port: started.port, did: started.did)
        }
        let cpu = { (bots.map { cpuSeconds(pid: $0.child.pid) }.reduce(0, +), server.cpuSeconds()) }
        let result = try await BotLoad.measure(
            clients: clientContexts, targets: targets, seconds: seconds,
            completed: { bots.map { $0.count("exchange.completed") }.reduce(0, +) }, cpu: cpu)
        rows.append(Row(name: name, result: result, botCPU: result.cpu.bots, dbCPU: result.cpu.database))
    }

    // One bot identity, its card in each store.
    let botHome = try scratch.home("Booth Bot")
    let card = try NearcardDatabase(home: botHome).myCard()!.card
    for database in ["durable", "async"] {
        let url = try server.createDatabase(database)
        let db = try NearcardDatabase(location: try StoreLocation.parse(url))
        try db.saveMyCard(card)
        try db.saveSharingPolicy(SharingPolicy(fields: [.name, .email, .company, .title]))
        if database == "async" { try server.sql("ALTER DATABASE \(database) SET synchronous_commit = off") }
        db.close()
    }
    try await run("SQLite (the home's file, WAL)", stores: [nil], homes: [botHome])
    try await run("PostgreSQL, synchronous_commit on (default)", stores: [server.url("durable")], homes: [botHome])
    try await run("PostgreSQL, synchronous_commit off", stores: [server.url("async")], homes: [botHome])
    try await run(
        "3 bots (one key), one PostgreSQL (sync on)", stores: Array(repeating: server.url("durable"), count: 3),
        homes: [botHome, botHome, botHome])

    let cores = Double(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
    let base = rows[0].result.rate
    var out =
        "| store | exchanges/s (median of 1 s windows) | ÷ SQLite | client latency p50 / p99 | failures | bot CPU (cores) | PostgreSQL CPU (cores) |\n|---|---|---|---|---|---|---|\n"
    for r in rows {
        out +=
            "| \(r.name) | \(Int(r.result.rate)) | \(format2(r.result.rate / base))× | \(format(r.result.p50)) / \(format(r.result.p99)) | \(r.result.failures) | \(format2(r.botCPU)) | \(format2(r.dbCPU)) |\n"
    }
    out += "\n\(clients) in-process clients (this process, same cores) exchange for \(Int(seconds)) s after 2 s of warm-up, on \(Int(cores)) cores; "
    out += "CPU is user+system time from /proc over the measured window, in cores (1.00 = one core busy). "
    out +=
        "PostgreSQL runs on the same machine over its Unix socket (fsync on; `synchronous_commit off` is the durability SQLite's WAL gives: a power loss may drop the last commits, never corrupt).\n"
    return out
}

/// Load on one or more bots from in-process clients, as the throughput benchmark does.
enum BotLoad {
    struct Result {
        let rate: Double
        let total: Int
        let p50: Double
        let p99: Double
        let failures: String
        /// CPU over the measured window, in cores (CPU seconds ÷ wall seconds).
        let cpu: (bots: Double, database: Double)
        /// The measured window's length, seconds.
        let wall: Double

        /// The bots' CPU seconds per exchange they completed in the window.
        var botCPUPerExchange: Double { total > 0 ? cpu.bots * wall / Double(total) : .nan }
    }

    static func measure(
        clients: [NodeContext], targets: [DialTarget], seconds: Double, completed: @escaping () -> Int,
        cpu: () -> (Double, Double)
    ) async throws -> Result {
        let stats = NIOLockedValueBox<(latencies: [Double], failures: [String: Int])>(([], [:]))
        let stopAt = NIOLockedValueBox<UInt64>(now() + UInt64((seconds + 2) * 1e9))
        let tasks = clients.enumerated().map { i, client in
            Task {
                let target = targets[i % targets.count]
                while now() < stopAt.withLockedValue({ $0 }) {
                    let t0 = now()
                    do {
                        switch try await Dialer.exchange(with: target, context: client, consent: client.consent) {
                        case .completed: stats.withLockedValue { $0.latencies.append(Double(now() - t0)) }
                        case .unconfirmed: stats.withLockedValue { $0.failures["unconfirmed", default: 0] += 1 }
                        case .failed(let e, _, _, _): stats.withLockedValue { $0.failures[e.code.rawValue, default: 0] += 1 }
                        }
                    } catch {
                        stats.withLockedValue { $0.failures["unreachable", default: 0] += 1 }
                    }
                }
            }
        }
        try await Task.sleep(nanoseconds: 2_000_000_000)
        let before = completed()
        let (cpuBots0, cpuDB0) = cpu()
        let t0 = now()
        var windows: [Double] = []
        var last = before
        for _ in 0..<Int(seconds) {
            try await Task.sleep(nanoseconds: 1_000_000_000)
            let c = completed()
            windows.append(Double(c - last))
            last = c
        }
        let (cpuBots1, cpuDB1) = cpu()
        let wall = Double(now() - t0) / 1e9
        stopAt.withLockedValue { $0 = 0 }
        for t in tasks { await t.value }
        let s = stats.withLockedValue { $0 }
        let lat = s.latencies.sorted()
        let p99 = lat.isEmpty ? 0 : lat[min(lat.count - 1, Int(Double(lat.count) * 0.99))]
        let failures = s.failures.isEmpty ? "0" : s.failures.map { "\($0.value) \($0.key)" }.sorted().joined(separator: ", ")
        return Result(
            rate: median(windows), total: last - before, p50: median(lat), p99: p99, failures: failures,
            cpu: ((cpuBots1 - cpuBots0) / wall, (cpuDB1 - cpuDB0) / wall), wall: wall)
    }
}

/// User+system CPU seconds of a process so far, from /proc/PID/stat.
func cpuSeconds(pid: pid_t) -> Double {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = text.lastIndex(of: ")") else { return 0 }
    let fields = text[text.index(after: close)...].split(separator: " ")
    // After the command: state(0) … utime(11) stime(12), in clock ticks.
    guard fields.count > 12, let u = Double(fields[11]), let s = Double(fields[12]) else { return 0 }
    return (u + s) / Double(sysconf(Int32(_SC_CLK_TCK)))
}

/// A throw-away PostgreSQL server for the benchmark (Debian's binaries; as the account `nobody` when
/// run as root, since PostgreSQL refuses root), on a Unix socket in its folder.
final class BenchPostgres: @unchecked Sendable {
    let root: String
    let bin: String
    let user: String?

    init(root: String) throws {
        self.root = root
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []).compactMap(Int.init).sorted(by: >)
        guard let v = versions.first else { throw BenchError("PostgreSQL is not installed (apt-get install postgresql)") }
        bin = "/usr/lib/postgresql/\(v)/bin"
        user = geteuid() == 0 ? "nobody" : nil
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        if let user, let pw = getpwnam(user) {
            chown(root, pw.pointee.pw_uid, pw.pointee.pw_gid)
            chmod((root as NSString).deletingLastPathComponent, 0o755)
        }
        try run([bin + "/initdb", "-D", root + "/data", "-U", "bench", "--auth=trust", "-E", "UTF8", "--no-instructions"])
        try run([
            bin + "/pg_ctl", "-D", root + "/data", "-o", "-k \(root) -c listen_addresses='' -c max_connections=100",
            "-l", root + "/server.log", "-w", "start",
        ])
    }

    func url(_ database: String) -> String { "postgres://bench@/\(database)?host=\(root)" }

    func createDatabase(_ name: String) throws -> String {
        try sql("CREATE DATABASE \(name)")
        return url(name)
    }

    @discardableResult
    func sql(_ statement: String) throws -> String {
        let r = try ChildProcess.run([bin + "/psql", "-h", root, "-U", "bench", "-d", "postgres", "-tAc", statement])
        guard r.code == 0 else { throw BenchError("psql: \(r.output)") }
        return r.output
    }

    /// CPU seconds of every server process (the postmaster and its backends).
    func cpuSeconds() -> Double {
        guard let pidText = try? String(contentsOfFile: root + "/data/postmaster.pid", encoding: .utf8),
            let first = pidText.split(separator: "\n").first, let postmaster = pid_t(first)
        else { return 0 }
        var total = NearcardBench.cpu(postmaster)
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = pid_t(entry), let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { continue }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            if fields.count > 2, pid_t(fields[1]) == postmaster { total += NearcardBench.cpu(pid) }
        }
        return total
    }

    func stop() {
        _ = try? run([bin + "/pg_ctl", "-D", root + "/data", "-m", "immediate", "-w", "stop"])
    }

    private func run(_ argv: [String]) throws {
        let command = user.map { ["/usr/sbin/runuser", "-u", $0, "--"] + argv } ?? argv
        let r = try ChildProcess.run(command)
        guard r.code == 0 else { throw BenchError("\(argv[0]): \(r.output)") }
    }
}

enum NearcardBench {
    static func cpu(_ pid: pid_t) -> Double { cpuSeconds(pid: pid) }
}
