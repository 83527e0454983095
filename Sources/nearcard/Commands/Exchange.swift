import ArgumentParser
import Foundation
import NearcardControl
import NearcardCrypto
import NearcardDiscovery
import NearcardModel
import NearcardNode
import NearcardScan

/// `nearcard exchange PEER`: dial a peer and exchange cards.
struct Exchange: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "exchange",
        abstract: t("Exchange cards with a peer on the LAN."),
        discussion: t(
            """
            PEER is a name as `nearcard peers` shows it (an announced name, or a contact recognised by \
            their presence tag, even in private mode: then their node must prove it is them), a contact's \
            DID, a peer ID from `nearcard peers` (4+ of its hex digits), or HOST:PORT (no multicast \
            needed). Shows the check code both screens must \
            agree on, asks for consent (--yes gives it), and prints the new contact. With --invite (the text \
            of someone's `nearcard qr invite` code) or --invite-image (a photo or PNG of it), no discovery \
            and no check code are needed: their node is dialled at the addresses the invitation gives and \
            must prove the key it names; the invitation is both people's consent. \
            Exit 0 exchanged; 1 a check failed (their card or identity); 2 no peer, or several, answer to \
            PEER; 7 declined (or no decision in time); 8 unreachable (no address took the connection, or \
            their node was at a limit); 9 the connection dropped during the exchange; 10 they stopped \
            answering; 11 the cards crossed but their node has not yet confirmed it kept yours (settled when \
            your nodes next reach each other); 130 stopped by Ctrl-C, which says what that left on each side \
            (before the cards crossed: nothing, on either). With --json a failure prints {"error": {"exit", "message"}} \
            on stdout as well.
            """))

    @OptionGroup var global: GlobalOptions

    @Argument(help: ArgumentHelp(t("A name or peer ID as `nearcard peers` shows it, a contact's DID, or HOST:PORT.")))
    var peer: String?

    @Option(help: ArgumentHelp(t("An invitation's text (nearcard-invite:…), from `nearcard qr invite` or any QR scanner."), valueName: "TEXT"))
    var invite: String?

    @Option(help: ArgumentHelp(t("An image (PNG or JPEG) of an invitation's QR code."), valueName: "FILE"))
    var inviteImage: String?

    @Option(help: ArgumentHelp(t("Ephemeral message sent with your card (at most 140 characters).")))
    var message: String?

    @Flag(name: .shortAndLong, help: ArgumentHelp(t("Consent without asking.")))
    var yes = false

    @Flag(help: ArgumentHelp(t("Print the new contact as JSON.")))
    var json = false

    @Option(parsing: .unconditional, help: ArgumentHelp(t("Seconds to look for PEER on the LAN.")))
    var timeout: Double = 5

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            t(
                "Seconds to keep trying to connect when the peer does not answer (a lossy or slow network): attempts with longer waits, in all."
            ),
            valueName: "SECONDS"))
    var connectBudget: Double = 30

    @Option(name: .customLong("interface"), help: ArgumentHelp(t("Look for PEER only on this interface; repeatable."), valueName: "IF"))
    var interfaces: [String] = []

    func validate() throws {
        if [peer != nil, invite != nil, inviteImage != nil].filter({ $0 }).count != 1 {
            throw ValidationError(t("give one of PEER, --invite TEXT or --invite-image FILE"))
        }
        if let message, let problem = ProximityPayload.messageProblemPhrase(message) { throw ValidationError(t.say(problem)) }
        if !(timeout > 0 && timeout <= 600) { throw ValidationError(t("--timeout must be more than 0 and at most 600 seconds")) }
        if !(connectBudget >= 1 && connectBudget <= 600) { throw ValidationError(t("--connect-budget must be between 1 and 600 seconds")) }
    }

    func run() async throws {
        // Ctrl-C (or SIGTERM) mid-exchange: what happened on this side and what the other sees, then exit 130.
        let phase = DialPhase(peer ?? t("the inviting node"))
        let json = self.json
        Task.detached {
            for await _ in NodeSetup.interrupts() {
                if let words = phase.interrupted {
                    if json {
                        Console.json(["error": ["exit": .number(Double(Exit.interrupted.rawValue)), "message": .string(words)]])
                    } else {
                        Console.err("\nnearcard: " + words)
                    }
                }
                Foundation.exit(Exit.interrupted.rawValue)
            }
        }
        do { try await exchange(phase) } catch {
            // --json: a failure is a JSON result too (an unconfirmed exchange printed its contact already).
            let (code, message) = classify(error)
            if json && code != .unconfirmed { Console.json(["error": ["exit": .number(Double(code.rawValue)), "message": .string(message)]]) }
            throw error
        }
    }

    func exchange(_ phase: DialPhase) async throws {
        defer { phase.reached(.over) }
        if invite != nil || inviteImage != nil { return try await exchangeByInvitation(phase) }
        let peer = self.peer ?? ""
        let consent: any ConsentProvider
        if yes {
            consent = AcceptAll(message: message)
        } else if Console.stdinIsTerminal {
            var asking = TerminalConsent(prompter: Prompter(), message: message, timeout: NodeLimits().consentTimeout)
            asking.answered = { yes in if yes { phase.reached(.crossing) } }
            consent = asking
        } else {
            throw CLIError(.malformedInput, t("no terminal to ask for consent on: pass --yes to consent"))
        }
        // One process decides for a home: with a node running on it, the exchange is that node's.
        if let node = RunningNode.link(global) {
            return try await exchange(through: node, peer: peer, consent: consent as? TerminalConsent, phase: phase)
        }
        // This node declines anything that reaches it; the dial brings the consent the person gave.
        var limits = NodeLimits()
        limits.connectBudget = connectBudget
        let context = try NodeSetup.context(global, consent: DeclineAll(reason: "not listening"), limits: limits)
        var options = NodeRuntime.Options()
        options.interfaces = interfaces
        let node = NodeRuntime.open(context, options: options)
        try node.checkCanStore()
        let target = try await node.target(for: peer, wait: timeout)
        phase.named(target.label)
        if !json { Console.out(t("Connecting to %1$@…", target.label)) }
        let events = context.events.subscribe()
        let attempts = Counter()
        let json = self.json
        let shower = Task {
            var codeShown = false
            for await event in events {
                if case .exchangeRequested(_, let p, let sas, _, _, _) = event {
                    phase.named(p.name ?? p.fingerprint)
                    // With --yes this side has consented already: the cards cross now.
                    if yes { phase.reached(.crossing) }
                    // Who answered; the code again only if it was not shown while they decided.
                    if yes && !json { Console.out(SessionStory.answered(by: p, sas: sas, codeShown: codeShown)) }
                }
                if case .exchangeCheckCode = event { phase.reached(.deciding) }
                // The code is compared while they decide, so it shows whenever a person is at this terminal.
                if case .exchangeCheckCode(_, let sas) = event, !json || !yes {
                    Console.out(SessionStory.checkCode(sas))
                    codeShown = true
                }
                Self.noteRetry(event, attempts, json: json)
            }
        }
        defer { shower.cancel() }
        let result = try await node.exchange(with: target, consent: consent)
        try show(result, database: context.book) { o, sas in
            o["sas"] = JSONValue.string(sas)
            o["attempts"] = JSONValue.number(Double(attempts.value))
        }
        await AddressBookCommand.afterExchange(context.book, quiet: json)
    }

    /// The exchange as the node running on this home makes it (its view of the LAN, its limits, its
    /// book): this command shows the code, asks the person at the terminal (`consent`; nil for
    /// --yes), and reports the one ending the node reached — the same words and exit codes as an
    /// exchange made in this process.
    func exchange(through node: NodeLink, peer: String, consent: TerminalConsent?, phase: DialPhase) async throws {
        if !json { Console.out(t("Connecting to %1$@…", peer)) }
        var command: JSONObject = ["cmd": "exchange", "peer": .string(peer), "wait": .number(timeout), "confirm": .bool(consent != nil)]
        if let message { command["message"] = .string(message) }
        let attempts = Counter()
        var codeShown = false
        let reply = try await RunningNode.call(node, command) { line in
            switch line["event"]?.stringValue {
            case "dial.retrying":
                let attempt = Int(line["attempt"]?.integerValue ?? 1)
                attempts.set(attempt)
                if !json { Console.out(SessionStory.retry(attempt: attempt, reason: line["reason"]?.stringValue ?? "no answer")) }
            case "exchange.check-code":
                phase.reached(.deciding)
                // The code is compared while they decide, so it shows whenever a person is at this terminal.
                if !json || consent != nil {
                    Console.out(SessionStory.checkCode(line["sas"]?.stringValue ?? ""))
                    codeShown = true
                }
            case "exchange.requested":
                let peer = line["peer"]
                let (name, did, sas) = (peer?["name"]?.stringValue, peer?["did"]?.stringValue ?? "", line["sas"]?.stringValue ?? "")
                guard let id = line["id"]?.stringValue else { return }
                phase.named(name ?? peer?["fingerprint"]?.stringValue ?? "")
                if consent == nil { phase.reached(.crossing) }
                if let consent, line["decision"] == "pending" {
                    let asked = SessionStory.Asked(
                        name: name, did: did, fingerprint: peer?["fingerprint"]?.stringValue ?? "", sas: sas, role: .initiator,
                        remoteAddress: line["remote"]?.stringValue ?? peer?["name"]?.stringValue ?? "")
                    let answer = await consent.ask(asked)
                    var decision: JSONObject = ["cmd": .string(answer.accept ? "accept" : "decline"), "id": .string(id)]
                    if answer.accept, let m = answer.message { decision["message"] = .string(m) }
                    if !answer.accept, let r = answer.reason { decision["reason"] = .string(r) }
                    _ = try? node.send(decision)
                } else if !json {
                    Console.out(SessionStory.answered(name: name, did: did, sas: sas, codeShown: codeShown))
                }
            default:
                break
            }
        }
        guard reply["ok"] == true else { throw RunningNode.failure(reply) }
        let db = try global.readingDatabase()
        guard let id = reply["contact"]?["id"]?.stringValue, let contact = try db.contact(id: id) else {
            throw CLIError(.software, t("the running node reported an exchange whose contact is not in the book"))
        }
        let unconfirmed = reply["unconfirmed"] == true
        if json {
            var o = contact.json.objectValue!
            o["sas"] = reply["sas"] ?? .null
            o["attempts"] = .number(Double(attempts.value))
            if let common = reply["commonContacts"] {
                o["commonContacts"] = common
                o["peerSetBound"] = reply["peerSetBound"] ?? .null
            }
            if unconfirmed {
                o["unconfirmed"] = .bool(true)
                o["reason"] = reply["reason"] ?? .null
            }
            Console.json(.object(o))
        } else {
            SessionStory.completed(contact, database: db)
        }
        if unconfirmed {
            throw CLIError(.unconfirmed, Self.unconfirmed(contact.card.name, reason: reply["reason"]?.stringValue ?? ""))
        }
        await AddressBookCommand.afterExchange(try global.database(), quiet: json)
    }

    /// What an exchange that ended before the other node confirmed leaves behind.
    static func unconfirmed(_ who: String, reason: String) -> String {
        t(
            "%1$@'s node may have kept your card: the connection ended before it confirmed (%2$@). Their card is kept here as unconfirmed; it will be confirmed or withdrawn when your nodes next reach each other.",
            who, reason)
    }

    /// Prints the new contact (`extra` adds to its JSON, given the check code), or throws the failure.
    func show(
        _ result: SessionResult, database: Book, note: String? = nil,
        extra: (inout JSONObject, String) -> Void
    ) throws {
        switch result {
        case .completed(let contact, let outcome):
            if json {
                var o = contact.json.objectValue!
                extra(&o, outcome.sas)
                if let common = outcome.commonContacts {
                    o["commonContacts"] = .array(common.common.sorted().map { .string($0) })
                    o["peerSetBound"] = .number(Double(common.peerSetBound))
                }
                Console.json(.object(o))
            } else {
                if let note { Console.out(note) }
                SessionStory.completed(contact, database: database)
            }
        case .unconfirmed(let contact, let outcome, let error):
            let words = Self.unconfirmed(contact.card.name, reason: t.say(error.phrase))
            if json {
                var o = contact.json.objectValue!
                extra(&o, outcome.sas)
                o["unconfirmed"] = .bool(true)
                o["reason"] = .string(error.message)
                Console.json(.object(o))
            } else {
                if let note { Console.out(note) }
                SessionStory.completed(contact, database: database)
            }
            throw CLIError(.unconfirmed, words)
        case .failed:
            if let failure = result.failure { throw failure }
        }
    }

    /// The invitation's text, from the option or from the image.
    func invitationText() throws -> String {
        if let invite { return invite }
        let path = inviteImage ?? ""
        let texts = try QR.Scan.codes(inImage: path)
        guard let text = texts.first(where: NodeRuntime.isInvitation) else {
            throw CLIError(.malformedInput, t("%1$@: the QR code is not a Nearcard invitation", path))
        }
        return text
    }

    /// How far an exchange got, for what an interruption (Ctrl-C) says.
    final class DialPhase: @unchecked Sendable {
        enum Stage: Int { case connecting, deciding, crossing, over }
        private let lock = NSLock()
        private var stage = Stage.connecting
        private var who: String

        init(_ who: String) { self.who = who }

        /// The stage reached (never back).
        func reached(_ s: Stage) { lock.withLock { if s.rawValue > stage.rawValue { stage = s } } }
        /// Who is at the other end, once known (an address until then).
        func named(_ name: String) { lock.withLock { if !name.isEmpty { who = name } } }

        /// What an interruption now did, on both sides; nil once the exchange is over (its outcome was said).
        var interrupted: String? {
            lock.withLock {
                let isAddress = who.first.map { $0.isNumber || $0 == "[" } ?? false
                let theirs = isAddress ? t("the node at %1$@", who) : t("%1$@'s node", who)
                switch stage {
                case .connecting:
                    return t("stopped while connecting to %1$@: nothing was stored; %2$@ sees the connection end and stores nothing", who, theirs)
                case .deciding:
                    return t("stopped before the cards crossed: nothing was stored; %1$@ sees the connection end and stores nothing", theirs)
                case .crossing:
                    return t(
                        "stopped while the cards crossed: %1$@'s card may be kept here as unconfirmed (nearcard contacts marks it), and yours there; your nodes confirm it or withdraw it on both sides when they next reach each other",
                        who)
                case .over:
                    return nil
                }
            }
        }
    }

    /// A dial that tries again: counted (for --json's `attempts`), and said to a person.
    static func noteRetry(_ event: NodeEvent, _ attempts: Counter, json: Bool) {
        guard case .stillDialing(_, let attempt, let reason) = event else { return }
        attempts.set(attempt)
        if !json { Console.out(SessionStory.retry(attempt: attempt, reason: reason)) }
    }

    /// The connection attempts a dial took (1 unless it had to try again).
    final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var n = 1
        func set(_ v: Int) { lock.withLock { n = max(n, v) } }
        var value: Int { lock.withLock { n } }
    }

    func exchangeByInvitation(_ phase: DialPhase) async throws {
        let invitation = try NodeRuntime.invitation(try invitationText())
        phase.named(invitation.name ?? invitation.fingerprint)
        let context = try NodeSetup.context(global, consent: DeclineAll(reason: "not listening"))
        let node = NodeRuntime.open(context)
        try node.checkCanStore()
        if !json {
            Console.out(t("Connecting to %1$@ at %2$@…", invitation.name ?? invitation.fingerprint, invitation.addresses.joined(separator: ", ")))
        }
        // The same --json members as an exchange by name or address (sas, attempts), and `invited`.
        let events = context.events.subscribe()
        let attempts = Counter()
        let json = self.json
        let counter = Task {
            for await event in events {
                // The invitation stands for both decisions: once the session is up, the cards cross.
                if case .exchangeCheckCode = event { phase.reached(.crossing) }
                Self.noteRetry(event, attempts, json: json)
            }
        }
        defer { counter.cancel() }
        try show(
            try await node.exchange(invitation: invitation, message: message), database: context.book,
            note: t("Invited by QR: their key was the one the invitation names, so no code needed comparing.")
        ) { o, sas in
            o["sas"] = JSONValue.string(sas)
            o["attempts"] = JSONValue.number(Double(attempts.value))
            o["invited"] = JSONValue.bool(true)
        }
        await AddressBookCommand.afterExchange(context.book, quiet: json)
    }
}
