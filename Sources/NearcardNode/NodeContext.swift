import Foundation
import NearcardCrypto
import NearcardModel
import NearcardProtocol
import NearcardStore
import Synchronization

/// One node, as every session and face of it shares it: the identity, the database, the consent asked
/// of incoming requests, events and limits. Built once per node; what changes while it runs (the
/// addresses a listener learns once bound) changes here, for every session after.
public final class NodeContext: Sendable {
    /// Who this node is in every session (keys and the name it says).
    public let local: LocalIdentity
    public var keys: IdentityKeys { local.keys }
    public let identity: PublicIdentity
    public let database: NearcardDatabase
    /// How requests that reach this node are decided (a dial the user asked for brings its own).
    public let consent: ConsentProvider
    public let events: EventBus
    public let limits: NodeLimits
    /// Fields a peer's card must disclose for an exchange to complete (a bot policy's `requireFields`).
    public let requiredFields: Set<CardField>
    /// Addresses to put in the routes we hand out (set when a listener knows its port).
    private let hints: Mutex<[RouteRecord.Hint]>

    public init(keys: IdentityKeys, identity: PublicIdentity, database: NearcardDatabase, consent: ConsentProvider,
                events: EventBus = EventBus(), limits: NodeLimits = NodeLimits(), routeHints: [RouteRecord.Hint] = [],
                requiredFields: Set<CardField> = []) {
        self.local = LocalIdentity(keys: keys, name: identity.name)
        self.identity = identity
        self.database = database
        self.consent = consent
        self.events = events
        self.limits = limits
        self.hints = Mutex(routeHints)
        self.requiredFields = requiredFields
    }

    /// Where peers can reach this node, for the sealed routes its next exchanges hand over.
    public var routeHints: [RouteRecord.Hint] {
        get { hints.withLock { $0 } }
        set { hints.withLock { $0 = newValue } }
    }

    /// This side's card as the store holds it now: what a session sends (a session asks for it once,
    /// after its first flight, so a card changed by `nearcard card set` is the next session's).
    public func loadCard() throws -> LocalCard {
        let shared = try database.sharedCard()
        return LocalCard(card: shared.card ?? Card(name: identity.name ?? "Nearcard user"), policy: shared.policy, routeHints: routeHints,
                         issuerProof: shared.issuerProof, requiredFields: requiredFields)
    }

    /// The contact's status given the group proof its card carries (docs/PROTOCOL.md §18): verified only
    /// when the proof verifies, is bound to the sender's DID and its root is a trusted group's; a card
    /// without a group proof is verified by the exchange alone.
    func groupStatus(issuerProof: String?, senderDID: String) -> (status: VerificationStatus, memberOf: String?) {
        guard let issuerProof else { return (.verified, nil) }
        switch GroupProofs(database: database).verdict(issuerProof, holderDID: senderDID) {
        case .trusted(let group, _): return (.verified, group)
        case .untrustedGroup: return (.unverified, nil)
        case .failed: return (.failed, nil)
        }
    }

    /// Stores a completed exchange: one transaction for the contact, its graph entry and our route.
    public func record(_ outcome: ExchangeOutcome) throws -> Contact {
        let their = outcome.theirPayload.payload
        let at = Date(timeIntervalSince1970: TimeInterval(outcome.completedAt))
        let group = groupStatus(issuerProof: their.issuerProof, senderDID: outcome.peer.did)
        let contact = Contact(
            card: their.cardFields, source: .proximity, verificationStatus: group.status, receivedAt: at,
            sealedRoute: outcome.theirSealedRoute, pubKey: Base64.encode(outcome.peer.pubKey.rawRepresentation),
            signPubKey: Base64.encode(outcome.peer.signPubKey.rawRepresentation), didPublicKey: outcome.peer.did,
            exchangeSignature: their.payloadSignature, myExchangeSignature: outcome.myPayload.payloadSignature,
            exchangeTimestamp: at, myEphemeralMessage: outcome.myMessage, theirEphemeralMessage: outcome.theirMessage,
            graphExportEdgeId: outcome.graphEdgeID, memberOf: group.memberOf)
        let route = NearcardDatabase.IssuedRoute(
            mailboxToken: outcome.myRoute.mailboxToken, contactDID: outcome.peer.did,
            issuedAt: Date(timeIntervalSince1970: TimeInterval(outcome.myRoute.issuedAt)),
            expiresAt: Date(timeIntervalSince1970: TimeInterval(outcome.myRoute.expiresAt)))
        return try database.recordExchange(contact, issuedRoute: route, payloadJSON: outcome.theirPayloadJSON.canonicalText, now: at)
    }
}
