import ArgumentParser
import Foundation
import NearcardCrypto
import NearcardDiscovery
import NearcardModel
import NearcardNode
import NearcardStore

/// `nearcard listen`: publish this node and serve exchanges until Ctrl-C.
struct Listen: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Publish this node on the LAN (DNS-SD, _nearcard._tcp) and serve card exchanges until Ctrl-C.",
        discussion: """
        With --accept ask (the default) each request shows who is asking and the check code, and waits \
        for y/N at the terminal. Without a terminal, ask declines every request and says why: give \
        --accept all or --accept allowlist:FILE (one DID per line) to run unattended. With --jsonl the \
        node speaks JSON lines (docs/JSONL.md): events on stdout, commands on stdin, and --accept ask \
        waits for accept/decline commands. Exits 0 on Ctrl-C (SIGINT or SIGTERM) or a quit command.
        """)

    @OptionGroup var global: GlobalOptions
    @OptionGroup var node: NodeOptions

    @Option(help: ArgumentHelp("Who to accept: ask, all, or allowlist:FILE.", valueName: "POLICY"))
    var accept: String = "ask"

    @Option(help: "Ephemeral message sent with your card in every exchange (at most 140 characters).")
    var message: String?

    @Flag(help: "Speak JSON lines: events on stdout, commands on stdin (docs/JSONL.md).")
    var jsonl = false

    func validate() throws {
        if let message, let problem = ProximityPayload.messageProblem(message) { throw ValidationError(problem) }
        if !(accept == "ask" || accept == "all" || accept.hasPrefix("allowlist:")) {
            throw ValidationError("--accept is ask, all, or allowlist:FILE")
        }
    }

    func run() async throws {
        let consent: ConsentProvider
        switch accept {
        case "all":
            consent = AcceptAll(message: message)
        case "ask" where jsonl:
            consent = DecidedByCommand(decisions: PendingDecisions(), message: message)
        case "ask":
            if Console.stdinIsTerminal {
                consent = TerminalConsent(prompter: Prompter(), message: message, timeout: node.consentTimeout)
            } else {
                consent = DeclineAll(reason: "no terminal to ask on and no --accept policy")
                Console.err("nearcard: no terminal: every request will be declined (use --accept all or --accept allowlist:FILE)")
            }
        default:
            consent = AcceptAllowlist(dids: try NodeSetup.allowlist(String(accept.dropFirst("allowlist:".count))), message: message)
        }
        try await NodeCommand.serve(global: global, node: node, consent: consent, limits: node.limits(), requiredFields: [],
                                    jsonl: jsonl)
    }
}

/// `nearcard bot --policy FILE`: an unattended node whose written policy decides, speaking JSON lines.
struct Bot: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run an unattended exchange bot: a policy file decides, events go out as JSON lines.",
        discussion: """
        The policy (docs/JSONL.md "Bot policy") says whom to accept (everyone, an allowlist of DIDs, only \
        peers whose card discloses given fields), the message to send ({name} is the peer's name), rate \
        limits per peer and overall, the most sessions at once, and what to do with people already in the \
        contact book. Commands on stdin as for listen --jsonl (accept and decline are the policy's). \
        --check reads the policy, prints it as JSON and exits. See examples/bot for a ready bot and a systemd unit.
        """)

    @OptionGroup var global: GlobalOptions
    @OptionGroup var node: NodeOptions

    @Option(help: ArgumentHelp("The policy file (JSON).", valueName: "FILE"))
    var policy: String

    @Flag(help: "Only check the policy file and print what it means.")
    var check = false

    func run() async throws {
        guard let data = FileManager.default.contents(atPath: policy) else {
            throw CLIError(.malformedInput, "cannot read the policy file \(policy)")
        }
        let parsed: BotPolicy
        do {
            parsed = try BotPolicy.parse(Array(data), source: policy, directory: (policy as NSString).deletingLastPathComponent.ifEmpty("."))
        } catch {
            throw CLIError(.malformedInput, error.description)
        }
        if check {
            Console.json(Self.describe(parsed))
            return
        }
        let db = try global.database()
        try await NodeCommand.serve(global: global, node: node, consent: PolicyConsent(policy: parsed, database: db),
                                    limits: parsed.limits(node.limits()), requiredFields: parsed.requireFields, jsonl: true)
    }

    static func describe(_ p: BotPolicy) -> JSONValue {
        var o = JSONObject()
        switch p.accept {
        case .everyone: o["accept"] = "everyone"
        case .allowlist(let dids): o["accept"] = ["allowlist": .array(dids.sorted().map { .string($0) })]
        }
        o["requireFields"] = .array(p.requireFields.map(\.rawValue).sorted().map { .string($0) })
        o["message"] = p.messageTemplate.map { .string($0) } ?? .null
        func rate(_ r: BotPolicy.Rate?) -> JSONValue { r.map { ["count": .number(Double($0.count)), "seconds": .number($0.seconds)] } ?? .null }
        o["rateLimits"] = ["perPeer": rate(p.perPeer), "overall": rate(p.overall)]
        o["maxConcurrentSessions"] = p.maxConcurrentSessions.map { .number(Double($0)) } ?? .null
        o["knownContact"] = .string(p.knownContact.rawValue)
        return .object(o)
    }
}

/// The options of a serving node (listen, bot).
struct NodeOptions: ParsableArguments {
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

    @Option(help: "Seconds a person (or program) has to decide on a request.")
    var consentTimeout: Double = 60

    @Option(help: "Sessions open at once (default 256).")
    var maxSessions: Int?

    @Option(help: "Sessions open at once from one address (default 8).")
    var maxSessionsPerAddress: Int?

    @Option(help: "New connections per address per minute (default 120).")
    var connectionsPerMinute: Int?

    func validate() throws {
        if !(0...65535).contains(port) { throw ValidationError("--port must be 0…65535") }
        if consentTimeout <= 0 || consentTimeout > 3600 { throw ValidationError("--consent-timeout must be between 0 and 3600 seconds") }
        for (name, v, top) in [("--max-sessions", maxSessions, 100_000), ("--max-sessions-per-address", maxSessionsPerAddress, 100_000),
                               ("--connections-per-minute", connectionsPerMinute, 1_000_000)] {
            if let v, !(1...top).contains(v) { throw ValidationError("\(name) must be between 1 and \(top)") }
        }
    }

    func limits() -> NodeLimits {
        var l = NodeLimits()
        l.consentTimeout = consentTimeout
        if let maxSessions { l.maximumSessions = maxSessions }
        if let maxSessionsPerAddress { l.maximumSessionsPerAddress = maxSessionsPerAddress }
        if let connectionsPerMinute { l.connectionsPerAddressPerMinute = connectionsPerMinute }
        return l
    }

    var runtime: NodeRuntime.Options {
        var o = NodeRuntime.Options()
        o.port = port
        o.discovery = !noDiscovery
        o.isPrivate = `private`
        o.interfaces = interfaces
        o.excludedInterfaces = excluded
        return o
    }
}

/// Serving a node until Ctrl-C or quit, for people (lines of text) or programs (JSON lines).
enum NodeCommand {
    static func serve(global: GlobalOptions, node: NodeOptions, consent: ConsentProvider, limits: NodeLimits, requiredFields: Set<CardField>,
                      jsonl: Bool) async throws {
        NodeSetup.raiseOpenFileLimit()
        let events = EventBus()
        let context = try NodeSetup.context(global, consent: consent, events: events, limits: limits, requiredFields: requiredFields)
        let identity = context.identity
        // JSON lines: the session in Node writes every event from now on (so none is missed) and, once the
        // node runs, answers commands; this face only moves the lines.
        let session = jsonl ? JSONLinesSession(context: context, output: { Console.line($0) }) : nil
        if try context.database.myCard() == nil {
            let note = "you have no card yet; peers will get only your name (set one with: nearcard card set …)"
            if let session { session.warn(note) } else { Console.err("nearcard: \(note)") }
        }
        let printer: Task<Void, Never>? = jsonl ? nil : Task { [stream = events.subscribe()] in
            await printEvents(stream, database: context.database)
        }
        let runtime: NodeRuntime
        do { runtime = try await NodeRuntime.start(context: context, options: node.runtime) } catch {
            printer?.cancel()
            throw CLIError(.environment, "cannot listen on port \(node.port): \(error)")
        }
        if !jsonl {
            let label = identity.name.map { "“\($0)”" } ?? "(no name)"
            Console.out("Listening on port \(runtime.port ?? node.port) as \(label), fingerprint \(identity.fingerprint). Ctrl-C to stop.")
        }

        let (stop, stopper) = AsyncStream.makeStream(of: Void.self)
        session?.serve(runtime, commands: StdinLines.stream(), quit: { stopper.yield() })
        let interrupts = NodeSetup.interrupts()
        let signals = Task { for await _ in interrupts { stopper.yield(); return } }
        for await _ in stop { break }
        signals.cancel()
        if let session {
            await runtime.stop()
            await session.finish()
        } else {
            Console.out("\nStopping…")
            await runtime.stop()
            // Let the printer write what is already queued.
            try? await Task.sleep(nanoseconds: 50_000_000)
            events.finish()
            await printer?.value
        }
    }

    static func printEvents(_ stream: AsyncStream<NodeEvent>, database: NearcardDatabase) async {
        for await event in stream {
            switch event {
            case .exchangeCompleted(_, let contact, let mine, let theirs, _):
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
            case .published(let name):
                Console.out("Published on the LAN as “\(name)” (\(TXTRecord.serviceType)).")
            case .discoveryUnavailable(let message):
                Console.err("nearcard: discovery unavailable: \(message). Peers can still reach you at HOST:PORT.")
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
