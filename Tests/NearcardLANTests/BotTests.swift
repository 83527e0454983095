import Foundation
import NearcardCrypto
import NearcardStore
import NearcardTestSupport
import Testing

/// Programs as users: a bot and an operator-driven node driven entirely through JSON lines by a
/// Python script written from docs/JSONL.md, and the ready bot in examples/bot.
@Suite(.serialized) struct BotTests {
    func log(_ name: String) -> URL { FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-\(UUID().uuidString)-\(name).log") }

    @Test func aPythonScriptDrivesABotAndANodeThroughJSONLines() throws {
        let lab = try Lab("jl")
        let bot = try TestPerson(name: "Booth Bot", card: ["--company", "Nearcard"])
        let visitor = try TestPerson(name: "Visitor")
        defer {
            bot.cli.cleanUp()
            visitor.cli.cleanUp()
        }
        let policy = try bot.cli.write(
            """
            {"version": 1, "accept": "everyone", "message": "Thanks for stopping by, {name}!", "knownContact": "decline",
             "rateLimits": {"perPeer": {"count": 5, "seconds": 3600}}, "maxConcurrentSessions": 32}
            """, to: "policy.json")
        let script = CLI.packageRoot.appendingPathComponent("Tests/Interop/jsonl_driver.py").path
        let transcript = log("transcript")
        defer { try? FileManager.default.removeItem(at: transcript) }
        let r = try CLI.run(
            executable: CLI.python,
            [
                script, "--nearcard", CLI.executable.path, "--bot-home", bot.home.path,
                "--visitor-home", visitor.home.path, "--policy", policy, "--transcript", transcript.path,
                "--wrap",
            ] + lab.execPrefix)
        #expect(r.code == 0, "\(r.stderr)")
        let summary = r.json
        #expect(summary["ok"] == true)
        for event in ["started", "published", "peer.found", "exchange.completed", "message.received", "stopped"] {
            #expect(summary["botEvents"]?.arrayValue?.contains(.string(event)) == true, "bot emitted \(event)")
        }
        // What the script did is what the contact books hold (the visitor deleted the bot at the end).
        #expect(try bot.contacts().count == 1 && visitor.contacts().isEmpty)
        // Everything both nodes printed (events, replies, errors) holds none of their secret keys, in any encoding.
        let printed = try String(contentsOf: transcript, encoding: .utf8)
        #expect(printed.contains(try bot.cli.run(["id", "--json"]).json["did"]?.stringValue ?? "?"), "the transcript is the real one")
        for person in [bot, visitor] {
            for secret in try secretEncodings(home: person.home) {
                #expect(!printed.contains(secret), "a secret key of \(person.home.lastPathComponent) was printed")
            }
        }
    }

    /// The node's three secret keys as base64, base64url and hex.
    func secretEncodings(home: URL) throws -> [String] {
        let keys = try IdentityStore(home: NearcardHome(path: home.path)).unlock(passphrase: { nil })
        let secrets = [keys.p256.rawRepresentation.bytes, keys.x25519.secret.bytes, keys.ed25519.seed.bytes]
        return secrets.flatMap { s in
            [Base64.encode(s), Base64.urlEncode(s), s.map { String(format: "%02x", $0) }.joined()].map { String($0.prefix(24)) }
        }
    }

    /// examples/bot as shipped: run-bot.sh makes the identity and card, checks the policy and serves;
    /// its requireFields turns away a visitor who hides their email, and takes one who shows it.
    @Test func theExampleBotServesAndEnforcesItsPolicy() throws {
        let lab = try Lab("eb")
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-examplebot-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: home) }
        let logURL = log("bot")
        let script = CLI.packageRoot.appendingPathComponent("examples/bot/run-bot.sh").path
        _ = try lab.spawn(["env", "NEARCARD=\(CLI.executable.path)", "PORT=0", script, home.path], log: logURL)
        let p = try Lab.startedPort(in: logURL)

        let shy = try TestPerson(name: "Shy Visitor", card: ["--email", "shy@example.org"])
        let open = try TestPerson(name: "Open Visitor", card: ["--email", "open@example.org"])
        defer {
            shy.cli.cleanUp()
            open.cli.cleanUp()
        }
        try shy.cli.run(["share", "--fields", "name"])
        try open.cli.run(["share", "--fields", "name,email"])
        let refused = try lab.nearcard(["exchange", "127.0.0.1:\(p)", "--yes"], home: shy.home)
        #expect(refused.code == 7 && refused.stderr.contains("declined") && refused.stderr.contains("email"), "\(refused.stderr)")
        #expect(refused.stdout.components(separatedBy: "Check code").count == 2, "the check code is shown once: \(refused.stdout)")
        #expect(try shy.contacts().isEmpty)
        let ok = try lab.nearcard(["exchange", "127.0.0.1:\(p)", "--yes", "--json"], home: open.home)
        #expect(ok.code == 0, "\(ok.stderr)")
        #expect(ok.json["theirEphemeralMessage"]?.stringValue?.hasPrefix("Thanks for stopping by the Nearcard booth, Open Visitor!") == true)
        #expect(ok.json["company"] == "Nearcard")
        let lines = try String(contentsOf: logURL, encoding: .utf8).split(separator: "\n").compactMap { try? JSONParser.parse(String($0)) }
        #expect(lines.contains { $0["event"] == "exchange.completed" && $0["contact"]?["name"] == "Open Visitor" })
        #expect(lines.contains { $0["event"] == "exchange.failed" && $0["code"] == "declined" })
    }

    /// The systemd unit runs the bot with the example's policy path, and the example policy is valid.
    @Test func theSystemdUnitNamesTheExamplePolicy() throws {
        let unit = try String(contentsOf: CLI.packageRoot.appendingPathComponent("examples/bot/nearcard-bot.service"), encoding: .utf8)
        #expect(unit.contains("ExecStart=/usr/local/bin/nearcard bot --policy /etc/nearcard-bot/policy.json"))
        #expect(unit.contains("Environment=NEARCARD_HOME=/var/lib/nearcard-bot") && unit.contains("StandardInput=null"))
        let check = try CLI.run(
            executable: CLI.executable.path, ["bot", "--check", "--policy", CLI.packageRoot.appendingPathComponent("examples/bot/policy.json").path])
        #expect(check.code == 0 && check.json["requireFields"] == ["email"])
        // What --check prints is a policy in its own right, read back as the same one.
        let echo = FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-policy-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: echo) }
        try check.stdout.write(to: echo, atomically: true, encoding: .utf8)
        _ = chmod(echo.path, 0o644)
        let again = try CLI.run(executable: CLI.executable.path, ["bot", "--check", "--policy", echo.path])
        #expect(again.code == 0 && again.json == check.json, "\(again.stderr)")
        #expect(check.json["version"] == 1 && check.json["maxConcurrentSessions"]?.integerValue != nil, "defaults filled in: \(check.stdout)")
    }

    /// systemd reads the unit without complaint (where systemd-analyze is installed).
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-analyze"), "systemd-analyze checks the unit"))
    func theSystemdUnitIsValid() throws {
        let unit = try String(contentsOf: CLI.packageRoot.appendingPathComponent("examples/bot/nearcard-bot.service"), encoding: .utf8)
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-unit-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let local = dir.appendingPathComponent("nearcard-bot.service")
        try unit.replacingOccurrences(of: "/usr/local/bin/nearcard", with: CLI.executable.path).write(to: local, atomically: true, encoding: .utf8)
        let r = try CLI.run(executable: "/usr/bin/systemd-analyze", ["verify", local.path])
        #expect(r.code == 0 && !r.stderr.contains("nearcard-bot.service:"), "\(r.stderr)")
    }
}
