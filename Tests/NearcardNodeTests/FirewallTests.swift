import Foundation
import NearcardCrypto
import Testing

@testable import NearcardNode

/// The doctor's firewall verdict comes from the ruleset this machine has (`nft -j list ruleset`), and
/// its fix names a chain that exists — not "a firewall may drop it" and a rule for a table nobody made.
@Suite struct FirewallTests {
    static func ruleset(_ items: [String]) throws -> JSONValue {
        try JSONParser.parse(#"{"nftables": [{"metainfo": {"version": "1.0.6", "json_schema_version": 1}}"# + items.map { ", " + $0 }.joined() + "]}")
    }

    @Test func noRulesIsNoFirewall() throws {
        let state = Firewall.parse(try Self.ruleset([]))
        #expect(state == .inputChains([]))
        let v = Firewall.verdict(state, proto: "udp", port: 5353, elsewhere: "look at avahi")
        #expect(v.cause == "there is no packet filter here (nft list ruleset has no rules), so it is not a firewall" && v.fix == "look at avahi")
    }

    @Test func aDroppingChainIsNamedWithARuleForIt() throws {
        let state = Firewall.parse(
            try Self.ruleset([
                #"{"table": {"family": "inet", "name": "fw", "handle": 1}}"#,
                #"{"chain": {"family": "inet", "table": "fw", "name": "in", "handle": 1, "type": "filter", "hook": "input", "prio": 0, "policy": "accept"}}"#,
                #"{"chain": {"family": "inet", "table": "fw", "name": "out", "handle": 2, "type": "filter", "hook": "output", "prio": 0, "policy": "drop"}}"#,
                #"{"rule": {"family": "inet", "table": "fw", "chain": "in", "handle": 3, "expr": [{"match": {"op": "==", "left": {"payload": {"protocol": "udp", "field": "dport"}}, "right": 5353}}, {"drop": null}]}}"#,
            ]))
        #expect(state == .inputChains([.init(family: "inet", table: "fw", name: "in", dropsByDefault: false, hasDropRules: true)]))
        let v = Firewall.verdict(state, proto: "udp", port: 5353, elsewhere: "")
        #expect(v.cause == "the packet filter's input chain inet fw in drops it")
        #expect(v.fix == Firewall.asRoot("nft insert rule inet fw in udp dport 5353 accept"))
    }

    @Test func aDropPolicyAndUFW() throws {
        let policy = Firewall.parse(
            try Self.ruleset([#"{"chain": {"family": "ip", "table": "filter", "name": "INPUT", "hook": "input", "policy": "drop"}}"#]))
        #expect(
            Firewall.verdict(policy, proto: "tcp", port: 7447, elsewhere: "").fix == Firewall.asRoot("nft insert rule ip filter INPUT tcp dport 7447 accept"))
        let ufw = Firewall.parse(
            try Self.ruleset([
                #"{"chain": {"family": "ip", "table": "filter", "name": "ufw-user-input", "hook": "input", "policy": "drop"}}"#
            ]))
        #expect(Firewall.verdict(ufw, proto: "tcp", port: 7447, elsewhere: "").fix == Firewall.asRoot("ufw allow 7447/tcp"))
        let accepting = Firewall.parse(
            try Self.ruleset([#"{"chain": {"family": "inet", "table": "t", "name": "input", "hook": "input", "policy": "accept"}}"#]))
        #expect(Firewall.verdict(accepting, proto: "tcp", port: 7447, elsewhere: "ss").fix == "ss")
    }

    @Test func anUnreadableRulesetSaysHowToLook() {
        let v = Firewall.verdict(.unreadable("reading it needs root"), proto: "udp", port: 5353, elsewhere: "")
        #expect(v.cause.contains("may drop UDP port 5353") && v.fix.hasPrefix(Firewall.asRoot("nft list ruleset")))
        #expect(getuid() != 0 || Firewall.asRoot("nft list ruleset") == "nft list ruleset", "root needs no sudo")
    }
}

extension FirewallTests {
    /// The real tool's answer, in a namespace of its own with a chain that drops mDNS (as root).
    @Test func readsTheRealRuleset() throws {
        guard getuid() == 0 else { return }
        let ns = "nc-fw-\(getpid())"
        func run(_ args: [String]) -> Int32 {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/usr/sbin/ip")
            p.arguments = args
            try? p.run()
            p.waitUntilExit()
            return p.terminationStatus
        }
        #expect(run(["netns", "add", ns]) == 0)
        defer { _ = run(["netns", "del", ns]) }
        #expect(
            run([
                "netns", "exec", ns, "nft",
                "add table inet t; add chain inet t input { type filter hook input priority 0; }; add rule inet t input udp dport 5353 drop",
            ]) == 0)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/sbin/ip")
        p.arguments = ["netns", "exec", ns, "nft", "-j", "list", "ruleset"]
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        let json = try JSONParser.parse(String(decoding: data, as: UTF8.self))
        #expect(Firewall.parse(json) == .inputChains([.init(family: "inet", table: "t", name: "input", dropsByDefault: false, hasDropRules: true)]))
    }
}
