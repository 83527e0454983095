import ArgumentParser
import Foundation
import NearcardCrypto
import NearcardDiscovery
import NearcardModel
import NearcardNode
import NearcardProtocol
import NearcardStore

/// `nearcard listen`: publish this node and serve exchanges until Ctrl-C.
struct Listen: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Publish this node on the LAN (DNS-SD, _nearcard._tcp) and serve card exchanges until Ctrl-C.",
        discussion: """
        With --accept ask (the default) each request shows who is asking and the check code, and waits \
        for y/N at the terminal. Without a terminal, ask declines every request and says why: give \
        --accept all or --accept allowlist:FILE (one DID per line) to run unattended. Exits 0 on Ctrl-C.
        """)

    @OptionGroup var global: GlobalOptions

    @Option(help: ArgumentHelp("Who to accept: ask, all, or allowlist:FILE.", valueName: "POLICY"))
    var accept: String = "ask"

    @Option(help: "Ephemeral message sent with your card in every exchange (at most 140 characters).")
    var message: String?

    @Option(help: "TCP port (0 picks a free one).")
    var port: Int = NearcardNode.defaultPort

    @Option(name: .customLong("interface"), help: ArgumentHelp("Publish and browse only on this interface; repeatable.", valueName: "IF"))
    var interfaces: [String] = []

    @Option(name: .customLong("exclude-interface"), help: ArgumentHelp("Never use this interface (in addition to VPN and container bridges); repeatable.", valueName: "IF"))
    var excluded: [String] = []

    @Flag(help: "Do not put your display name on the network (TXT and instance name carry only the fingerprint).")
    var `private` = false

    @Flag(help: "Do not publish over DNS-SD; peers reach you by host:port only.")
    var noDiscovery = false

    @Option(help: "Seconds a person has to decide on a request.")
    var consentTimeout: Double = 60

    func validate() throws {
        if let message, let problem = ProximityPayload.messageProblem(message) { throw ValidationError(problem) }
        if !(0...65535).contains(port) { throw ValidationError("--port must be 0…65535") }
        if !(accept == "ask" || accept == "all" || accept.hasPrefix("allowlist:")) {
            throw ValidationError("--accept is ask, all, or allowlist:FILE")
        }
        if consentTimeout <= 0 || consentTimeout > 3600 { throw ValidationError("--consent-timeout must be between 0 and 3600 seconds") }
    }

    func run() async throws {
        let consent: ConsentProvider
        switch accept {
        case "all":
            consent = AcceptAll(message: message)
        case "ask":
            if Console.stdinIsTerminal {
                consent = TerminalConsent(prompter: Prompter(), message: message, timeout: consentTimeout)
            } else {
                consent = DeclineAll(reason: "no terminal to ask on and no --accept policy")
                Console.err("nearcard: no terminal: every request will be declined (use --accept all or --accept allowlist:FILE)")
            }
        default:
            consent = AcceptAllowlist(dids: try NodeSetup.allowlist(String(accept.dropFirst("allowlist:".count))), message: message)
        }
        var limits = NodeLimits()
        limits.consentTimeout = consentTimeout
        let events = EventBus()
        let base = try NodeSetup.service(global, consent: consent, events: events)
        let service = ExchangeService(keys: base.keys, identity: base.identity, database: base.database, consent: consent, events: events, limits: limits)
        let identity = service.identity
        if try service.database.myCard() == nil {
            Console.err("nearcard: you have no card yet; peers will get only your name (set one with: nearcard card set …)")
        }

        let listener: Listener
        do { listener = try await Listener.start(service: service, port: port) } catch {
            throw CLIError(.environment, "cannot listen on port \(port): \(error)")
        }
        let printer = Task { await Self.printEvents(events.subscribe(), database: service.database) }
        let label = identity.name.map { "“\($0)”" } ?? "(no name)"
        Console.out("Listening on port \(listener.port) as \(label), fingerprint \(identity.fingerprint). Ctrl-C to stop.")

        // Queued follow-up messages go out while we listen: every few seconds, and when a peer appears.
        let peers = PeerTable()
        let (appeared, appear) = AsyncStream.makeStream(of: DiscoveredPeer.self, bufferingPolicy: .bufferingNewest(16))
        let outbox = Task { await OutboxWorker(service: service).run(peers: peers, appeared: appeared) }

        var publication: (AvahiDiscovery, Publication)?
        if !noDiscovery {
            switch Self.publish(identity: identity, port: listener.port, private: `private`, interfaces: interfaces) {
            case .success(let p):
                publication = p
                Task {
                    if let name = try? await p.1.established() { Console.out("Published on the LAN as “\(name)” (\(TXTRecord.serviceType)).") }
                }
            case .failure(let e):
                Console.err("nearcard: discovery unavailable: \(e.message). Peers can still reach you at HOST:\(listener.port).")
            }
        }
        let discovery = publication?.0
        let filter = InterfaceFilter(allow: interfaces, deny: InterfaceFilter.defaultDeny + excluded)
        let browsing = Task {
            guard let discovery else { return }
            for await event in discovery.browse(filter: filter) {
                peers.apply(event)
                if case .found(let peer) = event { appear.yield(peer) }
            }
        }

        for await _ in NodeSetup.interrupts() { break }
        Console.out("\nStopping…")
        browsing.cancel()
        appear.finish()
        outbox.cancel()
        publication?.1.withdraw()
        await listener.close()
        events.finish()
        printer.cancel()
    }

    /// Publishes the node over DNS-SD: the display name (or, in private mode, only the fingerprint).
    static func publish(identity: PublicIdentity, port: Int, private isPrivate: Bool, interfaces: [String]) -> Result<(AvahiDiscovery, Publication), DiscoveryError> {
        Result { () throws(DiscoveryError) in
            let discovery = try AvahiDiscovery()
            let instance = (isPrivate ? nil : identity.name) ?? "nearcard-\(identity.fingerprint.prefix(8))"
            let txt = TXTRecord(fingerprint: identity.fingerprint, name: isPrivate ? nil : identity.name)
            return (discovery, try discovery.publish(instanceName: instance, port: port, txt: txt, interfaces: interfaces))
        }
    }

    static func printEvents(_ stream: AsyncStream<NodeEvent>, database: NearcardDatabase) async {
        for await event in stream {
            switch event {
            case .exchangeCompleted(_, let contact, let mine, let theirs):
                Console.out("")
                ExchangeDisplay.completed(contact, myMessage: mine, theirMessage: theirs, database: database)
            case .exchangeFailed(_, let peer, let error, let byPeer):
                let who = peer?.name ?? peer?.did ?? "a peer"
                Console.out("✘ Exchange with \(who) \(byPeer ? "ended by them" : "failed"): \(error.message) (\(error.code.rawValue)); nothing was stored")
            case .messageReceived(let m):
                Console.out("✉ Message from \(m.contactName ?? m.fromDID): \(m.text)")
            case .messageRefused(let remote, let reason, _):
                Console.err("nearcard: refused a message delivery from \(remote): \(reason)")
            case .messageDelivered(let m):
                Console.out("✔ Delivered your message to \(m.contactName)")
            case .messageGaveUp(let m):
                Console.out("✘ Gave up delivering your message to \(m.contactName): \(m.lastError ?? "")")
            case .rateLimited(let address, let reason):
                Console.err("nearcard: refusing connections from \(address): \(reason)")
            case .error(let message):
                Console.err("nearcard: \(message)")
            default:
                break
            }
        }
    }
}
