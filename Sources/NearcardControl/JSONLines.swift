public import Foundation
public import NearcardCrypto
public import NearcardDiscovery
import NearcardModel
public import NearcardNode
import NearcardProtocol

/// The JSON-lines interface for programs (docs/JSONL.md): every node event as one JSON object, and
/// commands read one per line. Schema version 1; a reader must ignore members it does not know.
public enum JSONLines {
    static let schemaVersion = 1
    /// The longest command line read; longer lines are refused (and skipped) with an error event.
    public static let maximumCommandLength = 64 * 1024

    /// An event line: `{"v":1,"event":NAME,"time":…, …members}`.
    public static func line(_ event: String, _ members: JSONObject = [:], now: Date = Date()) -> JSONValue {
        var o: JSONObject = ["v": .number(Double(schemaVersion)), "event": .string(event), "time": .string(timestamp(now))]
        for (k, v) in members where o[k] == nil { o[k] = v }
        return .object(o)
    }

    /// ISO 8601, UTC, milliseconds.
    static func timestamp(_ date: Date) -> String { ISO8601.millisecondString(date) }

    /// The line for a node event.
    public static func encode(_ event: NodeEvent, identity: PublicIdentity) -> JSONValue? {
        switch event {
        case .listening(let port, let addresses):
            return line(
                "started",
                [
                    "did": .string(identity.did), "fingerprint": .string(identity.fingerprint),
                    "name": identity.name.map { .string($0) } ?? .null, "port": .number(Double(port)),
                    "addresses": .array(addresses.map { .string($0) }), "schema": .number(Double(schemaVersion)),
                ])
        case .published(let name):
            return line("published", ["instance": .string(name)])
        case .discoveryUnavailable(let message):
            return line("discovery-unavailable", ["message": .string(message)])
        case .peerFound(let p):
            return line("peer.found", p.json.objectValue ?? [:])
        case .peerLost(let name):
            return line("peer.lost", ["instance": .string(name)])
        case .stillDialing(let target, let attempt, let reason):
            return line("dial.retrying", ["target": .string(target), "attempt": .number(Double(attempt)), "reason": .string(reason)])
        case .exchangeStarted(let id, let role, let remote):
            return line("exchange.started", ["id": .string(id), "role": .string(role.rawValue), "remote": .string(remote)])
        case .exchangeRequested(let id, let peer, let sas, let role, let awaitsCommand, let remote):
            return line(
                "exchange.requested",
                [
                    "id": .string(id), "role": .string(role.rawValue), "peer": peer.json, "sas": .string(sas),
                    "decision": .string(awaitsCommand ? "pending" : "automatic"), "remote": .string(remote),
                ])
        case .exchangeCheckCode(let id, let sas):
            return line("exchange.check-code", ["id": .string(id), "sas": .string(sas)])
        case .exchangeUnconfirmed(let id, let contact, let error):
            return line(
                "exchange.unconfirmed",
                [
                    "id": .string(id), "contact": contact.json, "code": .string(error.code.rawValue),
                    "reason": .string(error.message),
                ])
        case .exchangeCompleted(let id, let contact, let mine, let theirs, let elapsed):
            return line(
                "exchange.completed",
                [
                    "id": .string(id), "elapsedMs": .number((elapsed * 1e4).rounded() / 10),
                    "contact": contact.json, "myMessage": mine.map { .string($0) } ?? .null,
                    "theirMessage": theirs.map { .string($0) } ?? .null,
                ])
        case .exchangeAbandoned(let id, _, let error):
            return encode(.exchangeFailed(id: id, peer: nil, error: error, byPeer: false), identity: identity)
        case .exchangeFailed(let id, let peer, let error, let byPeer):
            return line(
                "exchange.failed",
                [
                    "id": .string(id), "peer": peer?.json ?? .null, "code": .string(error.code.rawValue),
                    "reason": .string(error.message), "byPeer": .bool(byPeer),
                ])
        case .exchangeSettled(let did, let name, let kept):
            return line("exchange.settled", ["did": .string(did), "name": .string(name), "kept": .bool(kept)])
        case .messageReceived(let item):
            return line("message.received", item.json.objectValue ?? [:])
        case .messageRefused(let remote, let reason, let byPeer):
            return line("message.refused", ["remote": .string(remote), "reason": .string(reason), "byPeer": .bool(byPeer)])
        case .messageDelivered(let item):
            return line("message.delivered", item.json.objectValue ?? [:])
        case .messageGaveUp(let item):
            return line("message.failed", item.json.objectValue ?? [:])
        case .rateLimited(let address, let reason, let count, let seconds):
            return line(
                "rate-limited",
                [
                    "address": address.map { .string($0) } ?? .null, "reason": .string(reason), "count": .number(Double(count)),
                    "seconds": .number(Double(seconds)),
                ])
        case .connectionsProbed(let count, let seconds, let address, let kinds):
            // Every kind JSONL.md names is there, 0 when none was seen (a reader may index any of them).
            var all: [String: Int] = ["silent": 0, "foreign": 0, "timedOut": 0, "evicted": 0, "halfOpen": 0]
            for (k, n) in kinds { all[k, default: 0] += n }
            return line(
                "connections.probed",
                [
                    "count": .number(Double(count)), "seconds": .number(Double(seconds)),
                    "address": address.map { .string($0) } ?? .null,
                    "kinds": .object(all.sorted { $0.key < $1.key }.reduce(into: JSONObject()) { $0[$1.key] = .number(Double($1.value)) }),
                ])
        case .storeConnection(let lost, let store):
            return line(lost ? "store.disconnected" : "store.reconnected", ["store": .string(store)])
        case .error(let message):
            // Not the answer to a command: its ref is null (docs/JSONL.md).
            return line("error", ["message": .string(message), "ref": .null])
        }
    }
}

extension PeerIdentity {
    /// Who the peer proved to be: DID, name and fingerprint (no keys).
    var json: JSONValue {
        ["did": .string(did), "name": name.map { .string($0) } ?? .null, "fingerprint": .string(fingerprint)]
    }
}

extension DiscoveredPeer {
    /// The shape `nearcard peers --json` and the `peer.found` event share: no fingerprint (discovery
    /// carries none); `contact` when the presence tag resolved to one, `display` as a face shows it.
    public var json: JSONValue {
        var o = JSONObject()
        o["instance"] = .string(instanceName)
        o["id"] = id.map { .string($0) } ?? .null
        o["name"] = announcedName.map { .string($0) } ?? .null
        o["display"] = .string(displayName)
        o["contact"] = contact.map { ["did": .string($0.did), "name": .string($0.name)] } ?? .null
        o["thisNode"] = .bool(isThisNode)
        o["version"] = txt.version.map { .number(Double($0)) } ?? .null
        o["host"] = .string(hostName)
        o["port"] = .number(Double(port))
        o["addresses"] = .array(dialOrder.map { ["ip": .string($0.ip), "interface": .string($0.interfaceName), "port": .number(Double($0.port))] })
        o["confirmedAt"] = confirmedAt.map { .string(ISO8601.string($0)) } ?? .null
        o["recordsPending"] = .bool(recordsPending)
        return .object(o)
    }
}

/// A command read from a JSON line or typed as words (`exchange Ada "Hello there"`).
enum ControlCommand: Sendable, Equatable {
    /// `confirm`: this side decides by `accept`/`decline` after seeing the code, like a responder.
    /// `wait`: seconds to look for a peer named (on the control socket; 5 by default).
    case exchange(peer: String, message: String?, confirm: Bool = false, wait: Double? = nil)
    case accept(id: String, message: String?)
    case decline(id: String, reason: String?)
    /// `wait`: seconds to look for the contact's node (5 by default); `expiresIn`: the message's lifetime in seconds (§15).
    case message(contact: String, text: String, wait: Double? = nil, expiresIn: Int64? = nil)
    case peers
    case quit
    /// A new presence key, announced before the reply (`id rotate-presence` beside a running node).
    case rotatePresence
    /// What another process changed in the book, applied by the node before the reply.
    case changed([Change])
    /// Delivers the queued follow-ups now (and settles unconfirmed exchanges): `outbox --send` beside
    /// a running node.
    case outboxSend
    /// Syncs the address book at `url` (every one when nil) now, between the node's own passes:
    /// `addressbook sync` beside a running node.
    case addressBookSync(url: String?, mirrorDeletes: Bool)
    /// An invitation to this node (§19), naming the port it listens on: `qr invite` beside a running node.
    case invite(ttl: Double, uses: Int)

    /// What a command beside the node changed (`changed`'s `what`).
    enum Change: String, Sendable, CaseIterable {
        /// The card or the fields it shares: a new name is announced at once, the next session sends the new card.
        case card
        /// A contact deleted or changed: recognised (or no longer) at once.
        case contacts
        /// An address-book account removed: a sync in flight on it ends before the reply, none starts after.
        case addressbooks
    }

    var name: String {
        switch self {
        case .exchange: "exchange"
        case .accept: "accept"
        case .decline: "decline"
        case .message: "message"
        case .peers: "peers"
        case .quit: "quit"
        case .rotatePresence: "rotate-presence"
        case .changed: "changed"
        case .outboxSend: "outbox.send"
        case .addressBookSync: "addressbook.sync"
        case .invite: "invite"
        }
    }

    /// A parsed line: the command and the caller's `ref` (echoed in the reply), or why it was refused.
    struct Parsed: Sendable {
        let command: ControlCommand
        let ref: JSONValue?
    }

    struct ParseError: Error, Sendable {
        let message: String
        let ref: JSONValue?
    }

    /// Parses one line. JSON objects: `{"cmd": NAME, …members, "ref"?}`; otherwise words with
    /// "double quotes" for spaces. Returns nil for a blank line.
    static func parse(_ line: String) -> Result<Parsed, ParseError>? {
        let text = line.trimmingCharacters(in: .whitespacesAndNewlines)
        if text.isEmpty { return nil }
        guard text.utf8.count <= JSONLines.maximumCommandLength else {
            return .failure(ParseError(message: "command longer than \(JSONLines.maximumCommandLength) bytes", ref: nil))
        }
        if text.hasPrefix("{") {
            let value: JSONValue
            do { value = try JSONParser(maximumDepth: 4, maximumLength: JSONLines.maximumCommandLength).parse(Array(text.utf8)) } catch {
                return .failure(ParseError(message: "not a JSON command (\(error.message)): \(text.prefix(60))", ref: nil))
            }
            guard let o = value.objectValue else { return .failure(ParseError(message: "a command is one JSON object", ref: nil)) }
            let ref = o["ref"]
            guard let cmdValue = o["cmd"] else { return .failure(ParseError(message: "no \"cmd\" member", ref: ref)) }
            guard let cmd = cmdValue.stringValue else {
                return .failure(ParseError(message: "\"cmd\" must be a command name (a string): exchange, accept, decline, message, peers or quit", ref: ref))
            }
            func string(_ key: String, required: Bool) -> Result<String?, ParseError> {
                guard let v = o[key], v != .null else {
                    return required ? .failure(ParseError(message: "\(cmd): \"\(key)\" is required", ref: ref)) : .success(nil)
                }
                guard let s = v.stringValue else { return .failure(ParseError(message: "\(cmd): \"\(key)\" must be a string", ref: ref)) }
                if required && s.trimmingCharacters(in: .whitespaces).isEmpty {
                    return .failure(ParseError(message: "\(cmd): \"\(key)\" is empty", ref: ref))
                }
                return .success(s)
            }
            let allowed: Set<String>
            let command: Result<ControlCommand, ParseError>
            switch cmd {
            case "exchange":
                allowed = ["peer", "message", "confirm", "wait"]
                if let c = o["confirm"], c.boolValue == nil {
                    return .failure(ParseError(message: "exchange: \"confirm\" must be true or false", ref: ref))
                }
                var wait: Double?
                if let w = o["wait"], w != .null {
                    guard let seconds = w.doubleValue, seconds > 0, seconds <= 600 else {
                        return .failure(ParseError(message: "exchange: \"wait\" must be a number of seconds, more than 0 and at most 600", ref: ref))
                    }
                    wait = seconds
                }
                let confirm = o["confirm"]?.boolValue ?? false
                command = string("peer", required: true).flatMap { p in
                    string("message", required: false).map { .exchange(peer: p!, message: $0, confirm: confirm, wait: wait) }
                }
            case "rotate-presence":
                allowed = []
                command = .success(.rotatePresence)
            case "changed":
                allowed = ["what"]
                let names = Change.allCases.map(\.rawValue).joined(separator: ", ")
                guard let list = o["what"]?.arrayValue, !list.isEmpty else {
                    return .failure(ParseError(message: "changed: \"what\" must be a list of one or more of \(names)", ref: ref))
                }
                var changes: [Change] = []
                for item in list {
                    guard let c = item.stringValue.flatMap(Change.init(rawValue:)) else {
                        return .failure(ParseError(message: "changed: \(item.canonicalText) is not one of \(names)", ref: ref))
                    }
                    changes.append(c)
                }
                command = .success(.changed(changes))
            case "outbox.send":
                allowed = []
                command = .success(.outboxSend)
            case "addressbook.sync":
                allowed = ["url", "mirrorDeletes"]
                if let m = o["mirrorDeletes"], m.boolValue == nil {
                    return .failure(ParseError(message: "addressbook.sync: \"mirrorDeletes\" must be true or false", ref: ref))
                }
                let mirror = o["mirrorDeletes"]?.boolValue ?? false
                command = string("url", required: false).map { .addressBookSync(url: $0, mirrorDeletes: mirror) }
            case "invite":
                allowed = ["ttl", "uses"]
                var ttl = 300.0
                if let t = o["ttl"], t != .null {
                    guard let seconds = t.doubleValue, seconds >= 1, seconds <= 365 * 86400 else {
                        return .failure(ParseError(message: "invite: \"ttl\" must be a number of seconds from 1 to 31536000 (365 days)", ref: ref))
                    }
                    ttl = seconds
                }
                var uses = 1
                if let u = o["uses"], u != .null {
                    guard let n = u.integerValue, (1...1000).contains(n) else {
                        return .failure(ParseError(message: "invite: \"uses\" must be a whole number from 1 to 1000", ref: ref))
                    }
                    uses = Int(n)
                }
                command = .success(.invite(ttl: ttl, uses: uses))
            case "accept":
                allowed = ["id", "message"]
                command = string("id", required: true).flatMap { i in string("message", required: false).map { .accept(id: i!, message: $0) } }
            case "decline":
                allowed = ["id", "reason"]
                command = string("id", required: true).flatMap { i in string("reason", required: false).map { .decline(id: i!, reason: $0) } }
            case "message":
                allowed = ["contact", "text", "wait", "expiresIn"]
                var wait: Double?
                if let w = o["wait"], w != .null {
                    guard let seconds = w.doubleValue, seconds >= 0, seconds <= 3600 else {
                        return .failure(ParseError(message: "message: \"wait\" must be a number of seconds from 0 to 3600", ref: ref))
                    }
                    wait = seconds
                }
                var lifetime: Int64?
                if let e = o["expiresIn"], e != .null {
                    guard let seconds = e.integerValue, seconds > 0 else {
                        return .failure(ParseError(message: "message: \"expiresIn\" must be a whole number of seconds, more than 0", ref: ref))
                    }
                    lifetime = seconds
                }
                command = string("contact", required: true).flatMap { c in
                    string("text", required: true).map { .message(contact: c!, text: $0!, wait: wait, expiresIn: lifetime) }
                }
            case "peers":
                allowed = []
                command = .success(.peers)
            case "quit":
                allowed = []
                command = .success(.quit)
            default:
                return .failure(
                    ParseError(
                        message:
                            "unknown command \"\(cmd)\" (exchange, accept, decline, message, peers, quit, rotate-presence, changed, outbox.send, addressbook.sync, invite)",
                        ref: ref))
            }
            if let extra = o.keys.first(where: { !allowed.contains($0) && $0 != "cmd" && $0 != "ref" }) {
                return .failure(ParseError(message: "\(cmd): unknown member \"\(extra)\"", ref: ref))
            }
            return command.map { Parsed(command: $0, ref: ref) }
        }
        guard let words = Self.words(text) else {
            return .failure(ParseError(message: "a quote is not closed: \(text.prefix(60))", ref: nil))
        }
        guard let first = words.first else { return nil }
        if words.dropFirst().first?.trimmingCharacters(in: .whitespaces).isEmpty == true {
            return .failure(ParseError(message: "\(first): the first argument is empty", ref: nil))
        }
        let rest = Array(words.dropFirst())
        func joined(_ from: Int) -> String? { rest.count > from ? rest[from...].joined(separator: " ") : nil }
        let command: ControlCommand
        switch first.lowercased() {
        case "exchange" where !rest.isEmpty: command = .exchange(peer: rest[0], message: joined(1))
        case "accept" where !rest.isEmpty: command = .accept(id: rest[0], message: joined(1))
        case "decline" where !rest.isEmpty: command = .decline(id: rest[0], reason: joined(1))
        case "message" where rest.count >= 2: command = .message(contact: rest[0], text: joined(1)!)
        case "peers" where rest.isEmpty: command = .peers
        case "quit" where rest.isEmpty, "exit" where rest.isEmpty: command = .quit
        default:
            return .failure(
                ParseError(
                    message: """
                        cannot read "\(text.prefix(60))": use exchange PEER [MESSAGE], accept ID [MESSAGE], decline ID [REASON], \
                        message CONTACT TEXT, peers, quit — or one JSON object per line
                        """, ref: nil))
        }
        return .success(Parsed(command: command, ref: nil))
    }

    /// Splits on spaces, keeping "double-quoted" runs together (backslash escapes a quote); nil when a
    /// quote is left open.
    static func words(_ text: String) -> [String]? {
        var out: [String] = []
        var current = ""
        var quoted = false
        var escaped = false
        var started = false
        for ch in text {
            if escaped {
                current.append(ch)
                escaped = false
                continue
            }
            if ch == "\\" && quoted {
                escaped = true
                continue
            }
            if ch == "\"" {
                quoted.toggle()
                started = true
                continue
            }
            if ch.isWhitespace && !quoted {
                if started {
                    out.append(current)
                    current = ""
                    started = false
                }
                continue
            }
            current.append(ch)
            started = true
        }
        if quoted { return nil }
        if started { out.append(current) }
        return out
    }
}
