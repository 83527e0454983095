import ArgumentParser
import Foundation
import NearcardCrypto
import NearcardDiscovery
import NearcardModel
import NearcardNode
import NearcardProtocol

/// `nearcard exchange PEER`: dial a peer and exchange cards.
struct Exchange: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Exchange cards with a peer on the LAN.",
        discussion: """
        PEER is an instance name or display name (as `nearcard peers` shows), a fingerprint prefix \
        (4+ hex digits), or HOST:PORT (no multicast needed). Shows the check code both screens must \
        agree on, asks for consent (--yes gives it), and prints the new contact. \
        Exit 0 exchanged; 1 declined or a check failed; 4 unreachable or timed out; 6 no such peer.
        """)

    @OptionGroup var global: GlobalOptions

    @Argument(help: "Instance name, display name, fingerprint prefix, or HOST:PORT.")
    var peer: String

    @Option(help: "Ephemeral message sent with your card (at most 140 characters).")
    var message: String?

    @Flag(name: .shortAndLong, help: "Consent without asking.")
    var yes = false

    @Flag(help: "Print the new contact as JSON.")
    var json = false

    @Option(help: "Seconds to look for PEER on the LAN.")
    var timeout: Double = 5

    @Option(name: .customLong("interface"), help: ArgumentHelp("Look for PEER only on this interface; repeatable.", valueName: "IF"))
    var interfaces: [String] = []

    func validate() throws {
        if let message, let problem = ProximityPayload.messageProblem(message) { throw ValidationError(problem) }
        if timeout <= 0 || timeout > 600 { throw ValidationError("--timeout must be between 0 and 600 seconds") }
    }

    func run() async throws {
        let consent: ConsentProvider
        if yes {
            consent = AcceptAll(message: message)
        } else if Console.stdinIsTerminal {
            consent = TerminalConsent(prompter: Prompter(), message: message, timeout: NodeLimits().consentTimeout)
        } else {
            throw CLIError(.malformedInput, "no terminal to ask for consent on: pass --yes to consent")
        }
        // This node declines anything that reaches it; the dial brings the consent the person gave.
        let context = try NodeSetup.context(global, consent: DeclineAll(reason: "not listening"))
        let target = try await resolveTarget()
        if !json { Console.out("Connecting to \(target.label)…") }
        let events = context.events.subscribe()
        let shower = Task {
            for await event in events {
                if case .exchangeRequested(_, let p, let sas, _, _) = event, yes, !json {
                    Console.out("\(p.name ?? "(no name)") — \(p.did)\n  Check code \(sas) (compare with their screen)")
                }
            }
        }
        defer { shower.cancel() }
        let result: SessionResult
        do { result = try await Dialer.exchange(with: target, context: context, consent: consent) } catch let e as DialError {
            throw CLIError(.environment, e.message)
        }
        switch result {
        case .completed(let contact, let outcome):
            if json {
                var o = contact.json.objectValue!
                o["sas"] = .string(outcome.sas)
                Console.json(.object(o))
            } else {
                ExchangeDisplay.completed(contact, myMessage: outcome.myMessage, theirMessage: outcome.theirMessage, database: context.database)
            }
        case .failed(let error, _, _):
            throw NodeSetup.failure(error)
        }
    }

    func resolveTarget() async throws -> DialTarget {
        let query = PeerQuery(parsing: peer)
        switch query {
        case .address(let host, let port):
            let addresses: [PeerAddress]
            do { addresses = try PeerQuery.resolve(host: host, port: port) } catch let e as DialError {
                throw CLIError(.notFound, e.message)
            }
            return DialTarget(addresses: addresses, expected: ExpectedPeer(), label: query.description)
        case .name(let name):
            let discovery = try NodeSetup.discovery()
            guard let found = try await PeerFinder.find(query, discovery: discovery, filter: InterfaceFilter(allow: interfaces), timeout: timeout) else {
                throw CLIError(.notFound, "no peer named \"\(name)\" answered on the LAN within \(Int(timeout)) s (see `nearcard peers`, or use HOST:PORT)")
            }
            return DialTarget(addresses: found.dialOrder, expected: ExpectedPeer(fingerprint: found.txt.fingerprint),
                              label: "\(found.instanceName) (\(found.dialOrder.map(\.description).joined(separator: ", ")))")
        }
    }
}

/// Finding peers by browsing.
enum PeerFinder {
    /// What a browse has seen so far, filled by the browsing task.
    final class Seen: @unchecked Sendable {
        private let lock = NSLock()
        private var peers: [String: DiscoveredPeer] = [:]
        private var failure: String?

        func apply(_ event: DiscoveryEvent) {
            lock.withLock {
                switch event {
                case .found(let p), .updated(let p): peers[p.instanceName] = p
                case .lost(let name): peers[name] = nil
                case .failed(let e): failure = e.message
                }
            }
        }

        var snapshot: (peers: [DiscoveredPeer], failure: String?) { lock.withLock { (Array(peers.values), failure) } }
    }

    /// Browses for up to `timeout` seconds and returns every peer seen (minus those that left).
    static func collect(discovery: AvahiDiscovery, filter: InterfaceFilter, until done: ([DiscoveredPeer]) -> Bool, timeout: Double) async throws -> [DiscoveredPeer] {
        let seen = Seen()
        let stream = discovery.browse(filter: filter)
        let reader = Task { for await event in stream { seen.apply(event) } }
        defer { reader.cancel() }
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            try await Task.sleep(nanoseconds: 50_000_000)
            let (peers, failure) = seen.snapshot
            if let failure { throw CLIError(.environment, failure) }
            if done(peers) { return peers }
        }
        return seen.snapshot.peers
    }

    /// The peer `query` names: waits until a match has been seen for 0.3 s (to gather its addresses on
    /// every interface). Several matches are an error naming them with their fingerprints (PeerQuery.select).
    static func find(_ query: PeerQuery, discovery: AvahiDiscovery, filter: InterfaceFilter, timeout: Double) async throws -> DiscoveredPeer? {
        var firstMatch: Date?
        let peers = try await collect(discovery: discovery, filter: filter, until: { peers in
            guard peers.contains(where: { query.matches($0) }) else { return false }
            if firstMatch == nil { firstMatch = Date() }
            return Date().timeIntervalSince(firstMatch!) >= 0.3
        }, timeout: timeout)
        switch query.select(from: peers) {
        case .success(let found): return found
        case .failure(let ambiguous): throw CLIError(.notFound, ambiguous.description)
        }
    }
}
