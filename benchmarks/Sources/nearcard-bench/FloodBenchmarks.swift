import Foundation
import NearcardModel
import NearcardNode
import NearcardProcess
import NearcardProtocol
import NearcardStore

#if canImport(Glibc)
    import Glibc
#endif

/// Issue 36.2: honest exchanges with a node that a half-open flood is trying to fill. `nearcard bot`
/// (release build, accepting everyone) at its default limits — 256 connections, 8 sessions and 120
/// connections a minute per address; the flood (Tests/Interop/flood.py --sustain) keeps 8 half-open
/// sessions (a real message 1, then silence) open from each of N loopback addresses (127.0.1.x) and
/// reopens each the moment the node closes it. Meanwhile one honest client (127.0.0.1, in this
/// process) makes `tries` exchanges one after another. The floor is the same node idle, in the same
/// run: a fresh bot per row, so no row inherits another's rate buckets.
func floodBenchmark(floods: [Int] = [0, 8, 32, 64, 128], tries: Int = 20) async throws -> String {
    raiseFileLimit()
    let scratch = try Scratch("flood")
    let exe = try nearcardExecutable()
    let root = URL(fileURLWithPath: FileManager.default.currentDirectoryPath).deletingLastPathComponent()
    let flooder = root.appendingPathComponent("Tests/Interop/flood.py").path
    let policy = scratch.root + "/policy.json"
    try #"{"version": 1, "accept": "everyone", "knownContact": "update"}"#.write(toFile: policy, atomically: true, encoding: .utf8)
    let botHome = try scratch.home("Flooded Bot")
    let client = try scratch.service("Honest Visitor")

    struct Row {
        let floods: Int
        let succeeded: Int
        let busy: Int
        let latencies: [Double]
        /// The flood's connections opened, and closed by the node to make room or for being late.
        let opened: Int?
        let closed: Int?
    }
    var rows: [Row] = []
    for n in floods {
        let bot = try NodeProcess(
            [exe, "bot", "--policy", policy, "--home", botHome.path, "--port", "0", "--no-discovery"],
            log: scratch.root + "/bot-\(n).log", keep: false)
        let started = try waitForStarted(bot)
        let target = loopbackTarget(port: started.port, did: started.did)
        var flood: ChildProcess?
        let floodLog = scratch.root + "/flood-\(n).log"
        if n > 0 {
            let sources = (1...n).map { "127.0.\(1 + ($0 - 1) / 250).\(1 + ($0 - 1) % 250)" }.joined(separator: ",")
            flood = try ChildProcess(
                [
                    "/usr/bin/python3", flooder, "127.0.0.1", "\(started.port)", "--sources", sources, "--sustain", "600", "--per-source", "8", "--reconnect",
                    "0",
                ],
                log: floodLog, pipes: false)
            // Long enough for the flood to fill the node (and every address to meet its rate limit).
            try await Task.sleep(nanoseconds: 5_000_000_000)
        }
        var ok = 0
        var busy = 0
        var latencies: [Double] = []
        for _ in 0..<tries {
            let t0 = now()
            let result = try? await Dialer.exchange(with: target, context: client, consent: client.consent)
            let elapsed = Double(now() - t0)
            switch result {
            case .completed?, .unconfirmed?:
                ok += 1
                latencies.append(elapsed)
            case .failed(let error, _, _, _)? where error.code == .busy: busy += 1
            default: break
            }
        }
        // SIGTERM: the flood stops within a second and prints what the node did with its connections.
        _ = flood?.stop(after: 5)
        bot.stop()
        let report = (try? String(contentsOfFile: floodLog, encoding: .utf8))?.split(separator: "\n").last { $0.hasPrefix("{") }
        let tally = report.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Int] } ?? [:]
        rows.append(Row(floods: n, succeeded: ok, busy: busy, latencies: latencies, opened: tally["opened"], closed: tally["closedByNode"]))
    }
    let idle = rows.first { $0.floods == 0 }.map { median($0.latencies) } ?? .nan
    var out =
        "| flooding addresses (8 half-open each) | flood connections opened / closed by the node | honest exchanges completed | refused busy | latency median / p90 | ÷ the idle node's median |\n|---|---|---|---|---|---|\n"
    for r in rows {
        let sorted = r.latencies.sorted()
        let p90 = sorted.isEmpty ? .nan : sorted[min(sorted.count - 1, Int(Double(sorted.count) * 0.9))]
        let m = r.latencies.isEmpty ? .nan : median(r.latencies)
        out +=
            "| \(r.floods == 0 ? "none (the floor)" : "\(r.floods)") | \(r.opened.map { "\($0) / \(r.closed ?? 0)" } ?? "–") | \(r.succeeded) of \(tries) | \(r.busy) | \(r.latencies.isEmpty ? "–" : "\(format(m)) / \(format(p90))") | \(r.floods == 0 ? "1×" : "\(format2(m / idle))×") |\n"
    }
    out +=
        "\nThe node's defaults: 256 connections, 8 sessions in progress and 120 new connections a minute per address. "
    out += "Each flooding address wants 8 half-open sessions (so 32 addresses alone would hold every slot without a fair share); "
    out += "the honest client dials from 127.0.0.1, one exchange after another, after the flood has run 5 s. Both sides on this machine's 2 cores.\n"
    return out
}
