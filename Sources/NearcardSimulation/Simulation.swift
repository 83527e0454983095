public import Foundation
public import NearcardCrypto
import NearcardModel
import NearcardProcess
import NearcardStore

#if canImport(Glibc)
    import Glibc
#endif

/// `nearcard simulate`: N real nodes (separate processes, each with its own home and port) on this
/// machine, driven through their JSON-lines interface: they discover each other over DNS-SD and
/// exchange cards by a topology, and the run is summarised.
public final class Simulation: @unchecked Sendable {
    public enum Mode: String, Sendable {
        /// All nodes in one private namespace whose avahi-daemon uses its loopback.
        case loopback
        /// Each node in its own namespace with its own avahi-daemon, on one bridge.
        case netns
        /// No namespaces and no discovery: nodes dial each other at 127.0.0.1:PORT.
        case direct
    }

    public enum Topology: String, Sendable, CaseIterable {
        /// Every pair once per round.
        case all
        /// Each node with the next (n−1 with 0).
        case ring
        /// Node 0 with every other.
        case star
    }

    public struct Options: Sendable {
        public var peers: Int
        public var rounds = 1
        public var mode = Mode.loopback
        public var topology = Topology.all
        /// Exchanges in flight at once, over the whole simulation.
        public var concurrency = 8
        /// The whole run (set-up, discovery, exchanges) must finish within this; what is left fails as `deadline`.
        public var deadline: TimeInterval = 300
        /// How long discovery may take before the exchanges start anyway: 60 s, the target for 500 nodes
        /// on one machine (docs/PERFORMANCE.md, "Crowds").
        public var discoveryTimeout: TimeInterval = 60
        /// The `nearcard` executable the nodes run.
        public var executable: String
        /// Keep the work directory (homes, logs) afterwards.
        public var keep = false
        /// Seconds the nodes stay up after the exchanges, idle, while their cost is measured (0: none).
        public var idle: TimeInterval = 0
        /// A conference: this many bots (`nearcard bot --private`, a fleet sharing one book, showing one
        /// card "Nearcard Booth"), and every peer exchanges with one of them by the instance name it
        /// announces (round robin) instead of following `topology`. 0: no bots.
        public var bots = 0
        /// The fleet's book (a PostgreSQL URL); nil: a throw-away server started for the run (`PostgresLab`).
        public var botStore: String?

        public init(peers: Int, executable: String) {
            self.peers = peers
            self.executable = executable
        }
    }

    public struct Report: Sendable {
        public var options: Options
        public var attempts = 0
        public var successes = 0
        public var failures: [String: Int] = [:]
        public var latenciesMs: [Double] = []
        public var discoveryMs: Double?
        public var undiscovered = 0
        /// Nodes that never said they were announced (`published`) by the end of discovery.
        public var unannounced = 0
        public var setupSeconds = 0.0
        public var exchangeSeconds = 0.0
        public var wallSeconds = 0.0
        public var contactsStored = 0
        public var contactsExpected = 0
        /// With bots: the contacts in the fleet's shared book, and how many there should be (one for each
        /// peer that exchanged with any bot, however many bots it met).
        public var fleetContacts = 0
        public var fleetContactsExpected = 0
        public var workDirectory: String?
        /// What the nodes said of each other's connections: probe summaries (`connections.probed`) and
        /// refusals (`rate-limited`), over every node; a crowd of honest nodes makes none.
        public var probeSummaries = 0
        public var refusals = 0
        /// The distinct addresses the nodes listened on (each its own, as on a LAN).
        public var addresses = 0
        /// What the crowd cost while idle (`Options.idle`), nil when not measured.
        public var idle: Idle?

        public struct Idle: Sendable {
            public var seconds: Double
            /// CPU (user + system) each node used, in ms per minute: the median and the largest.
            public var cpuMsPerNodePerMinute: (median: Double, max: Double)
            /// TCP connections each node received per minute (sockets in TIME_WAIT naming it at the end,
            /// which Linux keeps 60 s): the largest, and all nodes together.
            public var connectionsPerNodePerMinute: (max: Int, total: Int)
        }

        public func percentile(_ p: Double) -> Double? {
            guard !latenciesMs.isEmpty else { return nil }
            let s = latenciesMs.sorted()
            let rank = Int((p / 100 * Double(s.count)).rounded(.up)) - 1
            return s[min(max(rank, 0), s.count - 1)]
        }

        public var json: JSONValue {
            func ms(_ v: Double?) -> JSONValue { v.map { .number(($0 * 10).rounded() / 10) } ?? .null }
            return [
                "peers": .number(Double(options.peers)), "rounds": .number(Double(options.rounds)),
                "topology": .string(options.bots > 0 ? "conference" : options.topology.rawValue), "mode": .string(options.mode.rawValue),
                "bots": .number(Double(options.bots)),
                "fleetContacts": options.bots > 0 ? .number(Double(fleetContacts)) : .null,
                "fleetContactsExpected": options.bots > 0 ? .number(Double(fleetContactsExpected)) : .null,
                "attempts": .number(Double(attempts)), "successes": .number(Double(successes)),
                "failures": .object(JSONObject(failures.sorted { $0.key < $1.key }.map { ($0.key, JSONValue.number(Double($0.value))) })),
                "latencyMs": ["p50": ms(percentile(50)), "p95": ms(percentile(95)), "p99": ms(percentile(99)), "max": ms(latenciesMs.max())],
                "discoveryMs": ms(discoveryMs), "undiscoveredPeers": .number(Double(undiscovered)),
                "unannouncedNodes": .number(Double(unannounced)),
                "setupSeconds": .number((setupSeconds * 100).rounded() / 100), "exchangeSeconds": .number((exchangeSeconds * 100).rounded() / 100),
                "wallSeconds": .number((wallSeconds * 100).rounded() / 100),
                "exchangesPerSecond": .number(exchangeSeconds > 0 ? (Double(successes) / exchangeSeconds * 10).rounded() / 10 : 0),
                "contactsStored": .number(Double(contactsStored)), "contactsExpected": .number(Double(contactsExpected)),
                "workDirectory": workDirectory.map { .string($0) } ?? .null,
                "probeSummaries": .number(Double(probeSummaries)), "refusals": .number(Double(refusals)),
                "addresses": .number(Double(addresses)),
                "idle": idle.map { i -> JSONValue in
                    [
                        "seconds": .number(i.seconds),
                        "cpuMsPerNodePerMinute": ["median": ms(i.cpuMsPerNodePerMinute.median), "max": ms(i.cpuMsPerNodePerMinute.max)],
                        "connectionsPerNodePerMinute": [
                            "max": .number(Double(i.connectionsPerNodePerMinute.max)), "total": .number(Double(i.connectionsPerNodePerMinute.total)),
                        ],
                    ]
                } ?? .null,
            ]
        }
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// One node: its process, and what it has said.
    final class Node: @unchecked Sendable {
        let index: Int
        let home: String
        let process: ChildProcess
        let lock = NSLock()
        var port: Int?
        /// Its display name: unique in a simulation, announced in default mode, and how peers name it
        /// (discovery carries no fingerprint).
        var name = ""
        var did = ""
        /// The instance name it last announced itself under (`published`): how a bot is named.
        var instance: String?
        var found: Set<String> = []
        /// The peers it must see before the exchanges (those it will dial), and how many of them it
        /// has not seen yet, kept as sightings come so that waiting for discovery costs nothing.
        var needs: Set<String> = []
        var missing = 0
        var exited = false
        var replies: [String: CheckedContinuation<JSONValue, Never>] = [:]
        var early: [String: JSONValue] = [:]
        var address: String?
        var probeSummaries = 0
        var refusals = 0
        /// Whether the node said it is on the LAN (`published`), and the first error it said.
        var published = false
        var firstError: String?

        init(index: Int, home: String, process: ChildProcess) {
            self.index = index
            self.home = home
            self.process = process
        }

        func reply(for ref: String) async -> JSONValue {
            await withTaskCancellationHandler {
                await withCheckedContinuation { c in
                    let ready = lock.withLock { () -> JSONValue? in
                        if let r = early.removeValue(forKey: ref) { return r }
                        if exited { return ["ok": false, "error": ["code": "node_exited", "message": "the node exited"]] }
                        replies[ref] = c
                        return nil
                    }
                    if let ready { c.resume(returning: ready) }
                }
            } onCancel: {
                // The run was interrupted: stop waiting (a late reply is dropped).
                let c = lock.withLock { replies.removeValue(forKey: ref) }
                c?.resume(returning: ["ok": false, "error": ["code": "cancelled", "message": "the simulation was interrupted"]])
            }
        }

        func deliver(_ line: JSONValue) {
            guard let ref = line["ref"]?.stringValue else { return }
            let c = lock.withLock { () -> CheckedContinuation<JSONValue, Never>? in
                if let c = replies.removeValue(forKey: ref) { return c }
                early[ref] = line
                return nil
            }
            c?.resume(returning: line)
        }

        func ended() {
            let waiting = lock.withLock { () -> [CheckedContinuation<JSONValue, Never>] in
                exited = true
                defer { replies = [:] }
                return Array(replies.values)
            }
            for c in waiting { c.resume(returning: ["ok": false, "error": ["code": "node_exited", "message": "the node exited"]]) }
        }
    }

    public let options: Options
    let progress: @Sendable (String) -> Void
    let work: String
    let tag: String
    private var lab: NetLab?
    private var postgres: PostgresLab?
    private var nodes: [Node] = []
    private let cleanupLock = NSLock()
    private var cleaned = false

    public init(options: Options, progress: @escaping @Sendable (String) -> Void) {
        self.options = options
        self.progress = progress
        tag = "ncs\(getpid())"
        work = FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-sim-\(getpid())-\(UUID().uuidString.prefix(8))").path
    }

    /// Node `index`'s own address when nodes share loopback: 127.77.X.Y (loopback answers for all of
    /// 127.0.0.0/8; 127.0.0.1 itself is left to everything else on the machine).
    static func address(of index: Int) -> String { "127.77.\(index / 250).\(index % 250 + 1)" }

    /// The card name of a conference's bots (one card, in their shared book).
    public static let boothName = "Nearcard Booth"

    /// How node `j` is named in an exchange: its address without discovery; a bot by the instance name
    /// it announced; any other node by its own name. The fleet's bots share one card, so by its name
    /// they would be one name announced four times, which `exchange NAME` rightly calls ambiguous (a
    /// name is not an identity): they announce privately (`nearcard-` and 8 random hex digits, renewed
    /// with each publication, the newest of which is used) and are named by that.
    private func target(_ j: Int) -> String {
        let node = nodes[j]
        return node.lock.withLock {
            if options.mode == .direct { return "\(Self.address(of: j)):\(node.port ?? 0)" }
            return j >= options.peers ? (node.instance ?? node.name) : node.name
        }
    }

    /// The pairs (initiator, responder) of one round.
    public static func pairs(_ topology: Topology, peers n: Int) -> [(Int, Int)] {
        switch topology {
        case .all:
            // By distance first, so consecutive exchanges involve different nodes.
            var out: [(Int, Int)] = []
            for d in 1..<max(n, 1) { for i in 0..<(n - d) { out.append((i, i + d)) } }
            return out
        case .ring:
            guard n > 1 else { return [] }
            return n == 2 ? [(0, 1)] : (0..<n).map { ($0, ($0 + 1) % n) }
        case .star:
            return (1..<max(n, 1)).map { (0, $0) }
        }
    }

    public func run() async throws -> Report {
        let start = Date()
        var report = Report(options: options)
        defer { cleanUp() }
        NetLab.removeStale(prefix: "ncs")
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        if options.keep { report.workDirectory = work }

        // Set-up: identities and cards (in-process), namespaces and daemons, node processes.
        progress("Creating \(options.peers) identities…")
        for i in 0..<options.peers {
            let home = NearcardHome(path: "\(work)/node-\(i)")
            let name = "Peer \(i)"
            _ = try IdentityStore(home: home).create(name: name, passphrase: nil)
            let db = try NearcardDatabase(home: home)
            _ = try db.saveMyCard(Card(name: name, email: "peer\(i)@sim.example", company: "Simulation", title: "Node \(i)"))
            try db.saveSharingPolicy(SharingPolicy(fields: [.name, .email, .company, .title]))
        }
        // A conference's fleet: one book for every bot, holding the booth's card; each bot a home (its key).
        var fleetStore: String?
        let policyPath = "\(work)/bot-policy.json"
        if options.bots > 0 {
            if options.botStore == nil { progress("Starting a throw-away PostgreSQL server for the bots' book…") }
            let url =
                try options.botStore
                ?? { () throws -> String in
                    let server = try PostgresLab()
                    postgres = server
                    return server.url
                }()
            fleetStore = url
            let book = try NearcardDatabase(location: StoreLocation.parse(url))
            _ = try book.saveMyCard(Card(name: Self.boothName, company: "Simulation", title: "Booth"))
            try book.saveSharingPolicy(SharingPolicy(fields: [.name, .company, .title]))
            for k in 0..<options.bots {
                _ = try IdentityStore(home: NearcardHome(path: "\(work)/bot-\(k)")).create(name: Self.boothName, passphrase: nil)
            }
            try #"{"version": 1, "accept": "everyone", "knownContact": "update"}"#.write(toFile: policyPath, atomically: true, encoding: .utf8)
        }
        let everyone = options.peers + options.bots
        var spaces: [NetLab.Space?] = Array(repeating: nil, count: everyone)
        switch options.mode {
        case .direct:
            break
        case .loopback:
            if let problem = NetLab.checkPrerequisites() { throw Failure(description: problem) }
            let lab = NetLab(tag: tag, root: work, keepFiles: options.keep)
            self.lab = lab
            progress("Starting a private namespace with its own D-Bus and avahi-daemon…")
            let space = try lab.loopbackSpace()
            spaces = Array(repeating: space, count: everyone)
        case .netns:
            if let problem = NetLab.checkPrerequisites() { throw Failure(description: problem) }
            let lab = NetLab(tag: tag, root: work, keepFiles: options.keep)
            self.lab = lab
            progress("Starting \(everyone) namespaces on a bridge, each with its own D-Bus and avahi-daemon…")
            let n = everyone
            spaces = try lab.bridgedSpaces(n) { done in if done % 10 == 0 || done == n { self.progress("  \(done)/\(n) namespaces ready") } }
        }
        try Task.checkCancellation()

        progress("Starting \(options.peers) nodes\(options.bots > 0 ? " and \(options.bots) bot\(options.bots == 1 ? "" : "s")" : "")…")
        for i in 0..<everyone {
            let bot = i - options.peers
            let home = bot >= 0 ? "\(work)/bot-\(bot)" : "\(work)/node-\(i)"
            // The node limits as a LAN has them: every node has an address of its own (its namespace's,
            // or one of loopback's 127.0.0.0/8 when nodes share a namespace or none), so the per-address
            // limits count one node each, as between laptops.
            var argv =
                bot >= 0
                ? [
                    options.executable, "bot", "--policy", policyPath, "--store", fleetStore ?? "", "--node-name", "bot\(bot + 1)", "--port", "0",
                    "--private", "--home", home,
                ] : [options.executable, "listen", "--jsonl", "--accept", "all", "--port", "0", "--home", home]
            var environment = ProcessInfo.processInfo.environment
            if let space = spaces[i] {
                argv = space.prefix + argv + ["--interface", space.interface]
                environment.merge(space.environment) { $1 }
            } else {
                argv += ["--no-discovery"]
            }
            if options.mode != .netns { argv += ["--address", Self.address(of: i)] }
            let process = try ChildProcess(argv, environment: environment, log: "\(home)/node.log", pipes: true)
            let node = Node(index: i, home: home, process: process)
            nodes.append(node)
            Task.detached { [weak self] in await self?.read(node) }
        }
        let nodesUp = Date()
        while nodes.contains(where: { n in n.lock.withLock { n.port == nil && !n.exited } }) {
            // A node is up once announced: with a daemon per namespace, hundreds start at once on two cores.
            let limit = 30 + 0.3 * Double(options.peers)
            if Date().timeIntervalSince(nodesUp) > limit {
                throw Failure(description: "nodes did not start within \(Int(limit)) s (see \(work)/node-*/node.log)")
            }
            try await Task.sleep(nanoseconds: 20_000_000)
        }
        if let dead = nodes.first(where: { n in n.lock.withLock { n.exited } }) {
            let log = (try? String(contentsOfFile: "\(dead.home)/node.log", encoding: .utf8)) ?? ""
            throw Failure(description: "node \(dead.index) exited at start: \(log.split(separator: "\n").last ?? "")")
        }
        let pairs =
            options.bots > 0 ? (0..<options.peers).map { ($0, options.peers + $0 % options.bots) } : Self.pairs(options.topology, peers: options.peers)
        report.setupSeconds = Date().timeIntervalSince(start)

        // A bot is named by the instance name it announced (`target`): wait for them.
        if options.bots > 0, options.mode != .direct {
            let t0 = Date()
            while nodes.dropFirst(options.peers).contains(where: { n in n.lock.withLock { n.instance == nil && !n.exited } }) {
                if Date().timeIntervalSince(t0) > options.discoveryTimeout {
                    throw Failure(description: "the bots did not announce themselves within \(Int(options.discoveryTimeout)) s (see \(work)/bot-*/node.log)")
                }
                try await Task.sleep(nanoseconds: 20_000_000)
            }
        }

        // Discovery: every node sees the peers it will dial.
        var needs: [Int: Set<String>] = [:]
        for (i, j) in pairs { needs[i, default: []].insert(target(j)) }
        for (i, names) in needs {
            let node = nodes[i]
            node.lock.withLock {
                node.needs = names
                node.missing = names.subtracting(node.found).count
            }
        }
        if options.mode != .direct {
            progress("Discovering…")
            let t0 = Date()
            while true {
                let missing = nodes.reduce(0) { sum, node in sum + node.lock.withLock { node.missing } }
                if missing == 0 {
                    report.discoveryMs = Date().timeIntervalSince(t0) * 1000
                    progress("  every node sees the peers it needs (\(Int(report.discoveryMs!)) ms)")
                    break
                }
                if Date().timeIntervalSince(t0) > options.discoveryTimeout || Date().timeIntervalSince(start) > options.deadline {
                    report.undiscovered = missing
                    progress("  \(missing) peer sightings still missing after \(Int(options.discoveryTimeout)) s; exchanging anyway")
                    // Whom nobody could see: nodes that never said they are on the LAN, and what they said.
                    let silent = nodes.filter { n in n.lock.withLock { !n.published } }
                    report.unannounced = silent.count
                    if let first = silent.first {
                        let said = first.lock.withLock { first.firstError } ?? "no error said"
                        progress("  \(silent.count) node(s) never announced themselves on the LAN; node \(first.index): \(said)")
                    }
                    break
                }
                try await Task.sleep(nanoseconds: 20_000_000)
            }
        }

        // Exchanges, at most `concurrency` at once.
        var work: [(round: Int, i: Int, j: Int)] = []
        for r in 0..<options.rounds { for (i, j) in pairs { work.append((r, i, j)) } }
        let shape = options.bots > 0 ? "each peer with a bot" : options.topology.rawValue
        progress("Exchanging: \(work.count) exchanges (\(shape), \(options.rounds) round\(options.rounds == 1 ? "" : "s"))…")
        let t0 = Date()
        let results = try await exchange(work, deadline: start.addingTimeInterval(options.deadline))
        report.exchangeSeconds = Date().timeIntervalSince(t0)
        for r in results {
            report.attempts += 1
            if let code = r.failure {
                report.failures[code, default: 0] += 1
            } else {
                report.successes += 1
                report.latenciesMs.append(r.milliseconds)
            }
        }
        let succeededPairs = Set(results.filter { $0.failure == nil }.map { [min($0.i, $0.j), max($0.i, $0.j)] })
        // Both ends keep a contact; a fleet keeps one for each visitor in its shared book (counted apart).
        report.contactsExpected = options.bots > 0 ? succeededPairs.count : 2 * succeededPairs.count
        report.fleetContactsExpected = Set(results.filter { $0.failure == nil }.map(\.i)).count

        if options.idle > 0 {
            progress("Idle for \(Int(options.idle)) s: measuring what the crowd costs…")
            report.idle = try await measureIdle(seconds: options.idle, spaces: spaces)
        }

        // Stop the nodes, then count what they stored (both sides of every exchange).
        stopNodes()
        for node in nodes {
            node.lock.withLock {
                report.probeSummaries += node.probeSummaries
                report.refusals += node.refusals
            }
        }
        report.addresses = Set(nodes.compactMap { n in n.lock.withLock { n.address } }).count
        for node in nodes.prefix(options.peers) {
            if let db = try? NearcardDatabase(home: NearcardHome(path: node.home)), let contacts = try? db.contacts() {
                report.contactsStored += contacts.filter { $0.verificationStatus == .verified }.count
            }
        }
        if let fleetStore, let book = try? NearcardDatabase(location: StoreLocation.parse(fleetStore)), let contacts = try? book.contacts() {
            report.fleetContacts = contacts.filter { $0.verificationStatus == .verified }.count
        }
        report.wallSeconds = Date().timeIntervalSince(start)
        return report
    }

    /// CPU time (user + system, clock ticks) of a process so far, from /proc.
    static func cpuTicks(_ pid: pid_t) -> Double? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        // After the command name (stat(5)): the state is field 3, utime and stime are fields 14 and 15.
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return user + system
    }

    /// The nodes' cost while nobody exchanges: CPU per node per minute, and the connections each
    /// received (TIME_WAIT sockets naming its address and port, which Linux keeps 60 s: at most the
    /// last minute counts).
    private func measureIdle(seconds: TimeInterval, spaces: [NetLab.Space?]) async throws -> Report.Idle {
        // Each namespace's sockets once (or this one's): "LOCAL PEER" pairs in TIME_WAIT.
        func closed() -> Set<String> {
            var lines: Set<String> = []
            var seen: Set<[String]> = []
            for space in spaces {
                let prefix = space?.prefix ?? []
                guard seen.insert(prefix).inserted else { continue }
                if let (code, out) = try? ChildProcess.run(prefix + [NetLab.tool("ss"), "-Htan", "state", "time-wait"]), code == 0 {
                    for line in out.split(separator: "\n") { lines.insert(line.split(separator: " ").joined(separator: " ")) }
                }
            }
            return lines
        }
        // Those the exchanges left are not the idle crowd's.
        let earlier = closed()
        let before = nodes.map { Self.cpuTicks($0.process.pid) ?? 0 }
        try await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
        let after = nodes.map { Self.cpuTicks($0.process.pid) ?? 0 }
        let hz = Double(sysconf(Int32(_SC_CLK_TCK)))
        let perMinute = zip(before, after).map { ($1 - $0) / hz * 1000 * 60 / seconds }.sorted()
        let lines = closed().subtracting(earlier)
        var received: [Int] = []
        for node in nodes {
            let endpoint: String? = node.lock.withLock { node.port.map { "\(node.address ?? ""):\($0)" } }
            guard let endpoint else { continue }
            received.append(lines.filter { $0.split(separator: " ").contains { $0.hasSuffix(endpoint) } }.count)
        }
        let minutes = min(seconds, 60) / 60
        let perNode = received.map { Int((Double($0) / minutes).rounded()) }
        return Report.Idle(
            seconds: seconds, cpuMsPerNodePerMinute: (perMinute.isEmpty ? 0 : perMinute[perMinute.count / 2], perMinute.last ?? 0),
            connectionsPerNodePerMinute: (perNode.max() ?? 0, perNode.reduce(0, +)))
    }

    struct Outcome {
        let i: Int
        let j: Int
        let failure: String?
        let milliseconds: Double
    }

    private func exchange(_ work: [(round: Int, i: Int, j: Int)], deadline: Date) async throws -> [Outcome] {
        let total = work.count
        var results: [Outcome] = []
        var next = 0
        var lastReported = 0
        try await withThrowingTaskGroup(of: Outcome.self) { group in
            func launch() {
                let (r, i, j) = work[next]
                next += 1
                let ref = "r\(r)-\(i)-\(j)"
                let target = target(j)
                let node = nodes[i]
                group.addTask {
                    if Date() > deadline { return Outcome(i: i, j: j, failure: "deadline", milliseconds: 0) }
                    let t0 = DispatchTime.now().uptimeNanoseconds
                    let command: JSONValue = ["cmd": "exchange", "peer": .string(target), "ref": .string(ref)]
                    guard node.process.send(line: command.compactText) else { return Outcome(i: i, j: j, failure: "node_exited", milliseconds: 0) }
                    let reply = await node.reply(for: ref)
                    let ms = Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e6
                    if reply["ok"] == true { return Outcome(i: i, j: j, failure: nil, milliseconds: ms) }
                    return Outcome(i: i, j: j, failure: reply["error"]?["code"]?.stringValue ?? "unknown", milliseconds: ms)
                }
            }
            while next < min(options.concurrency, total) { launch() }
            while let outcome = try await group.next() {
                results.append(outcome)
                if next < total { launch() }
                let step = max(total / 10, 1)
                if results.count - lastReported >= step || results.count == total {
                    lastReported = results.count
                    let failed = results.filter { $0.failure != nil }.count
                    progress("  \(results.count)/\(total) done\(failed > 0 ? ", \(failed) failed" : "")")
                }
                try Task.checkCancellation()
            }
        }
        return results
    }

    /// Reads a node's JSON lines: its port and identity, the peers it finds, replies to commands.
    /// With `keep`, each line is also written to the node's `events.jsonl`, after the seconds since the
    /// node started (what a node said and when, to read after the run).
    private func read(_ node: Node) async {
        let started = Date()
        let path = "\(node.home)/events.jsonl"
        let record = options.keep && FileManager.default.createFile(atPath: path, contents: nil) ? FileHandle(forWritingAtPath: path) : nil
        defer { try? record?.close() }
        for await text in node.process.lines() {
            if let record { try? record.write(contentsOf: Data(String(format: "%.3f %@\n", Date().timeIntervalSince(started), text).utf8)) }
            guard let line = try? JSONParser.parse(text) else { continue }
            switch line["event"]?.stringValue {
            case "started":
                node.lock.withLock {
                    node.port = line["port"]?.integerValue.map(Int.init)
                    node.name = line["name"]?.stringValue ?? ""
                    node.did = line["did"]?.stringValue ?? ""
                    node.address = line["addresses"]?.arrayValue?.first?.stringValue
                }
            case "connections.probed":
                node.lock.withLock { node.probeSummaries += 1 }
            case "published":
                node.lock.withLock {
                    node.published = true
                    node.instance = line["instance"]?.stringValue
                }
            case "error", "discovery-unavailable":
                let said = line["message"]?.stringValue ?? line["reason"]?.stringValue ?? "\(line)"
                node.lock.withLock { node.firstError = node.firstError ?? said }
            case "rate-limited":
                let n = Int(line["count"]?.integerValue ?? 1)
                node.lock.withLock { node.refusals += n }
            case "peer.found":
                // Found by its announced name, or (a bot of a fleet) by its instance name.
                for name in [line["name"]?.stringValue, line["instance"]?.stringValue].compactMap({ $0 }) {
                    node.lock.withLock {
                        if node.found.insert(name).inserted && node.needs.contains(name) { node.missing -= 1 }
                    }
                }
            case "peer.lost":
                break
            case "reply":
                node.deliver(line)
            default:
                break
            }
        }
        node.ended()
    }

    private func stopNodes() {
        for n in nodes { n.process.send(line: #"{"cmd":"quit"}"#) }
        for n in nodes { n.process.stop(after: 3, signal: nil) }
    }

    /// Stops every node and daemon, deletes the namespaces and (unless kept) the work directory.
    /// Called at the end of `run`, and safe to call from a signal handler's path (Ctrl-C).
    public func cleanUp() {
        let first = cleanupLock.withLock { () -> Bool in
            defer { cleaned = true }
            return !cleaned
        }
        guard first else { return }
        for n in nodes { n.process.stop(after: 1, signal: SIGTERM) }
        lab?.tearDown()
        postgres?.stop()
        if !options.keep { try? FileManager.default.removeItem(atPath: work) }
    }
}

extension NetLab {
    /// Removes namespaces an earlier simulation left behind when it was killed (named PREFIX<pid>…,
    /// with that process gone).
    public static func removeStale(prefix: String) {
        guard geteuid() == 0, let (code, list) = try? ChildProcess.run([tool("ip"), "netns", "list"]), code == 0 else { return }
        for line in list.split(separator: "\n") {
            let name = String(line.split(separator: " ").first ?? "")
            guard name.hasPrefix(prefix) else { continue }
            let digits = name.dropFirst(prefix.count).prefix { $0.isNumber }
            guard let pid = pid_t(digits), pid != getpid(), kill(pid, 0) != 0, errno == ESRCH else { continue }
            if let (c, pids) = try? ChildProcess.run([tool("ip"), "netns", "pids", name]), c == 0 {
                for p in pids.split(whereSeparator: \.isWhitespace).compactMap({ pid_t($0) }) { kill(p, SIGKILL) }
            }
            _ = try? ChildProcess.run([tool("ip"), "netns", "del", name])
        }
    }
}
