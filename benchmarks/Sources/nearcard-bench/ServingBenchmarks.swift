import CBaseline
import Foundation
import NearcardNode
import NearcardProtocol
import NIOConcurrencyHelpers
#if canImport(Glibc)
import Glibc
#endif

/// Issue 7: one `nearcard bot` (release build, its own process) serving K concurrent clients for
/// `seconds`, counted by the bot's own exchange.completed events. The clients are in this process
/// and on the same two cores, doing their half of every exchange, so the floor is the crypto of
/// both halves spread over both cores.
func botThroughputBenchmark(clientCounts: [Int] = [8, 32], seconds: Double = 30) async throws -> String {
    precondition(cb_init() == 0)
    raiseFileLimit()
    let scratch = try Scratch("throughput")
    let exe = try nearcardExecutable()
    let botHome = try scratch.home("Booth Bot")
    let policy = scratch.root + "/policy.json"
    try #"{"version": 1, "accept": "everyone", "message": "Thanks, {name}!", "knownContact": "update", "maxConcurrentSessions": 1024}"#
        .write(toFile: policy, atomically: true, encoding: .utf8)
    let bot = try NodeProcess([exe, "bot", "--policy", policy, "--home", botHome.path, "--port", "0", "--no-discovery"] + (ProcessInfo.processInfo.environment["NEARCARD_BENCH_LOG"].map { ["--log-level", $0] } ?? []) + [
                               "--max-sessions", "1024", "--max-sessions-per-address", "1024", "--connections-per-minute", "1000000"],
                              log: scratch.root + "/bot.log", keep: false)
    defer { bot.stop() }
    let started = try waitForStarted(bot)
    let target = loopbackTarget(port: started.port, did: started.did)

    let floorRuns = (0..<31).map { _ in ExchangeCryptoFloor().run() }
    let floorNs = median(floorRuns)
    let cores = Double(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
    let floorRate = cores * 1e9 / floorNs
    let botOnlyRate = cores * 1e9 / (floorNs / 2)

    var out = "| clients | bot exchanges/s (median of 1 s windows) | total in \(Int(seconds)) s | client failures | client latency p50 / p99 | floor: both halves' crypto on \(Int(cores)) cores | Nearcard ÷ floor |\n|---|---|---|---|---|---|---|\n"
    for k in clientCounts {
        var clients: [NodeContext] = []
        for i in 0..<k { clients.append(try scratch.service("Client \(k)-\(i)")) }
        let r = try await BotLoad.measure(clients: clients, targets: [target], seconds: seconds,
                                          completed: { bot.count("exchange.completed") }, cpu: { (0, 0) })
        let (rate, total, failures) = (r.rate, r.total, r.failures)
        let lat = (p50: r.p50, p99: r.p99)
        out += "| \(k) | \(Int(rate)) | \(total) | \(failures) | \(format(lat.p50)) / \(format(lat.p99)) | \(Int(floorRate)) /s | \(format2(rate / floorRate))× |\n"
    }
    out += "\nFloor: one exchange's crypto for both sides through libcrypto/libsodium, \(format(floorNs)) (median of 31), on \(Int(cores)) cores = \(Int(floorRate)) exchanges/s. "
    out += "A bot whose clients were elsewhere would have the cores to itself: its half alone would allow \(Int(botOnlyRate)) exchanges/s.\n"
    return out
}

/// Issue 7: the resident size of `nearcard listen` idle, and holding `sessions` open sessions
/// (each past its handshake, waiting for a decision: the most state a session holds).
func memoryBenchmark(sessions: Int = 1000) async throws -> String {
    precondition(cb_init() == 0)
    raiseFileLimit()
    let scratch = try Scratch("memory")
    let exe = try nearcardExecutable()
    let home = try scratch.home("Memory Node")
    let node = try NodeProcess([exe, "listen", "--jsonl", "--accept", "ask", "--home", home.path, "--port", "0", "--no-discovery",
                                "--consent-timeout", "300", "--max-sessions", "\(sessions + 100)", "--max-sessions-per-address", "\(sessions + 100)",
                                "--connections-per-minute", "1000000"], log: scratch.root + "/node.log", keep: false)
    defer { node.stop() }
    let started = try waitForStarted(node)
    try await Task.sleep(nanoseconds: 2_000_000_000)
    guard let idle = residentBytes(pid: node.child.pid), let idleAnon = residentBytes(pid: node.child.pid, field: "RssAnon") else {
        throw BenchError("cannot read /proc/\(node.child.pid)/status")
    }

    var limits = NodeLimits()
    limits.consentTimeout = 300
    limits.handshakeTimeout = 120
    var clients: [NodeContext] = []
    for i in 0..<10 { clients.append(try scratch.service("Visitor \(i)", limits: limits)) }
    let target = loopbackTarget(port: started.port, did: started.did)
    let t0 = now()
    let visitors = clients
    let tasks = (0..<sessions).map { i in
        let client = visitors[i % visitors.count]
        return Task { _ = try? await Dialer.exchange(with: target, context: client, consent: client.consent) }
    }
    let deadline = Date().addingTimeInterval(120)
    while node.count("exchange.requested") < sessions && Date() < deadline { try await Task.sleep(nanoseconds: 50_000_000) }
    let held = node.count("exchange.requested")
    let openedIn = Double(now() - t0)
    try await Task.sleep(nanoseconds: 1_000_000_000)
    let busy = residentBytes(pid: node.child.pid) ?? 0, busyAnon = residentBytes(pid: node.child.pid, field: "RssAnon") ?? 0
    node.stop()
    for t in tasks { await t.value }
    guard held == sessions else { throw BenchError("only \(held) of \(sessions) sessions reached the decision stage") }

    func mb(_ b: Int) -> String { format2(Double(b) / 1_048_576) + " MB" }
    var out = "| node state | resident size (VmRSS) | of which its own memory (RssAnon) | target (VmRSS) |\n|---|---|---|---|\n"
    out += "| idle (`nearcard listen --jsonl --no-discovery`, 2 s after start) | \(mb(idle)) | \(mb(idleAnon)) | ≤ 20 MB |\n"
    out += "| holding \(sessions) open sessions (all past the handshake, waiting for a decision) | \(mb(busy)) | \(mb(busyAnon)) | ≤ 100 MB |\n"
    out += "\nPer session: \(format2(Double(busy - idle) / Double(sessions) / 1024)) kB. The \(sessions) sessions were opened by 10 in-process clients in \(format(openedIn)).\n"
    return out
}

