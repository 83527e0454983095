import Foundation
import NearcardCrypto
import NearcardProcess
import NearcardSimulation
import NearcardTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A socket that reads what a process sends to `$NOTIFY_SOCKET`, as systemd's would.
final class NotifySocket: @unchecked Sendable {
    let path: String
    private let fd: Int32
    private final class Received: @unchecked Sendable {
        let lock = NSLock()
        var items: [String] = []
    }
    private let received = Received()

    init() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-notify-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        path = dir + "/notify.sock"
        let socketFD = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        fd = socketFD
        var sun = sockaddr_un()
        sun.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &sun.sun_path) { raw in for (i, b) in path.utf8.enumerated() { raw[i] = b } }
        let bound = withUnsafePointer(to: &sun) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socketFD, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0 else { throw LabError("cannot bind \(path)") }
        chmod(path, 0o777)
        Thread { [received] in
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let n = recv(socketFD, &buffer, buffer.count, 0)
                if n <= 0 { return }
                let text = String(decoding: buffer[0..<n], as: UTF8.self)
                received.lock.withLock { received.items.append(text) }
            }
        }.start()
    }

    var messages: [String] { received.lock.withLock { received.items } }

    /// Waits (up to `seconds`) for a datagram that `match` accepts.
    func wait(seconds: Double, _ match: (String) -> Bool) -> String? {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if let hit = messages.first(where: match) { return hit }
            usleep(50_000)
        }
        return nil
    }

    deinit {
        shutdown(fd, Int32(SHUT_RDWR))
        close(fd)
        try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent)
    }
}

/// Under systemd: READY and a STATUS kept current, WATCHDOG while the loops answer, and on SIGTERM
/// STOPPING, no new sessions, the one in flight finished, exit 0.
@Suite struct ServiceTests {
    func log(_ name: String) -> URL { FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-svc-\(UUID().uuidString)-\(name).log") }

    @Test func aNodeUnderSystemdReportsAndDrainsOnSIGTERM() throws {
        let lab = try Lab("sd")
        let grace = try TestPerson(name: "Grace")
        let ada = try TestPerson(name: "Ada")
        defer {
            grace.cli.cleanUp()
            ada.cli.cleanUp()
        }
        let notify = try NotifySocket()
        let node = try lab.converse(
            [
                "/usr/bin/env", "NOTIFY_SOCKET=\(notify.path)", "WATCHDOG_USEC=400000", CLI.executable.path,
                "listen", "--jsonl", "--accept", "ask", "--no-discovery", "--port", "0", "--grace", "30",
                "--home", grace.home.path,
            ], log: log("grace"))
        let lines = DiscoveryInteropTests.Lines(node)
        let started = try #require(lines.wait(seconds: 15) { $0["event"] == "started" })
        let port = Int(try #require(started["port"]?.integerValue))
        let ready = notify.wait(seconds: 5) { $0.contains("READY=1") }
        #expect(ready?.contains("STATUS=serving, 0 sessions, 0 exchanges") == true, "\(notify.messages)")
        #expect(notify.wait(seconds: 3) { $0 == "WATCHDOG=1" } != nil, "no watchdog ping at 0.4 s: \(notify.messages)")

        // Ada asks; Grace's program has not answered yet when systemd stops Grace's node.
        let dial = try lab.spawn([CLI.executable.path, "exchange", "127.0.0.1:\(port)", "--yes", "--json", "--home", ada.home.path], log: log("ada"))
        let request = try #require(lines.wait(seconds: 15) { $0["event"] == "exchange.requested" })
        #expect(notify.wait(seconds: 3) { $0.contains("STATUS=serving, 1 session,") } != nil, "\(notify.messages)")
        node.signal(SIGTERM)
        let stopping = notify.wait(seconds: 5) { $0.contains("STOPPING=1") }
        #expect(stopping?.contains("STATUS=stopping, 1 session finishing") == true, "\(notify.messages)")
        // No new sessions meanwhile: the port is closed.
        #expect(Reachable.tcp("127.0.0.1", port, inside: lab) == false)
        // The session in flight still completes, then the node exits 0.
        #expect(node.send(line: #"{"cmd":"accept","id":"\#(request["id"]?.stringValue ?? "")","ref":1}"#))
        #expect(dial.wait() == 0, "the exchange in flight was cut: \((try? String(contentsOf: log("ada"), encoding: .utf8)) ?? "")")
        #expect(node.wait() == 0)
        #expect(lines.wait(seconds: 1) { $0["event"] == "exchange.completed" } != nil)
        #expect(try ada.contacts().count == 1)
    }

    /// `ui` and `bot` run the same service group as `listen` (issue 47, one lifecycle): READY once all
    /// serves (the page bound, for ui), WATCHDOG while the loops answer, STOPPING on SIGTERM, exit 0 —
    /// and the control socket gone with them.
    @Test(arguments: ["ui", "bot"]) func everyNodeFaceIsSupervisedAlike(_ face: String) throws {
        let lab = try Lab("sd")
        let person = try TestPerson(name: "Grace")
        defer { person.cli.cleanUp() }
        let notify = try NotifySocket()
        var args = [CLI.executable.path, face, "--no-discovery", "--port", "0", "--home", person.home.path]
        if face == "ui" {
            args += ["--no-browser", "--ui-port", "7461"]
        } else {
            let policy = person.home.appendingPathComponent("policy.json")
            try #"{"version": 1, "accept": "everyone"}"#.write(to: policy, atomically: true, encoding: .utf8)
            TestAccount.give(policy.path)
            args += ["--policy", policy.path]
        }
        let output = log(face)
        let node = try lab.spawn(["/usr/bin/env", "NOTIFY_SOCKET=\(notify.path)", "WATCHDOG_USEC=400000"] + args, log: output)
        let ready = notify.wait(seconds: 15) { $0.contains("READY=1") }
        #expect(ready?.contains("STATUS=serving, 0 sessions, 0 exchanges") == true, "\(face): \(notify.messages)")
        if face == "ui" {
            // READY comes once the page answers.
            #expect(Reachable.tcp("127.0.0.1", 7461, inside: lab), "ui said READY before its page served")
        }
        #expect(notify.wait(seconds: 3) { $0 == "WATCHDOG=1" } != nil, "\(face): no watchdog ping at 0.4 s: \(notify.messages)")
        let socket = person.home.appendingPathComponent("control.sock").path
        #expect(FileManager.default.fileExists(atPath: socket))
        node.signal(SIGTERM)
        #expect(notify.wait(seconds: 5) { $0.contains("STOPPING=1") } != nil, "\(face): \(notify.messages)")
        #expect(node.wait() == 0, "\(face): \((try? String(contentsOf: output, encoding: .utf8)) ?? "")")
        #expect(!FileManager.default.fileExists(atPath: socket), "\(face) left its control socket behind")
    }
}

/// Whether a TCP connection to `host:port` inside a lab's namespace is accepted.
enum Reachable {
    /// Whether something takes a TCP connection there; `sending` writes those bytes before closing.
    static func tcp(_ host: String, _ port: Int, inside lab: Lab, sending: String? = nil) -> Bool {
        let write = sending.map { " && printf '%s' '\($0)' >&3" } ?? ""
        return (try? lab.run(["/usr/bin/timeout", "2", "/bin/bash", "-c", "exec 3<>/dev/tcp/\(host)/\(port)\(write)"]).code) == 0
    }
}

/// `--metrics`: what a bot did, as Prometheus reads it.
@Suite struct MetricsTests {
    func log(_ name: String) -> URL { FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-metrics-\(UUID().uuidString)-\(name).log") }

    @Test func aBotsMetricsMatchWhatHappened() throws {
        let lab = try Lab("mt")
        let bot = try TestPerson(name: "Booth Bot")
        let open = try TestPerson(name: "Open", card: ["--email", "open@example.org"])
        let second = try TestPerson(name: "Second", card: ["--email", "s@example.org"])
        let shy = try TestPerson(name: "Shy")
        defer { for p in [bot, open, second, shy] { p.cli.cleanUp() } }
        for p in [open, second] { try p.cli.run(["share", "--fields", "name,email"]) }
        let policy = bot.home.appendingPathComponent("policy.json")
        try #"{"version": 1, "accept": "everyone", "requireFields": ["email"]}"#.write(to: policy, atomically: true, encoding: .utf8)
        TestAccount.give(policy.path)
        let logURL = log("bot")
        _ = try lab.spawn(
            [
                CLI.executable.path, "bot", "--policy", policy.path, "--home", bot.home.path, "--port", "0", "--no-discovery",
                "--metrics", "127.0.0.1:9464", "--connections-per-minute", "4", "--log-level", "debug",
            ], log: logURL)
        let p = try Lab.startedPort(in: logURL)
        for visitor in [open, second] {
            #expect(try lab.nearcard(["exchange", "127.0.0.1:\(p)", "--yes"], home: visitor.home).code == 0)
        }
        #expect(try lab.nearcard(["exchange", "127.0.0.1:\(p)", "--yes"], home: shy.home).code == 7, "declined: no email shown")
        // Past 4 connections a minute from one address, connections are refused at once (connections that
        // send a byte: one closed before its first byte is a liveness check, counted apart, PROTOCOL.md §14).
        for _ in 0..<3 { _ = Reachable.tcp("127.0.0.1", p, inside: lab, sending: "x") }

        func scrape() throws -> [String: Double] {
            let r = try lab.run([CLI.python, CLI.packageRoot.appendingPathComponent("Tests/Interop/scrape_metrics.py").path, "http://127.0.0.1:9464/metrics"])
            #expect(r.code == 0, "\(r.stderr)")
            var out: [String: Double] = [:]
            for (k, v) in r.json.objectValue ?? [:] { out[k] = v.doubleValue }
            return out
        }
        var m = try scrape()
        // The sessions close a moment after the exchange ends; the gauge follows on the next event or sample.
        for _ in 0..<40 where m["nearcard_sessions_open{}"] != 0 {
            usleep(250_000)
            m = try scrape()
        }
        #expect(m["nearcard_exchanges_total{outcome=completed}"] == 2, "\(m)")
        #expect(m["nearcard_exchanges_total{code=declined,outcome=failed}"] == 1, "\(m.filter { $0.key.hasPrefix("nearcard_exchanges") })")
        #expect(m["nearcard_exchange_duration_seconds_count{}"] == 2)
        #expect((m["nearcard_exchange_duration_seconds_sum{}"] ?? 0) > 0)
        #expect((m["nearcard_connections_refused_total{}"] ?? 0) >= 1)
        #expect(m["nearcard_sessions_open{}"] == 0)
        #expect(m["nearcard_outbox_messages{state=queued}"] == 0 && m["nearcard_store_errors_total{}"] == 0)

        // The log (stderr, beside the JSON lines on stdout): one `TIME LEVEL EVENT key=value…` line per
        // event, facts only: no names, no card fields.
        let logLines = try String(contentsOf: logURL, encoding: .utf8).split(separator: "\n").filter { !$0.hasPrefix("{") }.map(String.init)
        let shape = #/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (trace|debug|info|notice|warning|error|critical) [a-z.-]+( [a-z_]+=("([^"\\]|\\.)*"|[^ "]+))*$/#
        for line in logLines { #expect(line.wholeMatch(of: shape) != nil, "not a log line: \(line)") }
        #expect(logLines.filter { $0.contains(" info exchange.completed ") && $0.contains(" did=did:key:") }.count == 2, "\(logLines)")
        #expect(logLines.contains { $0.contains(" notice exchange.failed ") && $0.contains(" code=declined") })
        #expect(logLines.contains { $0.contains(" debug exchange.started ") })
        #expect(logLines.contains { $0.contains(" warning rate-limited ") })
        for personal in ["Open", "Second", "Shy", "open@example.org", "s@example.org"] {
            #expect(!logLines.contains { $0.contains(personal) }, "the log shows \(personal)")
        }
    }
}

/// A bot's webhook: each completed exchange posted, signed, to a receiver that is down for a while
/// and then answers 503 once; it arrives once, with a valid signature, and never held up the exchange.
@Suite struct WebhookTests {
    func log(_ name: String) -> URL { FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-webhook-\(UUID().uuidString)-\(name).log") }

    @Test func aCompletedExchangeReachesAReceiverThatWasDown() throws {
        let lab = try Lab("wh")
        let bot = try TestPerson(name: "Booth Bot")
        let visitor = try TestPerson(name: "Ada Lovelace", card: ["--email", "ada@example.org"])
        defer {
            bot.cli.cleanUp()
            visitor.cli.cleanUp()
        }
        let secret = "s3cr3t-" + UUID().uuidString
        let secretFile = bot.home.appendingPathComponent("webhook.secret")
        try (secret + "\n").write(to: secretFile, atomically: true, encoding: .utf8)
        chmod(secretFile.path, 0o600)
        TestAccount.give(secretFile.path)
        let policy = bot.home.appendingPathComponent("policy.json")
        try #"{"version": 1, "accept": "everyone", "webhook": {"url": "http://127.0.0.1:8099/hooks/nearcard", "secretFile": "webhook.secret"}}"#
            .write(to: policy, atomically: true, encoding: .utf8)
        TestAccount.give(policy.path)
        let check = try CLI.run(executable: CLI.executable.path, ["bot", "--check", "--policy", policy.path])
        #expect(check.code == 0 && check.json["webhook"]?["url"] == "http://127.0.0.1:8099/hooks/nearcard" && !check.stdout.contains(secret))

        let logURL = log("bot")
        _ = try lab.spawn([CLI.executable.path, "bot", "--policy", policy.path, "--home", bot.home.path, "--port", "0", "--no-discovery"], log: logURL)
        let p = try Lab.startedPort(in: logURL)
        // Nothing listens at the webhook's address yet: the exchange completes all the same.
        let exchanged = try lab.nearcard(["exchange", "127.0.0.1:\(p)", "--yes", "--json"], home: visitor.home)
        #expect(exchanged.code == 0, "\(exchanged.stderr)")
        sleep(2)
        let received = FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-webhook-\(UUID().uuidString).jsonl")
        defer { try? FileManager.default.removeItem(at: received) }
        _ = try lab.spawn(
            [
                CLI.python, CLI.packageRoot.appendingPathComponent("Tests/Interop/webhook_receiver.py").path, "8099", secret,
                received.path, "--fail-first", "1",
            ], log: log("receiver"))
        func records() -> [JSONValue] {
            ((try? String(contentsOf: received, encoding: .utf8)) ?? "").split(separator: "\n").compactMap { try? JSONParser.parse(String($0)) }
        }
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline, records().isEmpty { usleep(200_000) }
        sleep(3) // time for a duplicate to show up, were there one
        let got = records()
        #expect(got.count == 1, "\(got)")
        #expect(got.first?["valid"] == true && got.first?["event"] == "exchange.completed" && got.first?["type"] == "application/json")
        #expect(got.first?["name"] == "Ada Lovelace" && got.first?["did"]?.stringValue == visitor.did && got.first?["exchanges"] == 1)
        #expect(got.first?["delivery"]?.stringValue?.count == 64)
        #expect(!((try? String(contentsOf: logURL, encoding: .utf8)) ?? "").contains(secret), "the secret is in the bot's output")
    }
}
