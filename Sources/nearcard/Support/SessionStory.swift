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
        let who = request.name.map(Console.isolated) ?? t("(no name)")
        let labels = [t("DID"), t("Fingerprint"), t("Check code")]
        let width = labels.map(\.count).max()! + 2
        func row(_ label: String, _ value: String) -> String { "  " + label + String(repeating: " ", count: width - label.count) + value }
        return [
            "",
            request.role == .responder
                ? t("Exchange request from %1$@ at %2$@", who, request.remoteAddress) : t("%1$@ answered at %2$@", who, request.remoteAddress),
            row(labels[0], request.did),
            row(labels[1], request.fingerprint),
            // The code is ASCII digits in every language: the two people may read different ones.
            row(labels[2], request.sas + "   " + t("← must match the code on the other screen")),
        ]
    }

    /// The question after `request`, with the seconds left to answer.
    static func question(_ request: Asked, secondsLeft: Int) -> String {
        request.role == .responder
            ? t("Accept and exchange cards? (%1$@ s to answer) [y/N] ", String(secondsLeft))
            : t("Do the codes match? Exchange cards with them? (%1$@ s to answer) [y/N] ", String(secondsLeft))
    }

    /// The dialling side: the code both screens show, while the other person decides.
    static func checkCode(_ sas: String) -> String { t("Check code %1$@ (compare with their screen) — waiting for them to accept", sas) }

    /// The dialling side: who answered; the code again only if it was not shown while they decided.
    static func answered(by peer: PeerIdentity, sas: String, codeShown: Bool) -> String {
        answered(name: peer.name, did: peer.did, sas: sas, codeShown: codeShown)
    }

    static func answered(name: String?, did: String, sas: String, codeShown: Bool) -> String {
        "\(name.map(Console.isolated) ?? t("(no name)")) — \(did)" + (codeShown ? "" : "\n  " + t("Check code %1$@ (compare with their screen)", sas))
    }

    /// An unconfirmed exchange, settled (`listen`, `ui`, `outbox --send`).
    static func settled(name: String, kept: Bool) -> String {
        let name = Console.isolated(name)
        return kept
            ? t("✔ Confirmed: %1$@'s node kept your exchange; both of you have each other's card", name)
            : t("↩ Withdrawn: %1$@'s node did not keep your exchange, so it was withdrawn here too", name)
    }

    /// A dial that tries again.
    static func retry(attempt: Int, reason: String) -> String { t("… still trying (attempt %1$@; loss on the network?): %2$@", String(attempt), reason) }

    /// An exchange that ended with a contact: the line, then the contact as `contacts show` prints it.
    static func completed(_ contact: Contact, database: Book) {
        Console.out(
            t(
                "✔ Exchanged cards with %1$@ — contact %2$@ (%3$@)", Console.isolated(contact.name), String(contact.id.prefix(8)),
                contact.verificationStatus.rawValue))
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
            return (t("· A connection stopped before identifying itself (during the %1$@); nothing was stored", String(describing: phase)), .out)
        case .exchangeFailed(_, let peer, let error, let byPeer):
            let who = peer?.name.map(Console.isolated) ?? peer?.did ?? t("a peer")
            // A refusal's words say it was one; other failures add their code.
            let reason = error.code == .declined ? t.say(error.phrase) : "\(t.say(error.phrase)) (\(error.code.rawValue))"
            return (
                byPeer
                    ? t("✘ Exchange with %1$@ ended by them: %2$@; nothing was stored", who, reason)
                    : t("✘ Exchange with %1$@ failed: %2$@; nothing was stored", who, reason), .out
            )
        case .exchangeSettled(_, let name, let kept):
            return (settled(name: name, kept: kept), .out)
        case .messageReceived(let m):
            return (t("✉ Message from %1$@: %2$@", m.contactName.map(Console.isolated) ?? m.fromDID, Console.isolated(m.text)), .out)
        case .messageRefused(let remote, let reason, _):
            return ("nearcard: " + t("refused a message delivery from %1$@: %2$@", remote, reason), .errors)
        case .messageDelivered(let m):
            return (t("✔ Delivered your message to %1$@", Console.isolated(m.contactName)), .out)
        case .messageGaveUp(let m):
            return (t("✘ Gave up delivering your message to %1$@: %2$@", Console.isolated(m.contactName), m.lastError ?? ""), .out)
        case .published(let name):
            return (t("Published on the LAN as “%1$@” (%2$@).", name, TXTRecord.serviceType), .out)
        case .discoveryUnavailable(let message):
            return ("nearcard: " + t("discovery unavailable: %1$@. Peers can still reach you at HOST:PORT.", message), .errors)
        case .rateLimited(let address, let reason, let count, let seconds):
            let from = address.map { t("from %1$@", Console.isolated($0)) } ?? t("from other addresses")
            if seconds == 0 { return ("nearcard: " + t("refusing connections %1$@: %2$@", from, reason), .errors) }
            return (
                "nearcard: "
                    + t.plural(
                        "refused %1$ld more connection %2$@ in the last %3$@ s: %4$@", "refused %1$ld more connections %2$@ in the last %3$@ s: %4$@",
                        count: count, String(count), from, String(seconds), reason), .errors
            )
        case .connectionsProbed(let count, let seconds, let address, _):
            let from = address.map { t("from %1$@", Console.isolated($0)) } ?? t("from other addresses")
            return (
                t.plural(
                    "· %1$ld connection %2$@ in the last %3$@ s ended before starting an exchange (port scans, probes, idle or half-open sockets); not shown one by one",
                    "· %1$ld connections %2$@ in the last %3$@ s ended before starting an exchange (port scans, probes, idle or half-open sockets); not shown one by one",
                    count: count, String(count), from, String(seconds)),
                .out
            )
        case .storeConnection(let lost, let store):
            return (
                "nearcard: " + (lost ? t("lost the connection to %1$@; retrying (exchanges wait meanwhile)", store) : t("reconnected to %1$@", store)), .errors
            )
        case .error(let message):
            return ("nearcard: \(message)", .errors)
        default:
            return nil
        }
    }
}
