import ArgumentParser
import Foundation
import NearcardCrypto
import NearcardDiscovery
import NearcardModel
import NearcardNode
import NearcardStore

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
                                    limits: parsed.limits(node.limits()), requiredFields: parsed.requireFields, jsonl: true,
                                    defaultLogLevel: .info, webhook: parsed.webhook)
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
        // The URL only: the secret is never printed.
        o["webhook"] = p.webhook.map { ["url": .string($0.url), "secret": "(set)"] } ?? .null
        return .object(o)
    }
}
