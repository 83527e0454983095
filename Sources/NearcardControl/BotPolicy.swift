import Foundation
import NearcardCrypto
public import NearcardModel
public import NearcardNode
import NearcardProtocol

/// What an unattended bot does (`nearcard bot --policy FILE`, docs/JSONL.md "Bot policy"): a JSON
/// object, strictly read (unknown members are refused, so a typo cannot silently widen the policy).
///
///     {"version": 1,
///      "accept": "everyone" | {"allowlist": ["did:key:…"]} | {"allowlistFile": "dids.txt"},
///      "requireFields": ["email"],
///      "message": "Thanks for stopping by, {name}!",
///      "rateLimits": {"perPeer": {"count": 3, "seconds": 3600}, "overall": {"count": 600, "seconds": 60}},
///      "maxConcurrentSessions": 64,
///      "knownContact": "update" | "decline",
///      "webhook": {"url": "https://crm.example/nearcard", "secret": "…" | "secretFile": "webhook.secret"}}
public struct BotPolicy: Sendable, Equatable {
    public enum Accept: Sendable, Equatable {
        case everyone
        case allowlist(Set<String>)
    }

    /// What to do when the contact book already has the peer's DID.
    public enum KnownContact: String, Sendable, Equatable {
        /// Exchange again; the contact is updated in place.
        case update
        /// Decline: one exchange per person.
        case decline
    }

    /// At most `count` acceptances in any `seconds` (counted in the store: `admitAcceptance`).
    public typealias Rate = AcceptanceLimit

    public var accept: Accept = .everyone
    public var requireFields: Set<CardField> = []
    /// The ephemeral message; `{name}` becomes the peer's name (or "there"), `{fingerprint}` its fingerprint.
    public var messageTemplate: String?
    public var perPeer: Rate?
    public var overall: Rate?
    public var maxConcurrentSessions: Int?
    public var knownContact: KnownContact = .update
    /// Where each completed exchange is posted (signed with the secret), if anywhere.
    public var webhook: Webhook?

    public static let version = 1
    static let maximumLength = 1 << 20

    init() {}

    public struct Failure: Error, Sendable, CustomStringConvertible {
        public let description: String
    }

    /// Reads a policy; `source` names it in errors, relative `allowlistFile` paths are read from `directory`.
    public static func parse(_ bytes: [UInt8], source: String, directory: String) throws(Failure) -> BotPolicy {
        func fail(_ why: String) -> Failure { Failure(description: "\(source): \(why)") }
        guard bytes.count <= maximumLength else { throw fail("larger than \(maximumLength) bytes") }
        let value: JSONValue
        do { value = try JSONParser(maximumDepth: 8, maximumLength: maximumLength).parse(bytes) } catch {
            throw fail("not valid JSON (\(error.message))")
        }
        guard let o = value.objectValue else { throw fail("a policy is a JSON object") }
        let known: Set<String> = ["version", "accept", "requireFields", "message", "rateLimits", "maxConcurrentSessions", "knownContact", "webhook"]
        if let extra = o.keys.sorted().first(where: { !known.contains($0) }) {
            throw fail("unknown member \"\(extra)\" (known: \(known.sorted().joined(separator: ", ")))")
        }
        guard o["version"]?.integerValue == Int64(version) else { throw fail("\"version\" must be \(version)") }
        var p = BotPolicy()
        switch o["accept"] {
        case nil, .string("everyone"):
            p.accept = .everyone
        case .object(let a) where a.count == 1 && a["allowlist"] != nil:
            guard let list = a["allowlist"]?.arrayValue else { throw fail("\"accept.allowlist\" must be an array of DIDs") }
            var dids = Set<String>()
            for item in list {
                guard let did = item.stringValue, (try? DIDKey(parsing: did)) != nil else {
                    throw fail("\"accept.allowlist\" holds \(item.compactText), which is not a did:key")
                }
                dids.insert(did)
            }
            p.accept = .allowlist(dids)
        case .object(let a) where a.count == 1 && a["allowlistFile"] != nil:
            guard let file = a["allowlistFile"]?.stringValue else { throw fail("\"accept.allowlistFile\" must be a path") }
            let path = file.hasPrefix("/") ? file : directory + "/" + file
            p.accept = .allowlist(try readAllowlist(path, fail: fail))
        default:
            throw fail(
                "\"accept\" must be \"everyone\", {\"allowlist\": [DID…]} or {\"allowlistFile\": PATH}, not \(o["accept"]?.compactText.prefix(64) ?? "")")
        }
        if let fields = o["requireFields"] {
            guard let list = fields.arrayValue else { throw fail("\"requireFields\" must be an array of field names") }
            for f in list {
                guard let name = f.stringValue, let field = CardField(rawValue: name) else {
                    throw fail("\"requireFields\" holds \(f.compactText); fields are \(CardField.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                p.requireFields.insert(field)
            }
        }
        if let m = o["message"] {
            guard let template = m.stringValue else { throw fail("\"message\" must be a string") }
            // {name} and {fingerprint} are filled in; another {word} would go out as typed: a typo, refused.
            for placeholder in template.matches(of: /\{[A-Za-z_][A-Za-z0-9_]*\}/) where !["{name}", "{fingerprint}"].contains(String(placeholder.output)) {
                throw fail("\"message\": unknown placeholder \(placeholder.output) (known: {name}, {fingerprint})")
            }
            // The longest name a hello may carry is 64 characters: the message must fit with it.
            let longest = render(template, name: String(repeating: "x", count: 64), fingerprint: String(repeating: "0", count: 16))
            if let problem = ProximityPayload.messageProblem(longest) {
                throw fail("\"message\" with a 64-character name: \(problem)")
            }
            p.messageTemplate = template
        }
        if let r = o["rateLimits"] {
            guard let ro = r.objectValue else { throw fail("\"rateLimits\" must be an object") }
            if let extra = ro.keys.first(where: { $0 != "perPeer" && $0 != "overall" }) { throw fail("unknown member \"rateLimits.\(extra)\"") }
            func rate(_ key: String) throws(Failure) -> Rate? {
                guard let v = ro[key] else { return nil }
                guard let x = v.objectValue, x.count == 2, let count = x["count"]?.integerValue, let seconds = x["seconds"]?.doubleValue,
                    count >= 1, count <= 1_000_000, seconds > 0, seconds <= 30 * 86400
                else {
                    throw fail("\"rateLimits.\(key)\" must be {\"count\": 1…1000000, \"seconds\": up to 30 days}")
                }
                return Rate(count: Int(count), seconds: seconds)
            }
            p.perPeer = try rate("perPeer")
            p.overall = try rate("overall")
        }
        if let m = o["maxConcurrentSessions"] {
            guard let n = m.integerValue, (1...10_000).contains(n) else { throw fail("\"maxConcurrentSessions\" must be 1…10000") }
            p.maxConcurrentSessions = Int(n)
        }
        if let k = o["knownContact"] {
            guard let s = k.stringValue, let v = KnownContact(rawValue: s) else { throw fail("\"knownContact\" is \"update\" or \"decline\"") }
            p.knownContact = v
        }
        if let w = o["webhook"] {
            p.webhook = try Webhook.parse(w, directory: directory, fail: fail)
        }
        return p
    }

    static func readAllowlist(_ path: String, fail: (String) -> Failure) throws(Failure) -> Set<String> {
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else {
            throw fail("cannot read the allowlist file \(path)")
        }
        var dids = Set<String>()
        for (n, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)[0].trimmingCharacters(in: .whitespaces)
            if line.isEmpty { continue }
            guard (try? DIDKey(parsing: line)) != nil else { throw fail("\(path) line \(n + 1) is not a did:key") }
            dids.insert(line)
        }
        return dids
    }

    /// One pass over the template: a placeholder inside the peer's name stays as the peer wrote it.
    static func render(_ template: String, name: String, fingerprint: String) -> String {
        var out = ""
        var rest = template[...]
        while let open = rest.firstIndex(of: "{") {
            out += rest[..<open]
            let tail = rest[open...]
            if tail.hasPrefix("{name}") {
                out += name
                rest = tail.dropFirst("{name}".count)
            } else if tail.hasPrefix("{fingerprint}") {
                out += fingerprint
                rest = tail.dropFirst("{fingerprint}".count)
            } else {
                out += "{"
                rest = tail.dropFirst()
            }
        }
        return out + rest
    }

    /// The message for a peer, or nil when the policy sends none.
    public func message(for peer: PeerIdentity) -> String? {
        messageTemplate.map { Self.render($0, name: peer.name ?? "there", fingerprint: peer.fingerprint) }
    }

    /// The node limits this policy implies.
    public func limits(_ base: NodeLimits) -> NodeLimits {
        var l = base
        if let m = maxConcurrentSessions { l.maximumSessions = m }
        return l
    }
}

/// A bot's consent: the policy decides each request. Its rate counts are kept in the store
/// (`Book.admitAcceptance`): they survive a restart, and a fleet on one PostgreSQL database
/// shares them.
public final class PolicyConsent: ConsentProvider, Sendable {
    let policy: BotPolicy
    let book: Book

    public init(policy: BotPolicy, book: Book) {
        self.policy = policy
        self.book = book
    }

    public func decide(_ request: ConsentRequest) async -> ConsentAnswer {
        decide(request.peer, now: Date())
    }

    /// A policy decides at once, on the session's loop, when what it reads is the home's SQLite file (the
    /// book for `knownContact: decline`, the rate counts). A fleet's PostgreSQL store, a round trip away,
    /// is asked from a task.
    public func immediateAnswer(_ request: ConsentRequest) -> ConsentAnswer? {
        if book.isShared && (policy.knownContact == .decline || policy.perPeer != nil || policy.overall != nil) { return nil }
        return decide(request.peer, now: Date())
    }

    public func acceptanceMessage(_ request: ConsentRequest) -> String? { policy.message(for: request.peer) }

    /// The decision for a peer at a time (synchronous, for tests).
    func decide(_ peer: PeerIdentity, now: Date) -> ConsentAnswer {
        if case .allowlist(let dids) = policy.accept, !dids.contains(peer.did) {
            return .decline("not on this bot's allowlist")
        }
        if policy.knownContact == .decline, let known = try? book.findContact(peer.did), known.didPublicKey == peer.did {
            return .decline("this bot has already exchanged cards with you")
        }
        if policy.perPeer != nil || policy.overall != nil {
            do {
                switch try book.admitAcceptance(did: peer.did, perPeer: policy.perPeer, overall: policy.overall, now: now) {
                case .admitted: break
                case .perPeerLimit(let r):
                    return .decline("rate limited: at most \(r.count) exchanges per \(Self.duration(r.seconds)) with one person")
                case .overallLimit(let r):
                    return .decline("rate limited: this bot is at its limit of \(r.count) exchanges per \(Self.duration(r.seconds))")
                }
            } catch {
                // Counts that cannot be read cannot be kept: refuse rather than let everyone through.
                return .decline("this bot cannot check its rate limits just now")
            }
        }
        return ConsentAnswer(accept: true, message: policy.message(for: peer))
    }

    static func duration(_ s: Double) -> String {
        if s.truncatingRemainder(dividingBy: 3600) == 0 { return "\(Int(s / 3600)) h" }
        if s.truncatingRemainder(dividingBy: 60) == 0 { return "\(Int(s / 60)) min" }
        return "\(s) s"
    }
}
