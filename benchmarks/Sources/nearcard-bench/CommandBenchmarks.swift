import Foundation
import NearcardProcess
import NearcardSimulation
import NearcardStore

#if canImport(Glibc)
    import Glibc
#endif

/// A home made by the binary measured (a build before a change reads only its own schema).
func commandHome(_ name: String, exe: String, in scratch: Scratch) throws -> NearcardHome {
    let home = NearcardHome(path: "\(scratch.root)/\(name.replacingOccurrences(of: " ", with: "-"))")
    let email = name.lowercased().replacingOccurrences(of: " ", with: ".") + "@bench.example"
    for args in [
        ["init", "--name", name, "--no-passphrase"], ["card", "set", "--name", name, "--email", email, "--company", "Benchmarks Ltd", "--title", "Load"],
        ["share", "--fields", "name,email,company,title"],
    ] {
        let r = try ChildProcess.capture([exe] + args + ["--home", home.path], timeout: 60)
        guard r.code == 0 else { throw BenchError("nearcard \(args[0]): \(String(decoding: r.stderr, as: UTF8.self))") }
    }
    return home
}

/// exec → exit of one command, which must succeed.
func timedCommand(_ argv: [String], stdin: [UInt8]? = nil, environment: [String: String] = ProcessInfo.processInfo.environment) throws -> (
    nanos: Double, stdout: [UInt8]
) {
    let t0 = now()
    let r = try ChildProcess.capture(argv, environment: environment, stdin: stdin, timeout: 60)
    let t = Double(now() - t0)
    guard r.code == 0 else {
        throw BenchError("\(argv.prefix(6).joined(separator: " ")) exited \(r.code): \(String(decoding: r.stderr.suffix(400), as: UTF8.self))")
    }
    return (t, r.stdout)
}

/// "Fast from Enter": the whole command, exec → exit, as a person or a script runs it, beside tools
/// measured in the same run and interleaved with it (docs/PERFORMANCE.md "Commands"):
/// - start: `nearcard --version` and `nearcard contacts` on a small book, beside Debian's
///   `/usr/bin/python3 -c pass` (and `openssl version`, for scale);
/// - one exchange: `nearcard exchange 127.0.0.1:P --yes` against a bot, beside `openssl s_client`
///   making a mutual-TLS 1.3 handshake (P-256 certificates, `-verify_return_error`) and sending the same
///   card (the contact as `exchange --json` printed it) to `s_server`;
/// - a script's loop: `loop` exchanges in a row, beside `loop` s_client runs.
/// `NEARCARD=PATH` measures another binary (a build before a change, for the before/after table).
func commandBenchmark(rounds: Int = 31, loop: Int = 100) async throws -> String {
    let exe = try nearcardExecutable()
    let scratch = try Scratch("command")
    func home(_ name: String) throws -> NearcardHome { try commandHome(name, exe: exe, in: scratch) }
    let botHome = try home("Bot Command")
    let me = try home("Ada Command")
    let policy = scratch.root + "/policy.json"
    try #"{"version": 1, "accept": "everyone", "knownContact": "update"}"#.write(toFile: policy, atomically: true, encoding: .utf8)
    let bot = try NodeProcess(
        // One address dials them all: the per-address rate (120 a minute by default) would refuse a fast run.
        [exe, "bot", "--policy", policy, "--home", botHome.path, "--port", "0", "--no-discovery", "--connections-per-minute", "100000"],
        log: scratch.root + "/bot.log", keep: false)
    defer { bot.stop() }
    let port = try waitForStarted(bot).port
    let tls = try TLSReference(directory: scratch.root)
    defer { tls.stop() }
    let python = "/usr/bin/python3"
    guard FileManager.default.isExecutableFile(atPath: python) else { throw BenchError("\(python) is not installed: apt-get install python3") }

    func timed(_ argv: [String], stdin: [UInt8]? = nil) throws -> (nanos: Double, stdout: [UInt8]) { try timedCommand(argv, stdin: stdin) }
    let exchange = [exe, "exchange", "127.0.0.1:\(port)", "--yes", "--home", me.path]
    // The card s_client sends: what one exchange brought (the contact, as `exchange --json` prints it).
    let first = try timed(exchange + ["--json"])
    var card = first.stdout
    while card.last == UInt8(ascii: "\n") { card.removeLast() }
    let cardLine = card.filter { $0 != UInt8(ascii: "\n") } + Array("\nCLOSE\n".utf8)
    let d = tls.directory
    let sClient = [
        tls.openssl, "s_client", "-connect", "127.0.0.1:\(tls.port)", "-cert", "\(d)/client.pem", "-key", "\(d)/client.key", "-CAfile",
        "\(d)/ca.pem", "-verify_return_error", "-tls1_3", "-quiet", "-ign_eof",
    ]

    var samples: [String: [Double]] = [:]
    let commands: [(String, [String])] = [
        ("python", [python, "-c", "pass"]), ("openssl", [tls.openssl, "version"]), ("version", [exe, "--version"]),
        ("contacts", [exe, "contacts", "--home", me.path]), ("exchange", exchange), ("s_client", sClient),
    ]
    for _ in 0..<rounds {
        for (name, argv) in commands {
            samples[name, default: []].append(try timed(argv, stdin: name == "s_client" ? cardLine : nil).nanos)
        }
    }
    // A script's loop, in alternating blocks of ten so both see the same machine.
    var loopNanos: [String: Double] = ["exchange": 0, "s_client": 0]
    for _ in 0..<max(1, loop / 10) {
        for name in ["exchange", "s_client"] {
            let t0 = now()
            for _ in 0..<10 { _ = try timed(name == "exchange" ? exchange : sClient, stdin: name == "s_client" ? cardLine : nil) }
            loopNanos[name, default: 0] += Double(now() - t0)
        }
    }
    let m = samples.mapValues(median)
    func row(_ what: String, _ ours: Double, _ reference: String, _ theirs: Double, target: String) -> String {
        "| \(what) | \(format(ours)) | \(reference): \(format(theirs)) | \(format2(ours / theirs))× | \(target) |\n"
    }
    var out = "| command (exec → exit) | Nearcard (median) | reference (median, same run) | ratio | target |\n|---|---|---|---|---|\n"
    out += row("`nearcard --version`", m["version"]!, "`python3 -c pass`", m["python"]!, target: "≤ 0.7×")
    out += row("`nearcard contacts` (1 contact)", m["contacts"]!, "`python3 -c pass`", m["python"]!, target: "≤ 0.7×")
    out += row("`openssl version` (for scale)", m["openssl"]!, "`python3 -c pass`", m["python"]!, target: "—")
    out += row(
        "`nearcard exchange 127.0.0.1:P --yes` (card \(card.count) bytes)", m["exchange"]!, "`openssl s_client` mutual TLS 1.3 + the card", m["s_client"]!,
        target: "≤ 2.5×")
    let n = max(1, loop / 10) * 10
    out += row("\(n) exchanges in a loop (total)", loopNanos["exchange"]!, "\(n) `s_client` runs", loopNanos["s_client"]!, target: "≤ 2×")
    out += "\nMedians of \(rounds) interleaved rounds; \(exe). The bot (`bot --no-discovery`, policy: accept everyone) answers every exchange.\n"
    return out
}

/// The commands that find peers, on a LAN of their own (a network namespace with its own avahi-daemon
/// on `lo`), with 1, 10 and 50 nodes announced (`listen --accept all`):
/// - `nearcard peers --json`, exec → exit (it must list every node);
/// - `exchange NAME --yes` beside `exchange HOST:PORT --yes` to the same node, exec → that node's
///   `exchange.requested` line (the dial is what differs: a name is looked up in what avahi-daemon
///   holds, then resolved);
/// - the same for a node announced `--private` that is already a contact (recognised by its presence
///   tag, PROTOCOL.md §3), with every node announced.
/// Every command runs through `ip netns exec` (a few ms, in both columns alike).
func commandDiscoveryBenchmark(sizes: [Int] = [1, 10, 50], rounds: Int = 11) async throws -> String {
    if let problem = NetLab.checkPrerequisites() { throw BenchError(problem) }
    let exe = try nearcardExecutable()
    let scratch = try Scratch("command-lan")
    NetLab.removeStale(prefix: "ncd")
    let lab = NetLab(tag: "ncd\(getpid())", root: scratch.root)
    defer { lab.tearDown() }
    let space = try lab.loopbackSpace()
    let env = ProcessInfo.processInfo.environment.merging(space.environment) { $1 }
    let me = try commandHome("Ada Finder", exe: exe, in: scratch)
    var nodes: [NodeProcess] = []
    defer { for n in nodes { n.stop() } }
    func start(_ name: String, _ extra: [String] = []) throws -> (node: NodeProcess, port: Int) {
        let home = try commandHome(name, exe: exe, in: scratch)
        let node = try NodeProcess(
            // One address dials them all: the per-address rate (120 a minute by default) would refuse a fast run.
            space.prefix + [
                exe, "listen", "--jsonl", "--accept", "all", "--home", home.path, "--port", "0", "--interface", "lo", "--connections-per-minute", "100000",
            ] + extra,
            environment: env, log: scratch.root + "/\(name.replacingOccurrences(of: " ", with: "-")).log")
        nodes.append(node)
        let port = try waitForStarted(node).port
        _ = try node.wait(for: "the published line of \(name)", timeout: 30) { $0["event"] as? String == "published" }
        return (node, port)
    }
    let target = try start("Perf Target")
    var requested = 0
    /// exec → the target's next exchange.requested, for one `exchange` command.
    func toRequested(_ node: NodeProcess, _ peer: String, count: inout Int) throws -> Double {
        let t0 = now()
        _ = try timedCommand(space.prefix + [exe, "exchange", peer, "--yes", "--home", me.path], environment: env)
        count += 1
        return Double(try node.waitForNth("exchange.requested", count, timeout: 10) - t0)
    }
    let browse = "/usr/bin/avahi-browse"
    guard FileManager.default.isExecutableFile(atPath: browse) else { throw BenchError("avahi-browse is not installed: apt-get install avahi-utils") }
    var out =
        "| nodes announced | `peers --json` exec → exit (median, max) | `avahi-browse -rtp` exec → exit (Avahi's own client: browse, resolve each, exit when the cache is told) | `exchange NAME` exec → requested | `exchange HOST:PORT` exec → requested | NAME ÷ HOST:PORT |\n|---|---|---|---|---|---|\n"
    for n in sizes {
        while nodes.count < n { _ = try start("Crowd \(nodes.count)") }
        // Every announcement reached the daemon before the first `peers`.
        try await Task.sleep(nanoseconds: 1_000_000_000)
        var peers: [Double] = []
        var avahiBrowse: [Double] = []
        var byName: [Double] = []
        var byAddress: [Double] = []
        for _ in 0..<rounds {
            let listed = try timedCommand(space.prefix + [exe, "peers", "--json", "--home", me.path], environment: env)
            let count = (try? JSONSerialization.jsonObject(with: Data(listed.stdout)) as? [Any])?.count ?? -1
            guard count >= n else { throw BenchError("peers listed \(count) of \(n) announced nodes") }
            peers.append(listed.nanos)
            avahiBrowse.append(try timedCommand(space.prefix + [browse, "-r", "-t", "-p", "_nearcard._tcp"], environment: env).nanos)
            byName.append(try toRequested(target.node, "Perf Target", count: &requested))
            byAddress.append(try toRequested(target.node, "127.0.0.1:\(target.port)", count: &requested))
        }
        out +=
            "| \(n) | \(format(median(peers))), \(format(peers.max()!)) | \(format(median(avahiBrowse))) | \(format(median(byName))) | \(format(median(byAddress))) | \(format2(median(byName) / median(byAddress)))× |\n"
    }
    // A private node already a contact: its instance name is random; `exchange NAME` finds it by its tag.
    let hidden = try start("Perf Hidden", ["--private"])
    var hiddenCount = 0
    _ = try toRequested(hidden.node, "127.0.0.1:\(hidden.port)", count: &hiddenCount)
    try await Task.sleep(nanoseconds: 1_000_000_000)
    var byName: [Double] = []
    var byAddress: [Double] = []
    for _ in 0..<rounds {
        byName.append(try toRequested(hidden.node, "Perf Hidden", count: &hiddenCount))
        byAddress.append(try toRequested(hidden.node, "127.0.0.1:\(hidden.port)", count: &hiddenCount))
    }
    out +=
        "| \(nodes.count), the peer `--private` and a contact | — | — | \(format(median(byName))) | \(format(median(byAddress))) | \(format2(median(byName) / median(byAddress)))× |\n"
    // A node running on the dialler's home: `exchange` is that node's (the control socket), which already
    // knows the LAN — no D-Bus connection or browse of the command's own (docs/JSONL.md).
    let mine = try NodeProcess(
        space.prefix + [exe, "listen", "--jsonl", "--accept", "all", "--home", me.path, "--port", "0", "--interface", "lo"], environment: env,
        log: scratch.root + "/Ada-Finder.log")
    nodes.append(mine)
    _ = try waitForStarted(mine)
    _ = try mine.wait(for: "Perf Target on the dialler's node", timeout: 30) {
        $0["event"] as? String == "peer.found" && $0["name"] as? String == "Perf Target"
    }
    var viaName: [Double] = []
    var viaAddress: [Double] = []
    for _ in 0..<rounds {
        viaName.append(try toRequested(target.node, "Perf Target", count: &requested))
        viaAddress.append(try toRequested(target.node, "127.0.0.1:\(target.port)", count: &requested))
    }
    out +=
        "| \(nodes.count - 1), a node running on the dialler's home | — | — | \(format(median(viaName))) | \(format(median(viaAddress))) | \(format2(median(viaName) / median(viaAddress)))× |\n"
    out += "\nMedians of \(rounds) rounds, interleaved; \(exe). Targets: `peers` ≤ 0.5 s; NAME ≤ 1.3× HOST:PORT (with a node running on the dialler's home).\n"
    return out
}
