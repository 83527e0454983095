import Foundation
import NearcardProcess
import NearcardStore

#if canImport(Glibc)
    import Glibc
#endif

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
    // Homes made by the binary measured (a build before a change reads only its own schema).
    func home(_ name: String) throws -> NearcardHome {
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

    /// exec → exit of one command, which must succeed.
    func timed(_ argv: [String], stdin: [UInt8]? = nil) throws -> (nanos: Double, stdout: [UInt8]) {
        let t0 = now()
        let r = try ChildProcess.capture(argv, stdin: stdin, timeout: 60)
        let t = Double(now() - t0)
        guard r.code == 0 else {
            throw BenchError("\(argv.prefix(3).joined(separator: " ")) exited \(r.code): \(String(decoding: r.stderr.suffix(400), as: UTF8.self))")
        }
        return (t, r.stdout)
    }
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
