import CBaseline
import Foundation
import NIOConcurrencyHelpers
import NearcardNode
import NearcardProcess
import NearcardProtocol
import NearcardSimulation

#if canImport(Glibc)
    import Glibc
    import NearcardStore
#endif

/// A `nearcard bot` that accepts everyone (message template, knownContact update) with every
/// per-address limit lifted, as the serving groups measure it; `prefix` runs it under another command
/// (`taskset`). `NEARCARD_BENCH_LOG` sets its log level.
func boothBot(_ exe: String, home: String, scratch: Scratch, log: String, prefix: [String] = []) throws -> NodeProcess {
    let policy = scratch.root + "/policy.json"
    try #"{"version": 1, "accept": "everyone", "message": "Thanks, {name}!", "knownContact": "update", "maxConcurrentSessions": 1024}"#
        .write(toFile: policy, atomically: true, encoding: .utf8)
    return try NodeProcess(
        prefix + [exe, "bot", "--policy", policy, "--home", home, "--port", "0", "--no-discovery"]
            + (ProcessInfo.processInfo.environment["NEARCARD_BENCH_LOG"].map { ["--log-level", $0] } ?? [])
            + ["--max-sessions", "1024", "--max-sessions-per-address", "1024", "--connections-per-minute", "1000000"],
        log: scratch.root + "/" + log, keep: false)
}

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
    let bot = try boothBot(exe, home: botHome.path, scratch: scratch, log: "bot.log")
    defer { bot.stop() }
    let started = try waitForStarted(bot)
    let target = loopbackTarget(port: started.port, did: started.did)

    let floorRuns = (0..<31).map { _ in ExchangeCryptoFloor().run() }
    let floorNs = median(floorRuns)
    let cores = Double(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
    let floorRate = cores * 1e9 / floorNs
    let botOnlyRate = cores * 1e9 / (floorNs / 2)

    var out =
        "| clients | bot exchanges/s (median of 1 s windows) | total in \(Int(seconds)) s | client failures | client latency p50 / p99 | floor: both halves' crypto on \(Int(cores)) cores | Nearcard ÷ floor |\n|---|---|---|---|---|---|---|\n"
    for k in clientCounts {
        var clients: [NodeContext] = []
        for i in 0..<k { clients.append(try scratch.service("Client \(k)-\(i)")) }
        let r = try await BotLoad.measure(
            clients: clients, targets: [target], seconds: seconds,
            completed: { bot.count("exchange.completed") }, cpu: { (0, 0) })
        let (rate, total, failures) = (r.rate, r.total, r.failures)
        let lat = (p50: r.p50, p99: r.p99)
        out +=
            "| \(k) | \(Int(rate)) | \(total) | \(failures) | \(format(lat.p50)) / \(format(lat.p99)) | \(Int(floorRate)) /s | \(format2(rate / floorRate))× |\n"
    }
    out +=
        "\nFloor: one exchange's crypto for both sides through libcrypto/libsodium, \(format(floorNs)) (median of 31), on \(Int(cores)) cores = \(Int(floorRate)) exchanges/s. "
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
    let node = try NodeProcess(
        [
            exe, "listen", "--jsonl", "--accept", "ask", "--home", home.path, "--port", "0", "--no-discovery",
            "--consent-timeout", "300", "--max-sessions", "\(sessions + 100)", "--max-sessions-per-address", "\(sessions + 100)",
            "--connections-per-minute", "1000000",
        ], log: scratch.root + "/node.log", keep: false)
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
    let busy = residentBytes(pid: node.child.pid) ?? 0
    let busyAnon = residentBytes(pid: node.child.pid, field: "RssAnon") ?? 0
    node.stop()
    for t in tasks { await t.value }
    guard held == sessions else { throw BenchError("only \(held) of \(sessions) sessions reached the decision stage") }

    func mb(_ b: Int) -> String { format2(Double(b) / 1_048_576) + " MB" }
    var out = "| node state | resident size (VmRSS) | of which its own memory (RssAnon) | target |\n|---|---|---|---|\n"
    out += "| idle (`nearcard listen --jsonl --no-discovery`, 2 s after start) | \(mb(idle)) | \(mb(idleAnon)) | reported (issue 20 retired ≤ 20 MB VmRSS) |\n"
    out += "| holding \(sessions) open sessions (all past the handshake, waiting for a decision) | \(mb(busy)) | \(mb(busyAnon)) | ≤ 100 MB VmRSS |\n"
    out +=
        "\nPer session: \(format2(Double(busy - idle) / Double(sessions) / 1024)) kB of VmRSS, \(format2(Double(busyAnon - idleAnon) / Double(sessions) / 1024)) kB of RssAnon. "
    out += "The \(sessions) sessions were opened by 10 in-process clients in \(format(openedIn)).\n"
    return out
}

/// Issue 20: the bot's own CPU per exchange — its process's user+system time from /proc over a
/// window, divided by the exchanges it completed in that window — beside the crypto of its own half
/// of one exchange (through libcrypto/libsodium). This VM's speed drifts by a third from minute to
/// minute, so each load runs `rounds` windows of `seconds`, and before each window the load pauses
/// while the floor is sampled: every window has its own floor, and the figure is the median of the
/// rounds' ratios. Two loads: saturation (`clients` in-process clients exchanging back to back, as
/// the throughput group does) and light load (`lightClients` loops that each start a `nearcard
/// exchange HOST:PORT --yes` process per exchange, a few tens a second: where a bot spends most of its
/// life, its threads idle between exchanges). Each in two placements: the bot and its clients sharing
/// both cores, and the bot alone on CPU 1 with every client on CPU 0 (what "clients elsewhere" leaves a
/// bot: a core to itself, no client thread evicting its caches).
func botCPUBenchmark(clients: Int = 8, lightClients: Int = 2, rounds: Int = 7, seconds: Double = 3) async throws -> String {
    precondition(cb_init() == 0)
    raiseFileLimit()
    let scratch = try Scratch("cpu")
    let exe = try nearcardExecutable()
    let botHome = try scratch.home("Booth Bot")
    let floor = ExchangeCryptoFloor()
    var contexts: [NodeContext] = []
    for i in 0..<clients { contexts.append(try scratch.service("Client \(i)")) }
    let homes = try (0..<lightClients).map { try scratch.home("Visitor \($0)") }
    let twoCores = sysconf(Int32(_SC_NPROCESSORS_ONLN)) >= 2

    /// The load's switch: clients exchange while it is on; `inFlight` counts exchanges under way.
    final class Gate: Sendable {
        let state = NIOLockedValueBox((on: false, stop: false, inFlight: 0, failures: 0))
        func begin() -> Bool? {
            state.withLockedValue { s in
                if s.stop { return nil }
                if !s.on { return false }
                s.inFlight += 1
                return true
            }
        }
        func end(ok: Bool) {
            state.withLockedValue {
                $0.inFlight -= 1
                if !ok { $0.failures += 1 }
            }
        }
        func set(on: Bool) { state.withLockedValue { $0.on = on } }
        func stop() { state.withLockedValue { $0.stop = true } }
        var idle: Bool { state.withLockedValue { $0.inFlight == 0 } }
        var failures: Int { state.withLockedValue { $0.failures } }
    }

    struct Round {
        let perExchange: Double
        let floor: Double
        let coldFloor: Double
        let rate: Double
        let count: Int
    }
    struct Load {
        let name: String
        let rounds: [Round]
        let failures: Int
    }
    func run(pinned: Bool) async throws -> [Load] {
        let placement = pinned ? "bot on CPU 1, clients on CPU 0" : "bot and clients on both cores"
        _ = cb_pin_process(pinned ? 0 : -1)
        defer { _ = cb_pin_process(-1) }
        let bot = try boothBot(exe, home: botHome.path, scratch: scratch, log: "bot-\(pinned).log", prefix: pinned ? ["/usr/bin/taskset", "-c", "1"] : [])
        defer { bot.stop() }
        let started = try waitForStarted(bot)
        let target = loopbackTarget(port: started.port, did: started.did)

        /// Runs the rounds against a started load behind `gate`.
        func measure(_ gate: Gate) async throws -> [Round] {
            var out: [Round] = []
            for r in -1..<rounds { // one warm-up round
                gate.set(on: false)
                while !gate.idle { try await Task.sleep(nanoseconds: 1_000_000) }
                let f = median((0..<31).map { _ in floor.runHalf() })
                // The same crypto run the way a lightly loaded bot runs it: once, after its CPU idled a while
                // (here 30 ms), so caches and predictors are cold. Context for the light load, not the target's floor.
                let cold = median(
                    (0..<11).map { _ in
                        usleep(30_000)
                        return floor.runHalf()
                    })
                gate.set(on: true)
                try await Task.sleep(nanoseconds: 300_000_000)
                let n0 = bot.count("exchange.completed")
                let c0 = cpuSeconds(pid: bot.child.pid)
                let t0 = now()
                try await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
                let n1 = bot.count("exchange.completed")
                let c1 = cpuSeconds(pid: bot.child.pid)
                let t1 = now()
                guard r >= 0 else { continue }
                guard n1 > n0 else { throw BenchError("no exchange completed in a window; see \(scratch.root)") }
                out.append(
                    Round(
                        perExchange: (c1 - c0) * 1e9 / Double(n1 - n0), floor: f, coldFloor: cold, rate: Double(n1 - n0) / (Double(t1 - t0) / 1e9),
                        count: n1 - n0))
            }
            gate.stop()
            while !gate.idle { try await Task.sleep(nanoseconds: 1_000_000) }
            return out
        }

        // Saturation: in-process clients, back to back.
        let saturated = Gate()
        let tasks = contexts.map { client in
            Task {
                while let go = saturated.begin() {
                    guard go else {
                        try? await Task.sleep(nanoseconds: 1_000_000)
                        continue
                    }
                    var ok = false
                    if case .completed? = try? await Dialer.exchange(with: target, context: client, consent: client.consent) { ok = true }
                    saturated.end(ok: ok)
                }
            }
        }
        let saturation = try await measure(saturated)
        for t in tasks { await t.value }

        // Light load: each exchange is a `nearcard exchange` process, as a person (or a script) runs it.
        let light = Gate()
        for home in homes {
            Thread.detachNewThread {
                while let go = light.begin() {
                    guard go else {
                        usleep(1000)
                        continue
                    }
                    let r = try? ChildProcess.run(
                        (pinned ? ["/usr/bin/taskset", "-c", "0"] : [])
                            + [exe, "exchange", "127.0.0.1:\(started.port)", "--yes", "--home", home.path])
                    light.end(ok: r?.code == 0)
                }
            }
        }
        let lightRounds = try await measure(light)
        return [
            Load(name: "saturation (\(clients) in-process clients back to back), \(placement)", rounds: saturation, failures: saturated.failures),
            Load(name: "light (\(lightClients) loops of `nearcard exchange` processes), \(placement)", rounds: lightRounds, failures: light.failures),
        ]
    }

    var loads = try await run(pinned: false)
    if twoCores { loads += try await run(pinned: true) }
    var out =
        "| load | bot exchanges/s | exchanges counted | failures | bot CPU per exchange | its half's crypto (floor) | ratio (median of \(rounds) windows) | range | the same crypto run cold | ratio to it |\n|---|---|---|---|---|---|---|---|---|---|\n"
    for load in loads {
        let rs = load.rounds
        let ratios = rs.map { $0.perExchange / $0.floor }
        out +=
            "| \(load.name) | \(Int(median(rs.map(\.rate)))) | \(rs.map(\.count).reduce(0, +)) | \(load.failures) | \(format(median(rs.map(\.perExchange)))) | "
        out += "\(format(median(rs.map(\.floor)))) | **\(format2(median(ratios)))×** | \(format2(ratios.min()!))–\(format2(ratios.max()!))× | "
        out += "\(format(median(rs.map(\.coldFloor)))) | \(format2(median(rs.map { $0.perExchange / $0.coldFloor })))× |\n"
    }
    out += "\nBot CPU: the `nearcard bot` process's user+system time from /proc/PID/stat (10 ms ticks) over each \(format2(seconds)) s window, "
    out += "divided by the exchanges it completed in it. Floor: one side's crypto (\(ExchangeCryptoFloor.halfSummary)) through libcrypto/libsodium, "
    out += "median of 31 runs taken with the load paused just before each window. Run cold: the same half once after 30 ms idle, median of 11 "
    out += "per window (what the crypto costs when a bot's CPU idled between exchanges; context, not the target's floor).\n"
    return out
}
