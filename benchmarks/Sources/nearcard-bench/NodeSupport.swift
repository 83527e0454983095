import CBaseline
import Foundation
import NearcardCrypto
import NearcardDiscovery
import NearcardModel
import NearcardNode
import NearcardProcess
import NearcardProtocol
import NearcardSimulation
import NearcardStore

#if canImport(Glibc)
    import Glibc
#endif

/// What the node benchmarks share: scratch homes, in-process nodes, the release `nearcard` binary.
final class Scratch: @unchecked Sendable {
    let root: String
    init(_ tag: String) throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-bench-\(tag)-\(getpid())").path
        try? FileManager.default.removeItem(atPath: root)
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }
    deinit { if ProcessInfo.processInfo.environment["NEARCARD_BENCH_KEEP"] == nil { try? FileManager.default.removeItem(atPath: root) } }

    /// An identity with a card of the size a person shares (name, email, company, title).
    func home(_ name: String) throws -> NearcardHome {
        let home = NearcardHome(path: "\(root)/\(name.replacingOccurrences(of: " ", with: "-"))")
        _ = try IdentityStore(home: home).create(name: name, passphrase: nil)
        let db = try NearcardDatabase(home: home)
        _ = try db.saveMyCard(
            Card(
                name: name, email: "\(name.lowercased().replacingOccurrences(of: " ", with: "."))@bench.example",
                company: "Benchmarks Ltd", title: "Load"))
        try db.saveSharingPolicy(SharingPolicy(fields: [.name, .email, .company, .title]))
        return home
    }

    /// An in-process node that says yes to everything.
    func service(_ name: String, limits: NodeLimits = NodeLimits(), consent: any ConsentProvider = AcceptAll(message: nil)) throws -> NodeContext {
        let home = try self.home(name)
        let store = IdentityStore(home: home)
        let keys = try store.unlock(passphrase: { nil })
        return NodeContext(keys: keys, identity: try store.loadPublic(), database: try NearcardDatabase(home: home), consent: consent, limits: limits)
    }
}

func loopbackTarget(port: Int, did: String?) -> DialTarget {
    DialTarget(
        addresses: [PeerAddress(ip: "127.0.0.1", port: port, interfaceName: "lo", interfaceIndex: 1)],
        expected: ExpectedPeer(did: did), label: "127.0.0.1:\(port)")
}

/// The `nearcard` executable of a release build of the package one level up (`make bench` builds it).
func nearcardExecutable() throws -> String {
    if let path = ProcessInfo.processInfo.environment["NEARCARD"] { return path }
    let root = URL(fileURLWithPath: FileManager.default.currentDirectoryPath).deletingLastPathComponent().path
    let path = "\(root)/.build/release/nearcard"
    guard FileManager.default.isExecutableFile(atPath: path) else {
        throw BenchError("no release build at \(path): run `make release` in \(root) (make bench does)")
    }
    return path
}

/// Resident set size of a process, from /proc (kB → bytes): `VmRSS` (all resident pages, shared
/// library code included) or `RssAnon` (the process's own memory).
func residentBytes(pid: pid_t, field: String = "VmRSS") -> Int? {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
    for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
        let kb = line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap { Int($0) }
        return kb.map { $0 * 1024 }
    }
    return nil
}

/// Raises this process's open-file limit to its hard limit (a thousand sockets need more than 1024).
func raiseFileLimit() {
    var limit = rlimit()
    getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    limit.rlim_cur = limit.rlim_max
    setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
}

/// A node process speaking JSON lines. Every line's event name is counted and the time it was read
/// noted, without parsing (`waitForNth`); with `keep`, the events are also parsed and kept for
/// `wait(for:)` (started and published always are). Parsing costs the benchmark's CPU, which an
/// exchange benchmark shares with its initiator, so it keeps only what it uses.
final class NodeProcess: @unchecked Sendable {
    let child: ChildProcess
    let keep: Bool
    private let lock = NSLock()
    private var events: [(at: UInt64, json: [String: Any])] = []
    private var readAt: [String: [UInt64]] = [:]

    init(_ argv: [String], environment: [String: String] = ProcessInfo.processInfo.environment, log: String, keep: Bool = true) throws {
        child = try ChildProcess(argv, environment: environment, log: log, pipes: true)
        self.keep = keep
        // Time-stamped on the reading thread, as the line arrives.
        child.readLines { [weak self] line in self?.received(line, at: now()) }
    }

    private func received(_ line: String, at: UInt64) {
        // Lines begin {"v":1,"event":"NAME", (docs/JSONL.md): count without parsing.
        var name = "?"
        if let r = line.range(of: "\"event\":\"") {
            let rest = line[r.upperBound...]
            if let end = rest.firstIndex(of: "\"") { name = String(rest[..<end]) }
        }
        var parsed: [String: Any]?
        if keep || name == "started" || name == "published", let data = line.data(using: .utf8) {
            parsed = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        }
        lock.lock()
        readAt[name, default: []].append(at)
        if let parsed { events.append((at, parsed)) }
        lock.unlock()
    }

    func count(_ event: String) -> Int {
        lock.lock()
        defer { lock.unlock() }
        return readAt[event]?.count ?? 0
    }

    /// Waits up to `timeout` seconds for a kept event matching `predicate`.
    func wait(for what: String, timeout: TimeInterval = 30, _ predicate: @escaping ([String: Any]) -> Bool) throws -> (at: UInt64, json: [String: Any]) {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            lock.lock()
            let hit = events.first { predicate($0.json) }
            lock.unlock()
            if let hit { return hit }
            guard child.isRunning else { throw BenchError("\(child.argv.dropFirst().first ?? "the node") exited before \(what)") }
            usleep(1000)
        }
        throw BenchError("no \(what) within \(Int(timeout)) s")
    }

    /// When the `n`-th (1-based) line of `event` was read; waits up to `timeout` seconds for it.
    func waitForNth(_ event: String, _ n: Int, timeout: TimeInterval = 30) throws -> UInt64 {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            lock.lock()
            let times = readAt[event] ?? []
            lock.unlock()
            if times.count >= n { return times[n - 1] }
            guard child.isRunning else { throw BenchError("\(child.argv.dropFirst().first ?? "the node") exited before \(event) #\(n)") }
            usleep(200)
        }
        throw BenchError("no \(event) #\(n) within \(Int(timeout)) s")
    }

    func stop() { _ = child.stop(after: 5) }
}

/// The port and DID from a node's `started` line.
func waitForStarted(_ node: NodeProcess) throws -> (port: Int, did: String) {
    let started = try node.wait(for: "the started line") { $0["event"] as? String == "started" }
    guard let port = started.json["port"] as? Int, let did = started.json["did"] as? String else {
        throw BenchError("a started line without port or did: \(started.json)")
    }
    return (port, did)
}
