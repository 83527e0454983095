import ArgumentParser
import Foundation
import NearcardCrypto
import NearcardDiscovery
import NearcardModel
import NearcardNode

/// `nearcard exchange PEER`: dial a peer and exchange cards.
struct Exchange: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Exchange cards with a peer on the LAN.",
        discussion: """
        PEER is an instance name or display name (as `nearcard peers` shows), a fingerprint prefix \
        (4+ hex digits), or HOST:PORT (no multicast needed). Shows the check code both screens must \
        agree on, asks for consent (--yes gives it), and prints the new contact. \
        Exit 0 exchanged; 1 declined or a check failed; 2 no peer, or several, answer to PEER; 4 \
        unreachable or timed out.
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
        var options = NodeRuntime.Options()
        options.interfaces = interfaces
        let node = NodeRuntime.open(context: context, options: options)
        try node.checkCanStore()
        let target = try await node.target(for: peer, wait: timeout)
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
        let result = try await node.exchange(with: target, consent: consent)
        switch result {
        case .completed(let contact, let outcome):
            if json {
                var o = contact.json.objectValue!
                o["sas"] = .string(outcome.sas)
                Console.json(.object(o))
            } else {
                ExchangeDisplay.completed(contact, myMessage: outcome.myMessage, theirMessage: outcome.theirMessage, database: context.database)
            }
        case .failed:
            if let failure = result.failure { throw failure }
        }
    }
}
