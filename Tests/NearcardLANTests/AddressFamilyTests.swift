import Foundation
import NearcardCrypto
import NearcardProcess
import NearcardSimulation
import NearcardTestSupport
import Testing

/// Hosts with one IP family: IPv6 disabled (`net.ipv6.conf.all.disable_ipv6=1`, common on servers and
/// some laptops) and a link with no IPv4 address. On each, two laptops on one cable (namespaces with
/// their own avahi-daemon, restricted to that family): every face that serves starts — `listen`,
/// `bot`, `ui` — and a card is exchanged by name over DNS-SD, by address, and by a QR invitation,
/// whose addresses are the ones this host has.
@Suite(.serialized, .enabled(if: getuid() == 0, "network namespaces need root")) struct AddressFamilyTests {
    func log(_ name: String) -> URL { FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-\(UUID().uuidString)-\(name).log") }

    /// Waits for `text` in `url` (a node's log), failing with the log when the process ends or time runs out.
    func await(_ text: String, in url: URL, of process: ChildProcess, timeout: TimeInterval = 20) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let log = (try? String(contentsOf: url, encoding: .utf8)) ?? ""
            if log.contains(text) { return }
            if !process.isRunning { throw LabError("it exited before saying \"\(text)\": \(log)") }
            usleep(100_000)
        }
        throw LabError("no \"\(text)\" within \(Int(timeout)) s: \((try? String(contentsOf: url, encoding: .utf8)) ?? "")")
    }

    /// Ctrl-C, and the process gone (the next face takes the same home).
    func stop(_ process: ChildProcess) throws {
        process.kill(SIGINT)
        let deadline = Date().addingTimeInterval(10)
        while process.isRunning && Date() < deadline { usleep(50_000) }
        if process.isRunning { throw LabError("it did not stop within 10 s of Ctrl-C") }
    }

    @Test(arguments: [NetLab.Family.ipv4Only, .ipv6Only])
    func everyFaceStartsAndExchanges(on family: NetLab.Family) throws {
        let (adasLaptop, gracesLaptop) = try Lab.pair(family: family)
        let ada = try TestPerson(name: "Ada Lovelace", card: ["--company", "Analytical Engines"])
        let grace = try TestPerson(name: "Grace Hopper")
        defer {
            ada.cli.cleanUp()
            grace.cli.cleanUp()
        }
        let address = family == .ipv6Only ? "[\(adasLaptop.space.ipv6!)]" : adasLaptop.vethIPv4

        // listen: published, found by name on the other laptop, exchanged with.
        let listenLog = log("listen")
        let (listener, port) = try adasLaptop.listen(home: ada.home, ["--accept", "all"], log: listenLog)
        let byName = try gracesLaptop.nearcard(["exchange", "Ada Lovelace", "--yes", "--json", "--timeout", "15"], home: grace.home)
        #expect(byName.code == 0, "by name on \(family): \(byName.stderr)")
        #expect(byName.json["company"] == "Analytical Engines")

        // A QR invitation names this host's addresses of its one family, and works.
        let invite = try adasLaptop.nearcard(["qr", "invite", "--text", "--port", String(port)], home: ada.home)
        #expect(invite.code == 0, "\(invite.stderr)")
        let text = invite.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let body = try JSONParser.parse(String(decoding: try Base64.urlDecode(String(text.dropFirst("nearcard-invite:".count))), as: UTF8.self))
        let hosts = (body["addrs"]?.arrayValue ?? []).compactMap { $0.stringValue }
        #expect(hosts.contains { $0.contains(family == .ipv6Only ? adasLaptop.space.ipv6! : adasLaptop.vethIPv4) }, "\(hosts)")
        #expect(!hosts.contains { $0.contains(family == .ipv6Only ? "10.77." : "fe80:") }, "no address of the missing family: \(hosts)")
        // §19: neither loopback (another machine cannot reach it) nor a link-local address (it needs a zone).
        #expect(!hosts.contains { $0.hasPrefix("127.") || $0.hasPrefix("[::1]") || $0.lowercased().hasPrefix("[fe80:") }, "\(hosts)")
        let invited = try gracesLaptop.nearcard(["exchange", "--invite", text, "--json"], home: grace.home)
        #expect(invited.code == 0, "by invitation on \(family): \(invited.stderr)")
        try stop(listener)

        // bot: starts, published, and answers a dial by address.
        let policy = try ada.cli.write(#"{"version": 1, "accept": "everyone"}"#, to: "policy.json")
        let botLog = log("bot")
        let bot = try adasLaptop.spawn([CLI.executable.path, "bot", "--policy", policy, "--home", ada.home.path, "--port", "0"], log: botLog)
        let botPort = try Lab.startedPort(in: botLog)
        try self.await("\"published\"", in: botLog, of: bot)
        let byAddress = try gracesLaptop.nearcard(["exchange", "\(address):\(botPort)", "--yes", "--json"], home: grace.home)
        #expect(byAddress.code == 0, "by address on \(family): \(byAddress.stderr)")
        try stop(bot)

        // ui: the node and its page start (the page is on 127.0.0.1, which loopback has in both).
        let uiLog = log("ui")
        let ui = try adasLaptop.spawn([CLI.executable.path, "ui", "--home", ada.home.path, "--no-browser", "--port", "0", "--ui-port", "7448"], log: uiLog)
        try self.await("Nearcard's page: ", in: uiLog, of: ui)
        #expect(Reachable.tcp("127.0.0.1", 7448, inside: adasLaptop), "the page answers")
        try stop(ui)
        #expect(try grace.contacts().count == 1, "one contact, exchanged three times")
    }
}
