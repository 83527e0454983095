import Foundation
import NearcardCrypto
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
        lock.lock(); lines.append((at, text)); lock.unlock()
    }

    func first(where predicate: (String) -> Bool) -> UInt64? {
        lock.lock(); defer { lock.unlock() }
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
    let watcher = try NodeProcess(space.prefix + [exe, "listen", "--jsonl", "--accept", "all", "--home", watcherHome.path, "--port", "0"],
                                  environment: env, log: scratch.root + "/watcher.log")
    defer { watcher.stop() }
    _ = try watcher.wait(for: "the watcher's published line", timeout: 30) { $0["event"] as? String == "published" }
    let avahi = try TimedLines(space.prefix + [browse, "-r", "-p", "_nearcard._tcp"], environment: env, log: scratch.root + "/avahi-browse.log")
    defer { _ = avahi.child.stop(after: 2) }
    try await Task.sleep(nanoseconds: 500_000_000)

    var ours: [Double] = [], theirs: [Double] = [], gaps: [Double] = []
    for round in 0..<rounds {
        let name = "Arrival \(round)"
        let home = try scratch.home(name)
        let t0 = now()
        let node = try NodeProcess(space.prefix + [exe, "listen", "--jsonl", "--accept", "all", "--home", home.path, "--port", "0"],
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
        let a = Double(found.at - t0), b = Double(resolved - t0)
        ours.append(a); theirs.append(b); gaps.append(a - b)
        node.stop()
        _ = try? watcher.wait(for: "peer.lost for \(name)", timeout: 10) {
            $0["event"] as? String == "peer.lost" && $0["instance"] as? String == instance
        }
    }
    var out = "| watcher | node start → seen (median of \(rounds)) | min | max |\n|---|---|---|---|\n"
    out += "| `nearcard listen --jsonl` on another node: peer.found (resolved, TXT read) | \(format(median(ours))) | \(format(ours.min()!)) | \(format(ours.max()!)) |\n"
    out += "| `avahi-browse -r -p _nearcard._tcp` on the same daemon: first resolved (=) line | \(format(median(theirs))) | \(format(theirs.min()!)) | \(format(theirs.max()!)) |\n"
    out += "| difference per round (Nearcard − avahi-browse) | \(formatSigned(median(gaps))) | \(formatSigned(gaps.min()!)) | \(formatSigned(gaps.max()!)) |\n"
    return out
}

func formatSigned(_ nanos: Double) -> String { nanos < 0 ? "−" + format(-nanos) : "+" + format(nanos) }

/// Issue 7: the largest N for which `nearcard simulate --peers N --timeout 60` (one loopback
/// namespace, all pairs) completes every exchange with no failure.
func simulationScaleBenchmark(sizes: [Int] = [25, 50, 75, 100, 110, 120, 130, 140, 150, 160, 180, 200]) throws -> String {
    let exe = try nearcardExecutable()
    var out = "| peers | exchanges | succeeded | failures | discovery (all found) | exchange phase | wall | exchanges/s | p50 / p99 latency |\n|---|---|---|---|---|---|---|---|---|\n"
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
        let attempts = o["attempts"] as? Int ?? 0, successes = o["successes"] as? Int ?? 0
        let failures = (o["failures"] as? [String: Int] ?? [:]).map { "\($0.value) \($0.key)" }.sorted().joined(separator: ", ")
        let latency = o["latencyMs"] as? [String: Any] ?? [:]
        func n2(_ v: Any?) -> String { (v as? Double).map { format2($0) } ?? (v as? Int).map(String.init) ?? "—" }
        let undiscovered = o["undiscoveredPeers"] as? Int ?? 0
        let discovery = undiscovered > 0 ? "\(undiscovered) sightings missing after 30 s" : "\(n2(o["discoveryMs"])) ms"
        out += "| \(n) | \(attempts) | \(successes) | \(failures.isEmpty ? "0" : failures) | \(discovery) | \(n2(o["exchangeSeconds"])) s | \(n2(o["wallSeconds"])) s | \(n2(o["exchangesPerSecond"])) | \(n2(latency["p50"])) / \(n2(latency["p99"])) ms |\n"
        guard r.code == 0, attempts > 0, successes == attempts else { break }
        largest = n
    }
    out += "\nLargest N completing all pairs with no failure within 60 s: **\(largest.map(String.init) ?? "none")** (sizes tried: \(sizes.map(String.init).joined(separator: ", ")); the run stops at the first size that fails).\n"
    return out
}
