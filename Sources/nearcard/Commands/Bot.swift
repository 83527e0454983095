import ArgumentParser
import Foundation
import Logging
import NearcardControl
import NearcardCrypto
import NearcardDiscovery
import NearcardModel
import NearcardNode

/// `nearcard bot --policy FILE`: an unattended node whose written policy decides, speaking JSON lines.
struct Bot: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bot",
        abstract: t("Run an unattended exchange bot: a policy file decides, events go out as JSON lines."),
        discussion: t(
            """
            The policy (docs/JSONL.md "Bot policy") says whom to accept (everyone, an allowlist of DIDs, only \
            peers whose card discloses given fields), the message to send ({name} is the peer's name), rate \
            limits per peer and overall, the most sessions at once, and what to do with people already in the \
            contact book. Commands on stdin as for listen --jsonl (accept and decline are the policy's). \
            --check reads the policy, prints it as JSON and exits. See examples/bot for a ready bot and a systemd unit.
            """
        ))

    @OptionGroup var global: GlobalOptions
    @OptionGroup var node: NodeOptions

    @Option(help: ArgumentHelp(t("The policy file (JSON)."), valueName: "FILE"))
    var policy: String

    @Flag(help: ArgumentHelp(t("Only check the policy file and print what it means.")))
    var check = false

    func run() async throws {
        guard let data = FileManager.default.contents(atPath: policy) else {
            throw CLIError(.malformedInput, t("cannot read the policy file %1$@", policy))
        }
        let parsed: BotPolicy
        do {
            parsed = try BotPolicy.parse(Array(data), source: policy, directory: (policy as NSString).deletingLastPathComponent.ifEmpty("."))
        } catch {
            throw CLIError(.malformedInput, error.description)
        }
        if check {
            Console.json(Self.describe(parsed, sessions: node.limits().maximumSessions))
            return
        }
        // No identity, no bot: said before anything is made in the home (a database included).
        _ = try global.identity()
        let db = try global.database()
        try await NodeCommand.serve(
            global: global, node: node, consent: PolicyConsent(policy: parsed, book: db),
            limits: parsed.limits(node.limits()), requiredFields: parsed.requireFields, jsonl: true,
            defaultLogLevel: .info, webhook: parsed.webhook, command: "bot")
    }

    /// The policy as it was read, in its own format (it reads back as the same policy), with every
    /// default filled in and the webhook's secret withheld. `sessions`: the session cap without one in
    /// the policy (`--max-sessions`).
    static func describe(_ p: BotPolicy, sessions: Int) -> JSONValue {
        var o = JSONObject()
        o["version"] = .number(Double(BotPolicy.version))
        switch p.accept {
        case .everyone: o["accept"] = "everyone"
        case .allowlist(let dids): o["accept"] = ["allowlist": .array(dids.sorted().map { .string($0) })]
        }
        o["requireFields"] = .array(p.requireFields.map(\.rawValue).sorted().map { .string($0) })
        if let m = p.messageTemplate { o["message"] = .string(m) }
        var rates = JSONObject()
        if let r = p.perPeer { rates["perPeer"] = ["count": .number(Double(r.count)), "seconds": .number(r.seconds)] }
        if let r = p.overall { rates["overall"] = ["count": .number(Double(r.count)), "seconds": .number(r.seconds)] }
        if !rates.isEmpty { o["rateLimits"] = .object(rates) }
        o["maxConcurrentSessions"] = .number(Double(p.maxConcurrentSessions ?? sessions))
        o["knownContact"] = .string(p.knownContact.rawValue)
        // The URL only: the secret is never printed (this placeholder is too short to be taken for one).
        if let w = p.webhook { o["webhook"] = ["url": .string(w.url), "secret": "(not shown)"] }
        return .object(o)
    }
}
