import ArgumentParser
import Foundation
import NearcardCrypto
import NearcardDiscovery
import NearcardModel
import NearcardNode

/// `nearcard listen`: publish this node and serve exchanges until Ctrl-C.
struct Listen: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "listen",
        abstract: t("Publish this node on the LAN (DNS-SD, _nearcard._tcp) and serve card exchanges until Ctrl-C."),
        discussion: t(
            """
            With --accept ask (the default) each request shows who is asking and the check code, and waits \
            for y/N at the terminal. Without a terminal, ask declines every request and says why: give \
            --accept all or --accept allowlist:FILE (one DID per line) to run unattended. With --jsonl the \
            node speaks JSON lines (docs/JSONL.md): events on stdout, commands on stdin, and --accept ask \
            waits for accept/decline commands. Exits 0 on Ctrl-C (SIGINT or SIGTERM) or a quit command.
            """
        ))

    @OptionGroup var global: GlobalOptions
    @OptionGroup var node: NodeOptions

    @Option(help: ArgumentHelp(t("Who to accept: ask, all, or allowlist:FILE."), valueName: "POLICY"))
    var accept: String = "ask"

    @Option(help: ArgumentHelp(t("Ephemeral message sent with your card in every exchange (at most 140 characters).")))
    var message: String?

    @Flag(help: ArgumentHelp(t("Speak JSON lines: events on stdout, commands on stdin (docs/JSONL.md).")))
    var jsonl = false

    func validate() throws {
        if let message, let problem = ProximityPayload.messageProblemPhrase(message) { throw ValidationError(t.say(problem)) }
        if !(accept == "ask" || accept == "all" || accept.hasPrefix("allowlist:")) {
            throw ValidationError(t("--accept is ask, all, or allowlist:FILE"))
        }
    }

    func run() async throws {
        // No identity, no node: say that alone, before any word about how requests would be answered.
        _ = try global.identity()
        let consent: any ConsentProvider
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
                Console.err("nearcard: " + t("no terminal: every request will be declined (use --accept all or --accept allowlist:FILE)"))
            }
        default:
            consent = AcceptAllowlist(dids: try NodeSetup.allowlist(String(accept.dropFirst("allowlist:".count))), message: message)
        }
        try await NodeCommand.serve(
            global: global, node: node, consent: consent, limits: node.limits(), requiredFields: [],
            jsonl: jsonl)
    }
}
