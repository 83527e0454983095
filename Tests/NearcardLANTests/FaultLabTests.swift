import Foundation
import NearcardCrypto
import NearcardSimulation
import NearcardTestSupport
import Testing

/// The fault lab: an exchange through a relay (Tests/Interop/fault_relay.py) that cuts the link after
/// k frames, for every k, then both books are compared once the dust settles. Protocol version 2's
/// agreement (PROTOCOL §11) leaves no place where they may disagree: the dialer that stored the contact
/// unconfirmed asks the listener (over the mail channel, at the route's hints) and confirms or
/// withdraws it before it exits.
@Suite(.serialized) struct FaultLabTests {
    let relay = CLI.packageRoot.appendingPathComponent("Tests/Interop/fault_relay.py").path
    func log(_ name: String) -> URL { FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-\(UUID().uuidString)-\(name).log") }

    struct Outcome: CustomStringConvertible {
        let cutAfter: Int
        let dialerExit: Int32
        let dialerHas: Bool
        let listenerHas: Bool
        var agree: Bool { dialerHas == listenerHas }
        var description: String {
            "cut after \(cutAfter) frames: dialer exit \(dialerExit), dialer \(dialerHas ? "has" : "has not"), listener \(listenerHas ? "has" : "has not")"
        }
    }

    /// After the dust settles: whether each side holds the other. On a lossy link the listener may read
    /// the last `done` seconds after the dialer finished (TCP retransmits it), so a dialer that holds the
    /// contact is given up to 20 s to be matched before the books are called one-sided.
    func settle(dialer: TestPerson, listener: TestPerson, within seconds: TimeInterval = 20) throws -> (dialerHas: Bool, listenerHas: Bool) {
        let dialerHas = !(try dialer.contacts()).isEmpty
        var listenerHas = false
        let deadline = Date().addingTimeInterval(dialerHas ? seconds : 1)
        repeat {
            listenerHas = try listener.contacts().contains { $0["didPublicKey"]?.stringValue == dialer.did }
            if listenerHas == dialerHas { break }
            usleep(200_000)
        } while Date() < deadline
        return (dialerHas, listenerHas)
    }

    /// Starts the fault relay in `lab` on `listenPort` towards the listener's `port`, with `options`, and
    /// waits until it listens; returns its log (its report lines).
    func startRelay(_ lab: Lab, listenPort: Int, to port: Int, _ options: [String]) throws -> URL {
        let relayLog = log("relay")
        _ = try lab.spawn([CLI.python, relay, "\(listenPort)", "127.0.0.1", "\(port)", "--once"] + options, log: relayLog)
        var ready = false
        for _ in 0..<50 where !ready {
            usleep(100_000)
            ready = ((try? String(contentsOf: relayLog, encoding: .utf8)) ?? "").contains("listening")
        }
        #expect(ready)
        return relayLog
    }

    /// Runs one exchange through a relay cutting after `k` frames (nil: never).
    func run(_ lab: Lab, grace: TestPerson, port: Int, relayPort: Int, cutAfter k: Int?) throws -> (Outcome, JSONValue) {
        let ada = try TestPerson(name: "Ada \(relayPort)")
        defer { ada.cli.cleanUp() }
        let relayLog = try startRelay(lab, listenPort: relayPort, to: port, k.map { ["--cut-after", "\($0)"] } ?? [])
        let r = try lab.nearcard(["exchange", "127.0.0.1:\(relayPort)", "--yes", "--json", "--connect-budget", "3"], home: ada.home)
        // The listener ends its side at once (it sees the connection close): give it a moment.
        var report: JSONValue = .null
        for _ in 0..<50 where report == .null {
            usleep(100_000)
            let lines = ((try? String(contentsOf: relayLog, encoding: .utf8)) ?? "").split(separator: "\n")
            report = lines.last { $0.contains("\"frames\"") }.flatMap { try? JSONParser.parse(String($0)) } ?? .null
        }
        // A cut link closes at once on both sides: the listener knows within moments.
        let (dialerHas, listenerHas) = try settle(dialer: ada, listener: grace, within: 3)
        return (Outcome(cutAfter: k ?? -1, dialerExit: r.code, dialerHas: dialerHas, listenerHas: listenerHas), report)
    }

    /// A 5 s round trip (the relay holds each frame 2.5 s each way: a satellite hop or a congested
    /// captive portal): the handshake's three round trips do not fit its 10 s, but deadlines stretch with
    /// the round trip each side measured (docs/PROTOCOL.md §12), and the exchange completes on both sides.
    @Test func anExchangeCompletesAtAFiveSecondRoundTrip() throws {
        let lab = try Lab("rt")
        let grace = try TestPerson(name: "Grace")
        let ada = try TestPerson(name: "Ada")
        defer {
            grace.cli.cleanUp()
            ada.cli.cleanUp()
        }
        let (_, port) = try lab.listen(home: grace.home, ["--accept", "all", "--no-discovery"], log: log("grace"))
        _ = try startRelay(lab, listenPort: 7465, to: port, ["--delay", "2500"])
        let started = Date()
        let r = try lab.nearcard(["exchange", "127.0.0.1:7465", "--yes", "--json"], home: ada.home)
        let seconds = Date().timeIntervalSince(started)
        print("fault lab, a 5 s round trip: exit \(r.code) after \(String(format: "%.1f", seconds)) s")
        #expect(r.code == 0, "\(r.stderr)")
        let (dialerHas, listenerHas) = try settle(dialer: ada, listener: grace, within: 15)
        #expect(dialerHas && listenerHas, "both sides hold the contact")
    }

    /// Message 1 never arrives (the relay swallows what the dialer sends; a link that loses it): the
    /// listener closes after the seconds it waits for a first message. That is a lost connection or a
    /// timeout, said as one (exit 9 or 10, whichever side's 10 s ends first) — not "busy" (exit 8), which
    /// is a node at its limit closing at once.
    @Test func aLostFirstMessageIsNotBusy() throws {
        let lab = try Lab("m1")
        let grace = try TestPerson(name: "Grace")
        let ada = try TestPerson(name: "Ada")
        defer {
            grace.cli.cleanUp()
            ada.cli.cleanUp()
        }
        let (_, port) = try lab.listen(home: grace.home, ["--accept", "all", "--no-discovery"], log: log("grace"))
        _ = try startRelay(lab, listenPort: 7466, to: port, ["--stall-after", "0", "--direction", "to-listener", "--hold", "30"])
        let r = try lab.nearcard(["exchange", "127.0.0.1:7466", "--yes", "--connect-budget", "3"], home: ada.home)
        #expect(r.code == 9 || r.code == 10, "exit \(r.code): \(r.stderr)")
        #expect(!r.stderr.contains("at a limit") && !r.stderr.contains("busy"), "\(r.stderr)")
        #expect(r.stderr.split(separator: "\n").count == 1, "one line: \(r.stderr)")
    }

    /// The last `confirm` is lost and the listener cannot be reached for the dialer's query at once (a
    /// firewall lets only the relay through): the dialer says the exchange is unconfirmed (exit 11). When
    /// the listener is reachable again, `outbox --send` settles it and says so, and a node reports it as
    /// `exchange.settled` (JSON lines) — settling is never silent.
    @Test func aLateSettlementIsSaid() throws {
        let lab = try Lab("st")
        let grace = try TestPerson(name: "Grace")
        let ada = try TestPerson(name: "Ada")
        defer {
            grace.cli.cleanUp()
            ada.cli.cleanUp()
        }
        let (_, port) = try lab.listen(home: grace.home, ["--accept", "all", "--no-discovery"], log: log("grace"))
        // Only the relay (from 127.0.0.3) reaches the listener's port.
        #expect(try lab.run(["nft", "add table inet gate; add chain inet gate input { type filter hook input priority 0; }"]).code == 0)
        #expect(try lab.run(["nft", "add rule inet gate input tcp dport \(port) ip saddr != 127.0.0.3 drop"]).code == 0)
        _ = try startRelay(lab, listenPort: 7467, to: port, ["--cut-after", "12", "--source", "127.0.0.3"])
        let r = try lab.nearcard(["exchange", "127.0.0.1:7467", "--yes", "--connect-budget", "2"], home: ada.home)
        #expect(r.code == 11, "unconfirmed: \(r.code) \(r.stderr)")
        #expect(try lab.run(["nft", "delete table inet gate"]).code == 0)
        let sent = try lab.nearcard(["outbox", "--send", "--wait", "0"], home: ada.home)
        #expect(sent.code == 0, "\(sent.stderr)")
        #expect(
            sent.stdout.contains("✔ Confirmed: Grace's node kept your exchange; both of you have each other's card"), "\(sent.stdout)")
        #expect(try ada.contacts().count == 1 && grace.contacts().count == 1, "both keep it")
    }

    /// Random packet loss on the listener's port (nftables `numgen`, both directions): at 5 % every
    /// exchange completes on both sides (TCP retransmits; a lost SYN is retried); at 20 % too (a
    /// handshake whose replies were lost is tried again by the dial itself); at neither is a result
    /// one-sided. The rate can be
    /// raised for the `make faults` report with NEARCARD_FAULT_LOSS (comma-separated percentages).
    /// Beside each rate, the same number of mutual-TLS 1.3 handshakes (`openssl s_server`/`s_client`,
    /// P-256 certificates) over the same lossy link, in the same run: what a lossy link allows anything.
    @Test func lossyLinksComplete() throws {
        let lab = try Lab("fl")
        let grace = try TestPerson(name: "Grace")
        defer { grace.cli.cleanUp() }
        let (_, port) = try lab.listen(home: grace.home, ["--accept", "all", "--no-discovery"], log: log("grace"))
        let rates = (ProcessInfo.processInfo.environment["NEARCARD_FAULT_LOSS"] ?? "5,20").split(separator: ",").compactMap { Int($0) }
        let runs = Int(ProcessInfo.processInfo.environment["NEARCARD_FAULT_RUNS"] ?? "") ?? 4
        var table: [String] = []
        let tls = try TLSPeers(lab: lab)
        for rate in rates {
            #expect(try lab.run(["nft", "add table inet lossy; add chain inet lossy input { type filter hook input priority 0; }"]).code == 0)
            for p in [port, TLSPeers.port] {
                #expect(try lab.run(["nft", "add rule inet lossy input tcp dport \(p) numgen random mod 100 < \(rate) drop"]).code == 0)
                #expect(try lab.run(["nft", "add rule inet lossy input tcp sport \(p) numgen random mod 100 < \(rate) drop"]).code == 0)
            }
            var completed = 0
            var oneSided = 0
            var failed = 0
            var retried = 0
            var seconds: [Double] = []
            for i in 0..<runs {
                let ada = try TestPerson(name: "Ada \(rate) \(i)")
                defer { ada.cli.cleanUp() }
                let started = Date()
                let r = try lab.nearcard(["exchange", "127.0.0.1:\(port)", "--yes", "--json"], home: ada.home)
                seconds.append(Date().timeIntervalSince(started))
                let (dialerHas, listenerHas) = try settle(dialer: ada, listener: grace)
                if dialerHas && listenerHas { completed += 1 } else if dialerHas != listenerHas { oneSided += 1 } else { failed += 1 }
                // Up to 20 % every run completes: a handshake whose replies were lost before the peer said
                // who it is is tried again by the dial itself (nothing was shown to anyone).
                if rate <= 20 { #expect(r.code == 0 && dialerHas && listenerHas, "\(rate) % loss, run \(i): exit \(r.code) \(r.stderr)") }
                if r.code == 0, (r.json["attempts"]?.integerValue ?? 1) > 1 { retried += 1 }
            }
            // Both books agree: never one side holding the other alone.
            if rate <= 20 { #expect(oneSided == 0, "\(rate) % loss: \(oneSided) one-sided of \(runs)") }
            let (tlsDone, tlsSeconds) = try tls.handshakes(runs)
            #expect(try lab.run(["nft", "delete table inet lossy"]).code == 0)
            seconds.sort()
            table.append(
                "  \(rate) % loss: \(completed) completed, \(oneSided) one-sided, \(failed) failed of \(runs)"
                    + (retried > 0 ? " (\(retried) after the dial tried again)" : "") + "; median \(String(format: "%.2f", seconds[seconds.count / 2])) s"
                    + "  |  mutual TLS 1.3 handshake: \(tlsDone) of \(runs); median \(String(format: "%.2f", tlsSeconds[tlsSeconds.count / 2])) s")
        }
        print("fault lab, random loss on the link:\n\(table.joined(separator: "\n"))")
    }

    @Test func aLinkCutAtEveryFrameBoundary() throws {
        let lab = try Lab("fx")
        let grace = try TestPerson(name: "Grace")
        defer { grace.cli.cleanUp() }
        let (_, port) = try lab.listen(home: grace.home, ["--accept", "all", "--no-discovery"], log: log("grace"))
        // An uncut exchange through the relay: how many frames it takes.
        let (whole, report) = try run(lab, grace: grace, port: port, relayPort: 7480, cutAfter: nil)
        #expect(whole.dialerExit == 0 && whole.dialerHas && whole.listenerHas, "\(whole)")
        let frames = Int(report["frames"]?.doubleValue ?? 0)
        #expect(frames >= 10, "an exchange is at least 10 frames: \(report)")
        var outcomes: [Outcome] = []
        for k in 0..<frames {
            outcomes.append(try run(lab, grace: grace, port: port, relayPort: 7481 + k, cutAfter: k).0)
        }
        let table = outcomes.map { "  \($0)" }.joined(separator: "\n")
        print("fault lab, link cut after k of \(frames) frames:\n\(table)")
        #expect(frames == 13, "message 1–3, hello, nonce, sas-reveal, two decisions, two cards, done, done, confirm: \(report)")
        for o in outcomes {
            // Both books agree at every cut, and the dialer says which way it ended: exit 0 with the
            // contact (confirmed, in the session or by its query), an error exit without it.
            #expect(o.agree, "\(o)")
            #expect(o.dialerHas == (o.dialerExit == 0), "\(o)")
        }
    }

    /// The dialer's last `done` never reaches the listener (the relay stops forwarding to it after 11
    /// frames): the dialer keeps the contact unconfirmed (exit 11), the listener stores nothing. When the
    /// listener answers again, `outbox --send` withdraws it, says so, and the book keeps a line for the
    /// withdrawn exchange — when it was made and withdrawn, and nothing of the person (issue 36.4).
    @Test func aWithdrawnExchangeLeavesALine() throws {
        let lab = try Lab("wd")
        let grace = try TestPerson(name: "Grace Withheld")
        let ada = try TestPerson(name: "Ada")
        defer {
            grace.cli.cleanUp()
            ada.cli.cleanUp()
        }
        let (_, port) = try lab.listen(home: grace.home, ["--accept", "all", "--no-discovery"], log: log("grace"))
        _ = try startRelay(lab, listenPort: 7468, to: port, ["--stall-after", "11", "--direction", "to-listener", "--hold", "45"])
        let r = try lab.nearcard(["exchange", "127.0.0.1:7468", "--yes", "--connect-budget", "2"], home: ada.home)
        #expect([10, 11].contains(r.code), "\(r.code) \(r.stderr)")
        // The listener's cards time (30 s) has passed too: it stored nothing.
        #expect(try grace.contacts().isEmpty)
        let sent = try lab.nearcard(["outbox", "--send", "--wait", "0"], home: ada.home)
        #expect(sent.code == 0, "\(sent.stderr)")
        #expect(try ada.contacts().isEmpty, "withdrawn: \(sent.stdout)")
        let listing = try ada.cli.run(["contacts"])
        #expect(listing.stdout.contains("(withdrawn: the exchange of "), "\(listing.stdout)")
        #expect(!listing.stdout.contains("Grace") && !listing.stdout.contains("Withheld"), "nothing of the person: \(listing.stdout)")
    }

    /// A TLS 1.3 server and client with P-256 certificates, each checking the other's (mutual TLS: the
    /// closest standard handshake to an exchange's), run in the lab's namespace for the loss comparison.
    struct TLSPeers {
        static let port = 7499
        let lab: Lab
        let dir: URL

        init(lab: Lab) throws {
            self.lab = lab
            dir = FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-tls-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            for who in ["server", "client"] {
                let r = try CLI.run(
                    executable: "/usr/bin/openssl",
                    [
                        "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                        "-keyout", dir.appendingPathComponent("\(who).key").path,
                        "-out", dir.appendingPathComponent("\(who).crt").path,
                        "-days", "1", "-subj", "/CN=\(who)",
                    ])
                #expect(r.code == 0, "openssl req: \(r.stderr)")
            }
        }

        func path(_ name: String) -> String { dir.appendingPathComponent(name).path }

        /// `n` handshakes, each with 30 s to finish (an exchange's connect budget): how many finished, and
        /// their times (a failure counts its full time).
        func handshakes(_ n: Int) throws -> (Int, [Double]) {
            let server = try lab.spawn(
                [
                    "/usr/bin/openssl", "s_server", "-quiet", "-tls1_3", "-accept", "127.0.0.1:\(Self.port)", "-naccept", "\(n)",
                    "-cert", path("server.crt"), "-key", path("server.key"), "-Verify", "1", "-CAfile", path("client.crt"),
                ],
                log: dir.appendingPathComponent("s_server.log"))
            defer { server.kill() }
            usleep(300_000)
            var done = 0
            var seconds: [Double] = []
            for _ in 0..<n {
                let started = Date()
                let r = try lab.run(
                    [
                        "timeout", "30", "/usr/bin/openssl", "s_client", "-tls1_3", "-brief", "-connect", "127.0.0.1:\(Self.port)",
                        "-cert", path("client.crt"), "-key", path("client.key"), "-CAfile", path("server.crt"), "-verify_return_error",
                    ],
                    stdin: "")
                seconds.append(Date().timeIntervalSince(started))
                if r.code == 0 && (r.stdout + r.stderr).contains("CONNECTION ESTABLISHED") { done += 1 }
            }
            seconds.sort()
            return (done, seconds)
        }
    }
}

/// A slow link (issue 26, "what held and must keep holding"): both ends of a veth pair shaped to
/// 64 kbit/s with tbf, and a card near the largest an exchange carries (name, company and title at 256
/// characters of two bytes each, 16 social profiles, 32 skills: close to the 16,384-byte card limit,
/// which `card set` enforces): the exchange completes on both sides.
@Suite(.serialized) struct SlowLinkTests {
    func log(_ name: String) -> URL { FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-\(UUID().uuidString)-\(name).log") }

    /// The pair's end of the cable in `lab`'s namespace.
    func veth(_ lab: Lab) throws -> String {
        try #require(
            try lab.run(["ip", "-o", "link", "show"]).stdout.split(separator: "\n")
                .compactMap { line -> String? in
                    let name = line.split(separator: ":").dropFirst().first.map { String($0).trimmingCharacters(in: .whitespaces) } ?? ""
                    return name.hasPrefix("nc-") ? String(name.split(separator: "@").first ?? "") : nil
                }.first, "the pair's veth")
    }

    @Test func theLargestCardCrossesASixtyFourKilobitLink() throws {
        let (a, b) = try Lab.pair()
        let ada = try TestPerson(name: "Ada")
        let grace = try TestPerson(name: "Grace")
        defer {
            ada.cli.cleanUp()
            grace.cli.cleanUp()
        }
        let long = String(repeating: "é", count: 255)
        var args = [
            "card", "set", "--name", "G" + long, "--email", "grace@" + String(repeating: "n", count: 200) + ".org", "--phone", "+1 555 0100",
            "--company", "C" + long, "--title", "T" + long,
        ]
        for i in 0..<16 { args += ["--social", "net\(i):" + String(repeating: "h", count: 60) + ":https://example.org/" + String(repeating: "u", count: 60)] }
        for i in 0..<32 { args += ["--skill", "skill \(i) " + String(repeating: "s", count: 50)] }
        let set = try grace.cli.run(args)
        #expect(set.code == 0, "\(set.stderr)")
        #expect(try grace.cli.run(["share", "--fields", "name,email,phone,company,title,socialNetworks,skills"]).code == 0)
        for lab in [a, b] {
            let tbf = try lab.run(["tc", "qdisc", "add", "dev", try veth(lab), "root", "tbf", "rate", "64kbit", "burst", "4kb", "latency", "500ms"])
            #expect(tbf.code == 0, "tc: \(tbf.stderr)")
        }
        let (_, _) = try b.listen(home: grace.home, ["--accept", "all", "--no-discovery", "--port", "7463"], log: log("grace"))
        let started = Date()
        let r = try a.nearcard(["exchange", "\(b.vethIPv4):7463", "--yes", "--json"], home: ada.home)
        print("slow link: 64 kbit/s, largest card: exit \(r.code) after \(String(format: "%.1f", Date().timeIntervalSince(started))) s")
        #expect(r.code == 0, "\(r.stderr)")
        #expect(r.json["skills"]?.arrayValue?.count == 32, "the whole card arrived")
        var listenerHas = false
        for _ in 0..<50 where !listenerHas {
            listenerHas = try grace.contacts().contains { $0["didPublicKey"]?.stringValue == ada.did }
            if !listenerHas { usleep(100_000) }
        }
        #expect(listenerHas, "both sides hold the contact")
    }
}
