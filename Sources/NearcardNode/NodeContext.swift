import Foundation
package import NearcardCrypto
package import NearcardModel
package import NearcardProtocol
import NearcardSemaphore
package import NearcardStore
import Synchronization

/// One node, as every session and face of it shares it: the identity, the database, the consent asked
/// of incoming requests, events and limits. Built once per node; what changes while it runs (the
/// addresses a listener learns once bound) changes here, for every session after.
package final class NodeContext: Sendable {
    /// Who this node is in every session (keys and the name it says): the name is the card's (the
    /// identity's until there is a card), and follows `card set --name` while the node runs (`rename`).
    package var local: LocalIdentity { localBox.withLock { $0 } }
    private let localBox: Mutex<LocalIdentity>
    package var keys: IdentityKeys { local.keys }
    /// The name this node announces (default mode) and says in its sessions now.
    package var displayName: String? { local.name }
    package let identity: PublicIdentity
    package let database: NearcardDatabase
    /// How requests that reach this node are decided (a dial the user asked for brings its own).
    package let consent: any ConsentProvider
    /// Where a program's accept/decline commands go, when requests wait for one (`listen --jsonl
    /// --accept ask`); nil when a person at a terminal or a policy decides.
    package var pendingDecisions: PendingDecisions? { (consent as? DecidedByCommand)?.decisions }
    package let events: EventBus
    package let limits: NodeLimits
    /// Fields a peer's card must disclose for an exchange to complete (a bot policy's `requireFields`).
    package let requiredFields: Set<CardField>
    /// This node's name in the store's exchange log: which bot of a fleet recorded an exchange.
    package let nodeName: String
    /// Where each completed exchange is posted (a bot policy's `webhook`), queued with the exchange.
    package let webhook: Webhook?
    /// Addresses to put in the routes we hand out (set when a listener knows its port).
    private let hints: Mutex<[RouteRecord.Hint]>
    private let port = Mutex<Int?>(nil)
    private let onlyAddress = Mutex<String?>(nil)

    /// The one address this node uses (`--address`): its connections leave from it. nil: any.
    package var localAddress: String? {
        get { onlyAddress.withLock { $0 } }
        set { onlyAddress.withLock { $0 = newValue } }
    }
    /// This node's presence key as its announcements use it: read from the store when the node is
    /// built, then set by the announcer at each publication (a key rotated by `id rotate-presence` in
    /// another process is used from the next one). Sessions take it from here, so no connection's
    /// event loop waits for the store to learn it.
    private let heldPresenceKey: Mutex<[UInt8]?>

    package init(
        keys: IdentityKeys, identity: PublicIdentity, database: NearcardDatabase, consent: any ConsentProvider,
        events: EventBus = EventBus(), limits: NodeLimits = NodeLimits(), routeHints: [RouteRecord.Hint] = [],
        requiredFields: Set<CardField> = [], nodeName: String = "", webhook: Webhook? = nil
    ) {
        self.nodeName = nodeName
        self.webhook = webhook
        let cardName = (try? database.myCard())?.card.name
        self.localBox = Mutex(LocalIdentity(keys: keys, name: Self.sayable(cardName ?? identity.name)))
        self.identity = identity
        self.database = database
        self.consent = TestFault.has(.decline) ? DecliningSome(base: consent) : consent
        self.events = events
        self.limits = limits
        self.hints = Mutex(routeHints)
        self.requiredFields = requiredFields
        self.heldPresenceKey = Mutex(try? database.presenceKey())
        SessionKeys.prepare()
    }

    /// Takes the card's name as this node's name from the next session on; returns whether it changed.
    package func rename(_ name: String?) -> Bool {
        let name = Self.sayable(name)
        return localBox.withLock { l in
            guard l.name != name else { return false }
            l = LocalIdentity(keys: l.keys, name: name)
            return true
        }
    }

    /// A card's name as a session and an announcement carry it: at most `ProtocolLimits.maximumNameLength`
    /// Unicode scalars (a card's name may hold 256), cut at a character boundary. The card itself
    /// carries the whole name.
    package static func sayable(_ name: String?) -> String? {
        guard let name, name.unicodeScalars.count > ProtocolLimits.maximumNameLength else { return name }
        var out = ""
        var scalars = 0
        for c in name {
            let n = c.unicodeScalars.count
            if scalars + n > ProtocolLimits.maximumNameLength { break }
            out.append(c)
            scalars += n
        }
        return out
    }

    /// Where peers can reach this node, for the sealed routes its next exchanges hand over.
    package var routeHints: [RouteRecord.Hint] {
        get { hints.withLock { $0 } }
        set { hints.withLock { $0 = newValue } }
    }

    /// This node's presence key (see `heldPresenceKey`); the store is asked only if it could not be read
    /// when the node was built.
    package func presenceKey() throws(StoreError) -> [UInt8] {
        if let key = heldPresenceKey.withLock({ $0 }) { return key }
        let key = try database.presenceKey()
        heldPresenceKey.withLock { $0 = key }
        return key
    }

    /// The key the announcer has just published tags with.
    package func presenceKeyPublished(_ key: [UInt8]) { heldPresenceKey.withLock { $0 = key } }

    /// This side's card as the store holds it: what a session sends (a session asks for it once, after
    /// its first flight; a card changed by `nearcard card set` while the node runs is sent from the
    /// next second on, `NearcardDatabase.sharedCardTTL`).
    /// `sessionAddress` is our address on that session's connection (§10's hint rule).
    /// `presenceKey`: the one the session already took (a responder's, to seal its identity), so one
    /// session hands over the key it sealed with even if a publication changes it meanwhile.
    package func loadCard(sessionAddress: String? = nil, presenceKey: [UInt8]? = nil) throws -> LocalCard {
        let shared = try database.sharedCard()
        return LocalCard(
            card: shared.card ?? Card(name: identity.name ?? "Nearcard user"), policy: shared.policy,
            presenceKey: try presenceKey ?? self.presenceKey(), routeHints: routeHints(forSessionAt: sessionAddress),
            issuerProof: shared.issuerProof, requiredFields: requiredFields,
            commonContacts: shared.commonContacts ? try database.commonContactsSet() : nil)
    }

    /// The hints of a route handed over in one session (docs/PROTOCOL.md §10): none unless this node
    /// listens; then our address on that session's connection first (the peer reached us there, so it
    /// can again; loopback included, for a peer on this machine), then the listener's other addresses
    /// (IPv4 and IPv6, loopback and link-local left out), each with the listening port, at most 8.
    package func routeHints(forSessionAt sessionAddress: String?) -> [RouteRecord.Hint] {
        Self.routeHints(sessionAddress: sessionAddress, listening: routeHints, port: listeningPort)
    }

    /// The rule itself, for a node listening on `port` (nil: not listening) at `listening`.
    package static func routeHints(sessionAddress: String?, listening: [RouteRecord.Hint], port: Int?) -> [RouteRecord.Hint] {
        guard let port else { return [] }
        var out: [RouteRecord.Hint] = []
        if let sessionAddress, !RouteRecord.Hint.isLinkLocal(sessionAddress) {
            out.append(RouteRecord.Hint(host: sessionAddress, port: port))
        }
        for h in listening where !out.contains(h) { out.append(h) }
        return Array(out.prefix(RouteRecord.maximumHints))
    }

    /// The port this node's listener is bound to (nil for a node that only dials).
    package var listeningPort: Int? {
        get { port.withLock { $0 } }
        set { port.withLock { $0 = newValue } }
    }

    /// The verdict on the group proof a card carries (docs/PROTOCOL.md §18), against the groups this
    /// node trusts; nil for a card without one (verified by the exchange alone).
    func groupVerdict(issuerProof: String?, senderDID: String) -> SemaphoreBinding.Verdict? {
        guard let issuerProof else { return nil }
        return SemaphoreBinding.check(issuerProof, holderDID: senderDID, trusted: GroupTrust.lookup(database))
    }

    /// Stores a completed exchange: one transaction for the contact, its graph entry and our route.
    /// Checks a QR invitation an initiator presented and spends one of its uses: nil when it stands for
    /// this node's consent, else why it is refused. The proof is checked before a use is spent, so a
    /// forged one costs nothing.
    func admit(_ invite: Invitation.Presented, now: Date = Date()) -> String? {
        do {
            switch try database.invitationSecret(id: invite.id, now: now) {
            case .failure(let problem): return problem.description
            case .success(let secret):
                guard invite.isMade(with: secret) else { return "the invitation's proof does not match (it was altered, or made for another session)" }
                return try database.useInvitation(id: invite.id, now: now) ? nil : NearcardDatabase.InvitationProblem.usedUp.description
            }
        } catch {
            return "the invitation cannot be checked: \(error.message)"
        }
    }

    /// Stores an exchange's contact: for good (`confirmed`: the responder, refused if the peer was
    /// already told the exchange is withdrawn), or unconfirmed until the responder's word (§11).
    package func record(_ outcome: ExchangeOutcome, confirmed: Bool = true) throws -> Contact {
        let their = outcome.theirPayload.payload
        let at = Date(timeIntervalSince1970: TimeInterval(outcome.completedAt))
        let group = groupVerdict(issuerProof: their.issuerProof, senderDID: outcome.peer.did)
        SessionTrace.mark("record: verdict")
        var contact = Contact(
            card: their.cardFields, source: .proximity, verificationStatus: group?.contactStatus ?? .verified, receivedAt: at,
            sealedRoute: outcome.theirSealedRoute, pubKey: Base64.encode(outcome.peer.pubKey.rawRepresentation),
            signPubKey: Base64.encode(outcome.peer.signPubKey.rawRepresentation), didPublicKey: outcome.peer.did,
            exchangeSignature: their.payloadSignature, myExchangeSignature: outcome.myPayload.payloadSignature,
            exchangeTimestamp: at, myEphemeralMessage: outcome.myMessage, theirEphemeralMessage: outcome.theirMessage,
            graphExportEdgeId: outcome.graphEdgeID, memberOf: group?.group, groupVerdict: group?.description, exchangeVersion: outcome.version)
        if outcome.invited { contact.tags.append(Contact.invitedTag) }
        let route = NearcardDatabase.IssuedRoute(
            mailboxToken: outcome.myRoute.mailboxToken, contactDID: outcome.peer.did,
            issuedAt: Date(timeIntervalSince1970: TimeInterval(outcome.myRoute.issuedAt)),
            expiresAt: Date(timeIntervalSince1970: TimeInterval(outcome.myRoute.expiresAt)))
        if TestFault.has(.staleEdge), let before = try? database.contact(did: outcome.peer.did), let old = before.graphExportEdgeId {
            contact.graphExportEdgeId = old
        }
        let payloadJSON = outcome.theirPayloadJSON.canonicalText
        SessionTrace.mark("record: contact built")
        defer { SessionTrace.mark("record: written") }
        return try database.recordExchange(
            contact, issuedRoute: route, payloadJSON: payloadJSON,
            node: nodeName, webhookURL: webhook?.url,
            confirmation: confirmed ? .final(edge: outcome.graphEdgeID) : .pending(edge: outcome.graphEdgeID),
            presenceKey: outcome.theirPresenceKey, commonContacts: outcome.commonContacts.map { Array($0.common).sorted() },
            now: at)
    }
}
