import Foundation
import NearcardCrypto
import NearcardProcess
import NearcardSimulation
import NearcardStore

#if canImport(Glibc)
    import Glibc
#endif

/// The lines a process prints, each with the time it was read.
final class TimedLines: @unchecked Sendable {
    let child: ChildProcess
    private let lock = NSLock()
    private var lines: [(at: UInt64, text: String)] = []

    init(_ argv: [String], environment: [String: String], log: String) throws {
        child = try ChildProcess(argv, environment: environment, log: log, pipes: true)
        let stream = child.lines()
        Task { [weak self] in
            for await line in stream {
                let at = now()
                self?.append(at, line)
            }
        }
    }

    private func append(_ at: UInt64, _ text: String) {
        lock.lock()
        lines.append((at, text))
        lock.unlock()
    }

    func first(where predicate: (String) -> Bool) -> UInt64? {
        lock.lock()
        defer { lock.unlock() }
        return lines.first { predicate($0.text) }?.at
    }
}

/// avahi-browse -p escapes a name's dots, backslashes and non-printable bytes as \DDD (decimal).
func avahiUnescape(_ s: Substring) -> String {
    var bytes: [UInt8] = []
    var i = s.utf8.startIndex
    let u = s.utf8
    while i < u.endIndex {
        if u[i] == UInt8(ascii: "\\") {
            let digits = u[u.index(after: i)...].prefix(3)
            if digits.count == 3, digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let v = UInt8(String(decoding: digits, as: UTF8.self)) {
                bytes.append(v)
                i = u.index(i, offsetBy: 4)
                continue
            }
            if let next = u.index(i, offsetBy: 1, limitedBy: u.endIndex), next < u.endIndex {
                bytes.append(u[next])
                i = u.index(after: next)
                continue
            }
        }
        bytes.append(u[i])
        i = u.index(after: i)
    }
    return String(decoding: bytes, as: UTF8.self)
}

/// Issue 7: from a node's start to its appearance on another node (its peer.found event, what
/// `nearcard peers` lists), beside `avahi-browse -r` (browse and resolve) watching the same
/// avahi-daemon for the same event. In a namespace of its own with its own avahi on `lo`.
func discoveryBenchmark(rounds: Int = 11) async throws -> String {
    if let problem = NetLab.checkPrerequisites() { throw BenchError(problem) }
    guard let browse = ["/usr/bin/avahi-browse"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
        throw BenchError("avahi-browse is not installed: apt-get install avahi-utils")
    }
    let exe = try nearcardExecutable()
    let scratch = try Scratch("discovery")
    NetLab.removeStale(prefix: "ncb")
    let lab = NetLab(tag: "ncb\(getpid())", root: scratch.root)
    defer { lab.tearDown() }
    let space = try lab.loopbackSpace()
    let env = ProcessInfo.processInfo.environment.merging(space.environment) { $1 }

    let watcherHome = try scratch.home("Watcher")
    let watcher = try NodeProcess(
        space.prefix + [exe, "listen", "--jsonl", "--accept", "all", "--home", watcherHome.path, "--port", "0"],
        environment: env, log: scratch.root + "/watcher.log")
    defer { watcher.stop() }
    _ = try watcher.wait(for: "the watcher's published line", timeout: 30) { $0["event"] as? String == "published" }
    let avahi = try TimedLines(space.prefix + [browse, "-r", "-p", "_nearcard._tcp"], environment: env, log: scratch.root + "/avahi-browse.log")
    defer { _ = avahi.child.stop(after: 2) }
    try await Task.sleep(nanoseconds: 500_000_000)

    var ours: [Double] = []
    var theirs: [Double] = []
    var gaps: [Double] = []
    for round in 0..<rounds {
        let name = "Arrival \(round)"
        let home = try scratch.home(name)
        let t0 = now()
        let node = try NodeProcess(
            space.prefix + [exe, "listen", "--jsonl", "--accept", "all", "--home", home.path, "--port", "0"],
            environment: env, log: scratch.root + "/node-\(round).log")
        defer { node.stop() }
        let published = try node.wait(for: "the published line of \(name)", timeout: 30) { $0["event"] as? String == "published" }
        let instance = published.json["name"] as? String ?? name
        let found = try watcher.wait(for: "peer.found for \(name)", timeout: 30) {
            // Discovery carries no fingerprint (PROTOCOL.md §3): the arrival is known by the name it announces.
            $0["event"] as? String == "peer.found" && $0["name"] as? String == name
        }
        var resolved: UInt64?
        let deadline = Date().addingTimeInterval(30)
        while resolved == nil && Date() < deadline {
            // =;IFACE;PROTO;NAME;TYPE;DOMAIN;HOST;ADDRESS;PORT;TXT
            resolved = avahi.first { line in
                let f = line.split(separator: ";", omittingEmptySubsequences: false)
                return f.count > 3 && f[0] == "=" && avahiUnescape(f[3]) == instance
            }
            if resolved == nil { try await Task.sleep(nanoseconds: 2_000_000) }
        }
        guard let resolved else { throw BenchError("avahi-browse never resolved \(instance)") }
        let a = Double(found.at - t0)
        let b = Double(resolved - t0)
        ours.append(a)
        theirs.append(b)
        gaps.append(a - b)
        node.stop()
        _ = try? watcher.wait(for: "peer.lost for \(name)", timeout: 10) {
            $0["event"] as? String == "peer.lost" && $0["instance"] as? String == instance
        }
    }
    var out = "| watcher | node start → seen (median of \(rounds)) | min | max |\n|---|---|---|---|\n"
    out +=
        "| `nearcard listen --jsonl` on another node: peer.found (resolved, TXT read) | \(format(median(ours))) | \(format(ours.min()!)) | \(format(ours.max()!)) |\n"
    out +=
        "| `avahi-browse -r -p _nearcard._tcp` on the same daemon: first resolved (=) line | \(format(median(theirs))) | \(format(theirs.min()!)) | \(format(theirs.max()!)) |\n"
    out += "| difference per round (Nearcard − avahi-browse) | \(formatSigned(median(gaps))) | \(formatSigned(gaps.min()!)) | \(formatSigned(gaps.max()!)) |\n"
    return out
}

func formatSigned(_ nanos: Double) -> String { nanos < 0 ? "−" + format(-nanos) : "+" + format(nanos) }

/// Issue 7: the largest N for which `nearcard simulate --peers N --timeout 60` (one loopback
/// namespace, all pairs) completes every exchange with no failure.
func simulationScaleBenchmark(sizes: [Int] = [25, 50, 75, 100, 110, 120, 130, 140, 150, 160, 180, 200]) throws -> String {
    let exe = try nearcardExecutable()
    var out =
        "| peers | exchanges | succeeded | failures | discovery (all found) | exchange phase | wall | exchanges/s | p50 / p99 latency |\n|---|---|---|---|---|---|---|---|---|\n"
    var largest: Int?
    for n in sizes {
        let r = try ChildProcess.run([exe, "simulate", "--peers", "\(n)", "--timeout", "60", "--json"])
        // The report (pretty JSON on stdout) comes after the progress lines (stderr) in the output.
        let lines = r.output.split(separator: "\n", omittingEmptySubsequences: false)
        var report = ""
        if let open = lines.lastIndex(of: "{"), let close = lines.lastIndex(of: "}"), open < close {
            report = lines[open...close].joined(separator: "\n")
        }
        guard let o = try? JSONSerialization.jsonObject(with: Data(report.utf8)) as? [String: Any] else {
            out += "| \(n) | — | — | simulate exited \(r.code) without a report | | | | | |\n"
            break
        }
        let attempts = o["attempts"] as? Int ?? 0
        let successes = o["successes"] as? Int ?? 0
        let failures = (o["failures"] as? [String: Int] ?? [:]).map { "\($0.value) \($0.key)" }.sorted().joined(separator: ", ")
        let latency = o["latencyMs"] as? [String: Any] ?? [:]
        func n2(_ v: Any?) -> String { (v as? Double).map { format2($0) } ?? (v as? Int).map(String.init) ?? "—" }
        let undiscovered = o["undiscoveredPeers"] as? Int ?? 0
        let discovery = undiscovered > 0 ? "\(undiscovered) sightings missing after 60 s" : "\(n2(o["discoveryMs"])) ms"
        out +=
            "| \(n) | \(attempts) | \(successes) | \(failures.isEmpty ? "0" : failures) | \(discovery) | \(n2(o["exchangeSeconds"])) s | \(n2(o["wallSeconds"])) s | \(n2(o["exchangesPerSecond"])) | \(n2(latency["p50"])) / \(n2(latency["p99"])) ms |\n"
        guard r.code == 0, attempts > 0, successes == attempts else { break }
        largest = n
    }
    out +=
        "\nLargest N completing all pairs with no failure within 60 s: **\(largest.map(String.init) ?? "none")** (sizes tried: \(sizes.map(String.init).joined(separator: ", ")); the run stops at the first size that fails).\n"
    return out
}

/// Issue "Crowds": `nearcard simulate --peers N --topology star --idle SECONDS` for each N — the hub
/// exchanges with every other node by name — and what the crowd then costs while nobody exchanges:
/// CPU per node per minute and TCP connections each node receives a minute (Simulation.measureIdle).
/// Then the issue's other shapes, without the idle minute: 60 nodes all pairs (1,770 exchanges), a
/// conference (200 visitors and 4 bots on one PostgreSQL book, each visitor with a bot by name) and
/// 100 nodes each in a namespace of its own (last: the kernel takes minutes to remove 100 namespaces).
/// Targets (2 cores): 200 nodes all exchanged, discovery ≤ 20 s; 500 within 60 s; idle, at most 10
/// connections a node a minute and CPU per node flat as N grows; every exchange of the other shapes,
/// and one contact per visitor in the fleet's book.
func crowdBenchmark(sizes: [Int], idle: Double, shapes: Bool = true) throws -> String {
    let exe = try nearcardExecutable()
    raiseFileLimit()
    var out =
        "| N | exchanges | discovery (hub saw all) | p50 / p95 latency | probe lines / refusals | idle: CPU per node (ms a minute, median / max) | idle: connections per node a minute (max / all) |\n|---|---|---|---|---|---|---|\n"
    var runs = sizes.map { n in ("\(n)", ["--peers", "\(n)", "--topology", "star", "--idle", "\(Int(idle))"]) }
    if shapes {
        runs += [
            ("60, all pairs", ["--peers", "60", "--topology", "all"]),
            ("200 + 4 bots (conference)", ["--peers", "200", "--bots", "4"]),
            ("100, --netns", ["--peers", "100", "--netns", "--topology", "star"]),
        ]
    }
    for (n, arguments) in runs {
        // 15 minutes, not run's 2: 500 nodes take 4.
        let r = try ChildProcess.run([exe, "simulate"] + arguments + ["--json", "--timeout", "600"], limit: 900)
        let lines = r.output.split(separator: "\n", omittingEmptySubsequences: false)
        var report = ""
        if let open = lines.lastIndex(of: "{"), let close = lines.lastIndex(of: "}"), open < close { report = lines[open...close].joined(separator: "\n") }
        guard let o = try? JSONSerialization.jsonObject(with: Data(report.utf8)) as? [String: Any] else {
            out += "| \(n) | simulate exited \(r.code) without a report | | | | | |\n"
            continue
        }
        func n2(_ v: Any?) -> String {
            if let i = v as? Int { return String(i) }
            guard let d = v as? Double else { return "—" }
            return d == d.rounded() && abs(d) < 1e15 ? String(Int(d)) : format2(d)
        }
        let latency = o["latencyMs"] as? [String: Any] ?? [:]
        func int(_ v: Any?) -> Int? { (v as? Int) ?? (v as? Double).map { Int($0) } }
        let undiscovered = int(o["undiscoveredPeers"]) ?? 0
        let discovery = undiscovered > 0 ? "\(undiscovered) not seen after 60 s" : "\(n2((o["discoveryMs"] as? Double).map { $0 / 1000 })) s"
        var failures = (o["failures"] as? [String: Any] ?? [:]).map { "\(int($0.value) ?? 0) \($0.key)" }.sorted()
        if let fleet = int(o["fleetContacts"]) { failures.append("\(fleet)/\(n2(o["fleetContactsExpected"])) visitors in the fleet's book") }
        let noted = failures.joined(separator: "; ")
        let i = o["idle"] as? [String: Any] ?? [:]
        let cpu = i["cpuMsPerNodePerMinute"] as? [String: Any] ?? [:]
        let connections = i["connectionsPerNodePerMinute"] as? [String: Any] ?? [:]
        out +=
            "| \(n) | \(n2(o["successes"]))/\(n2(o["attempts"]))\(noted.isEmpty ? "" : " (\(noted))") | \(discovery) | \(n2(latency["p50"])) / \(n2(latency["p95"])) ms | \(n2(o["probeSummaries"])) / \(n2(o["refusals"])) | \(n2(cpu["median"])) / \(n2(cpu["max"])) | \(n2(connections["max"])) / \(n2(connections["total"])) |\n"
    }
    out += "\n\(exe); idle measured over \(Int(idle)) s after the exchanges (connections: the sockets Linux keeps 60 s after a close).\n"
    return out
}

extension TimedLines {
    /// When the `n`-th distinct instance showed in avahi-browse -p lines of `kind` (`+` listed, `=`
    /// resolved): `KIND;IFACE;PROTO;NAME;TYPE;DOMAIN…`.
    func nthInstance(_ n: Int, kind: Substring) -> UInt64? {
        var seen: Set<String> = []
        return first { line in
            let f = line.split(separator: ";", omittingEmptySubsequences: false)
            return f.count > 3 && f[0] == kind && seen.insert(avahiUnescape(f[3])).inserted && seen.count == n
        }
    }
}

/// The pid of the process called `command` in a namespace (the lab's avahi-daemon, dbus-daemon).
func pid(of command: String, in space: NetLab.Space) -> pid_t? {
    guard let (code, pids) = try? ChildProcess.run([NetLab.tool("ip"), "netns", "pids", space.name]), code == 0 else { return nil }
    for p in pids.split(whereSeparator: \.isWhitespace) {
        let comm = (try? String(contentsOfFile: "/proc/\(p)/comm", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
        if comm == command { return pid_t(p) }
    }
    return nil
}

/// CPU seconds spent between two readings, when both were taken.
private func spent(_ before: Double?, _ after: Double?) -> Double? {
    guard let before, let after else { return nil }
    return after - before
}

/// Issue 20 (dense LANs): N nodes started at once on one avahi-daemon (a fresh namespace of their
/// own per run, the daemon on `lo`, as `nearcard simulate`'s default mode), and the time from the
/// first node's start until every node has reported every other (N − 1 `peer.found` lines each),
/// beside two avahi-browse clients of the same daemon started before the nodes: `-p` (until all N
/// announcements are listed) and `-p -r` (until each of the N is resolved: SRV, TXT, address). Also
/// when the last node's publication was established (Avahi's probing done), the CPU time
/// avahi-daemon and dbus-daemon spent until every node had seen every other, and their load over the
/// `settled` seconds after (what keeping the list costs: each node checks each peer every 15 s).
/// Medians of `rounds` runs per N; a run not finished within `limit` seconds counts as not finishing.
func crowdDiscoveryBenchmark(sizes: [Int], rounds: Int, limit: TimeInterval = 90, settled: TimeInterval = 15) async throws -> String {
    if let problem = NetLab.checkPrerequisites() { throw BenchError(problem) }
    let browse = "/usr/bin/avahi-browse"
    guard FileManager.default.isExecutableFile(atPath: browse) else { throw BenchError("avahi-browse is not installed: apt-get install avahi-utils") }
    let exe = try nearcardExecutable()
    raiseFileLimit()
    NetLab.removeStale(prefix: "ncc")
    struct Run {
        var published: Double, listed: Double?, resolved: Double?, allSeen: Double?, sightings: Int, avahiCPU: Double?, dbusCPU: Double?
        var avahiAfter: Double?, dbusAfter: Double?
    }
    var out =
        "| N | last node's publication established (ms) | avahi-browse -p: all N listed (ms) | avahi-browse -p -r: all N resolved (ms) | Nearcard: every node has seen every other (ms) | avahi-daemon / dbus-daemon CPU until then | the next \(Int(settled)) s |\n|---|---|---|---|---|---|---|\n"
    for n in sizes {
        let scratch = try Scratch("crowd-\(n)")
        var homes: [NearcardHome] = []
        for i in 0..<n { homes.append(try scratch.home("Peer \(i)")) }
        var runs: [Run] = []
        for round in 0..<rounds {
            let lab = NetLab(tag: "ncc\(getpid())", root: scratch.root + "/lab-\(round)")
            defer { lab.tearDown() }
            let space = try lab.loopbackSpace()
            let env = ProcessInfo.processInfo.environment.merging(space.environment) { $1 }
            let listed = try TimedLines(space.prefix + [browse, "-p", "_nearcard._tcp"], environment: env, log: scratch.root + "/browse-\(round).log")
            let resolved = try TimedLines(space.prefix + [browse, "-p", "-r", "_nearcard._tcp"], environment: env, log: scratch.root + "/resolve-\(round).log")
            defer {
                _ = listed.child.stop(after: 2)
                _ = resolved.child.stop(after: 2)
            }
            try await Task.sleep(nanoseconds: 500_000_000)
            let daemons = (pid(of: "avahi-daemon", in: space), pid(of: "dbus-daemon", in: space))
            let cpu0 = (daemons.0.map { cpuSeconds(pid: $0) }, daemons.1.map { cpuSeconds(pid: $0) })

            let t0 = now()
            var nodes: [NodeProcess] = []
            defer {
                for node in nodes { node.child.signal(SIGTERM) }
                for node in nodes { _ = node.child.stop(after: 5, signal: nil) }
            }
            for (i, home) in homes.enumerated() {
                nodes.append(
                    try NodeProcess(
                        space.prefix + [exe, "listen", "--jsonl", "--accept", "all", "--port", "0", "--home", home.path, "--interface", "lo"],
                        environment: env, log: scratch.root + "/node-\(i)-\(round).log", keep: false))
            }
            let deadline = t0 + UInt64(limit * 1e9)
            while now() < deadline, nodes.contains(where: { $0.count("peer.found") < n - 1 }) {
                try await Task.sleep(nanoseconds: 10_000_000)
            }
            let seen = nodes.map { min($0.count("peer.found"), n - 1) }.reduce(0, +)
            let cpu = (daemons.0.map { cpuSeconds(pid: $0) }, daemons.1.map { cpuSeconds(pid: $0) })
            var allSeen: Double?
            if seen == n * (n - 1) { allSeen = try nodes.map { Double(try $0.waitForNth("peer.found", n - 1, timeout: 1) - t0) }.max() }
            let published = try nodes.map { Double(try $0.wait(for: "published", timeout: 30) { $0["event"] as? String == "published" }.at - t0) }.max() ?? 0
            // Then what keeping the list costs (each peer checked every 15 s), as a share of one core.
            try await Task.sleep(nanoseconds: UInt64(settled * 1e9))
            let cpu2 = (daemons.0.map { cpuSeconds(pid: $0) }, daemons.1.map { cpuSeconds(pid: $0) })
            let lost = nodes.map { $0.count("peer.lost") }.reduce(0, +)
            if lost > 0 { throw BenchError("\(lost) peer.lost lines with \(n) nodes: nobody left, so discovery misreported") }
            runs.append(
                Run(
                    published: published, listed: listed.nthInstance(n, kind: "+").map { Double($0 - t0) },
                    resolved: resolved.nthInstance(n, kind: "=").map { Double($0 - t0) }, allSeen: allSeen, sightings: seen,
                    avahiCPU: spent(cpu0.0, cpu.0), dbusCPU: spent(cpu0.1, cpu.1),
                    avahiAfter: spent(cpu.0, cpu2.0).map { $0 / settled }, dbusAfter: spent(cpu.1, cpu2.1).map { $0 / settled }))
        }
        func cell(_ xs: [Double?]) -> String {
            let done = xs.compactMap { $0 }
            guard done.count == xs.count else { return "not within \(Int(limit)) s in \(xs.count - done.count) of \(xs.count) runs" }
            func ms(_ nanos: Double) -> String { String(Int((nanos / 1e6).rounded())) }
            return done.count == 1 ? ms(done[0]) : "\(ms(median(done))) (\(ms(done.min()!))–\(ms(done.max()!)))"
        }
        func seconds(_ xs: [Double?]) -> String { xs.contains(nil) ? "—" : "\(format2(median(xs.compactMap { $0 }))) s" }
        func share(_ xs: [Double?]) -> String { xs.contains(nil) ? "—" : "\(Int((median(xs.compactMap { $0 }) * 100).rounded())) %" }
        var seenCell = cell(runs.map(\.allSeen))
        if runs.contains(where: { $0.allSeen == nil }) {
            seenCell += " (sightings: \(runs.map { "\($0.sightings)/\(n * (n - 1))" }.joined(separator: ", ")))"
        }
        out +=
            "| \(n) | \(cell(runs.map(\.published))) | \(cell(runs.map(\.listed))) | \(cell(runs.map(\.resolved))) | \(seenCell) | \(seconds(runs.map(\.avahiCPU))) / \(seconds(runs.map(\.dbusCPU))) | \(share(runs.map(\.avahiAfter))) / \(share(runs.map(\.dbusAfter))) |\n"
    }
    out +=
        "\n\(rounds == 1 ? "One run" : "Median (min–max) of \(rounds) runs") per N, each on a fresh avahi-daemon; times from the first node's start. CPU: each daemon's user + system time from the first node's start until every node had seen every other (or the \(Int(limit)) s limit), then its share of one core over the next \(Int(settled)) s, nodes idle but for discovery.\n"
    return out
}
