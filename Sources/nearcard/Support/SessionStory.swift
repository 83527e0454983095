import Foundation
import NearcardDiscovery
import NearcardModel
import NearcardNode

/// How one session's story reads at a terminal, for every face of the CLI: the request shown to the
/// person asked (`listen`'s consent prompt), the check code and who answered (`exchange`'s dial), a
/// dial that tries again, how an exchange ended, and the node's other events (`listen`). The one printer
/// of a session: its wording lives here, and the faces only say when.
enum SessionStory {
    /// What a person is asked about (the question, `question`, follows it): at a listening terminal,
    /// the request someone made; at the dialling one, the person who answered — they asked nothing, so
    /// it is not called their request.
    static func request(_ request: ConsentRequest) -> [String] {
        self.request(Asked(request))
    }

    /// Who asks (or answered), as a request shows them: from the node in this process, or from the one
    /// running on the home (its `exchange.requested` line).
    struct Asked {
        let name: String?
        let did: String
        let fingerprint: String
        let sas: String
        let role: ExchangeRole
        let remoteAddress: String

        init(_ r: ConsentRequest) {
            self.init(name: r.peer.name, did: r.peer.did, fingerprint: r.peer.fingerprint, sas: r.sas, role: r.role, remoteAddress: r.remoteAddress)
        }

        init(name: String?, did: String, fingerprint: String, sas: String, role: ExchangeRole, remoteAddress: String) {
            self.name = name
            self.did = did
            self.fingerprint = fingerprint
            self.sas = sas
            self.role = role
            self.remoteAddress = remoteAddress
        }
    }

    static func request(_ request: Asked) -> [String] {
        let who = request.name.map(Console.isolated) ?? "(no name)"
        return [
            "",
            request.role == .responder
                ? "Exchange request from \(who) at \(request.remoteAddress)" : "\(who) answered at \(request.remoteAddress)",
            "  DID          \(request.did)",
            "  Fingerprint  \(request.fingerprint)",
            "  Check code   \(request.sas)   ← must match the code on the other screen",
        ]
    }

    /// The question after `request`, with the seconds left to answer.
    static func question(_ request: Asked, secondsLeft: Int) -> String {
        request.role == .responder
            ? "Accept and exchange cards? (\(secondsLeft) s to answer) [y/N] "
            : "Do the codes match? Exchange cards with them? (\(secondsLeft) s to answer) [y/N] "
    }

    /// The dialling side: the code both screens show, while the other person decides.
    static func checkCode(_ sas: String) -> String { "Check code \(sas) (compare with their screen) — waiting for them to accept" }

    /// The dialling side: who answered; the code again only if it was not shown while they decided.
    static func answered(by peer: PeerIdentity, sas: String, codeShown: Bool) -> String {
        answered(name: peer.name, did: peer.did, sas: sas, codeShown: codeShown)
    }

    static func answered(name: String?, did: String, sas: String, codeShown: Bool) -> String {
        "\(name.map(Console.isolated) ?? "(no name)") — \(did)" + (codeShown ? "" : "\n  Check code \(sas) (compare with their screen)")
    }

    /// An unconfirmed exchange, settled (`listen`, `ui`, `outbox --send`).
    static func settled(name: String, kept: Bool) -> String {
        let name = Console.isolated(name)
        return kept
            ? "✔ Confirmed: \(name)'s node kept your exchange; both of you have each other's card"
            : "↩ Withdrawn: \(name)'s node did not keep your exchange, so it was withdrawn here too"
    }

    /// A dial that tries again.
    static func retry(attempt: Int, reason: String) -> String { "… still trying (attempt \(attempt); loss on the network?): \(reason)" }

    /// An exchange that ended with a contact: the line, then the contact as `contacts show` prints it.
    static func completed(_ contact: Contact, database: Book) {
        Console.out("✔ Exchanged cards with \(Console.isolated(contact.name)) — contact \(contact.id.prefix(8)) (\(contact.verificationStatus.rawValue))")
        ContactDisplay.show(contact, database: database)
    }

    /// Where a line of a running node's story goes.
    enum Stream { case out, errors }

    /// A running node's line for an event (`listen`, `bot` without --jsonl), or nil for one it does not
    /// tell (a completed exchange is told by `completed`).
    static func line(for event: NodeEvent) -> (text: String, stream: Stream)? {
        switch event {
        case .exchangeAbandoned(_, let phase, _):
            // Someone who never said who they are: not an exchange with anyone (PROTOCOL §6.2).
            return ("· A connection stopped before identifying itself (during the \(phase)); nothing was stored", .out)
        case .exchangeFailed(_, let peer, let error, let byPeer):
            let who = peer?.name.map(Console.isolated) ?? peer?.did ?? "a peer"
            // A refusal's words say it was one; other failures add their code.
            let code = error.code == .declined ? "" : " (\(error.code.rawValue))"
            return ("✘ Exchange with \(who) \(byPeer ? "ended by them" : "failed"): \(error.message)\(code); nothing was stored", .out)
        case .exchangeSettled(_, let name, let kept):
            return (settled(name: name, kept: kept), .out)
        case .messageReceived(let m):
            return ("✉ Message from \(m.contactName.map(Console.isolated) ?? m.fromDID): \(Console.isolated(m.text))", .out)
        case .messageRefused(let remote, let reason, _):
            return ("nearcard: refused a message delivery from \(remote): \(reason)", .errors)
        case .messageDelivered(let m):
            return ("✔ Delivered your message to \(Console.isolated(m.contactName))", .out)
        case .messageGaveUp(let m):
            return ("✘ Gave up delivering your message to \(Console.isolated(m.contactName)): \(m.lastError ?? "")", .out)
        case .published(let name):
            return ("Published on the LAN as “\(name)” (\(TXTRecord.serviceType)).", .out)
        case .discoveryUnavailable(let message):
            return ("nearcard: discovery unavailable: \(message). Peers can still reach you at HOST:PORT.", .errors)
        case .rateLimited(let address, let reason, let count, let seconds):
            let from = address.map { "from \(Console.isolated($0))" } ?? "from other addresses"
            if seconds == 0 { return ("nearcard: refusing connections \(from): \(reason)", .errors) }
            return ("nearcard: refused \(count) more connection\(count == 1 ? "" : "s") \(from) in the last \(seconds) s: \(reason)", .errors)
        case .connectionsProbed(let count, let seconds, let address, _):
            let from = address.map { "from \(Console.isolated($0)) " } ?? "from other addresses "
            return (
                "· \(count) connection\(count == 1 ? "" : "s") \(from)in the last \(seconds) s ended before starting an exchange (port scans, probes, idle or half-open sockets); not shown one by one",
                .out
            )
        case .storeConnection(let lost, let store):
            return (lost ? "nearcard: lost the connection to \(store); retrying (exchanges wait meanwhile)" : "nearcard: reconnected to \(store)", .errors)
        case .error(let message):
            return ("nearcard: \(message)", .errors)
        default:
            return nil
        }
    }
}
