import Foundation
import NearcardCrypto
import NearcardModel
import NearcardProtocol
import NearcardStore
import Synchronization

/// What every session of a node shares: the identity, the database, consent, events and limits.
public final class ExchangeService: Sendable {
    public let keys: IdentityKeys
    public let identity: PublicIdentity
    public let database: NearcardDatabase
    public let consent: ConsentProvider
    public let events: EventBus
    public let limits: NodeLimits
    /// Addresses to put in the routes we hand out (set when a listener knows its port).
    let routeHints: [RouteRecord.Hint]
    /// Fields a peer's card must disclose for an exchange to complete (a bot policy's `requireFields`).
    public let requiredFields: Set<CardField>
    /// What the last `localParty()` read: a session starts with it and reads the store again before it
    /// makes its card (SessionHandler), so the read is not on the way to the peer's first answer.
    private let lastRead = Mutex<LocalParty?>(nil)

    public init(keys: IdentityKeys, identity: PublicIdentity, database: NearcardDatabase, consent: ConsentProvider,
                events: EventBus = EventBus(), limits: NodeLimits = NodeLimits(), routeHints: [RouteRecord.Hint] = [],
                requiredFields: Set<CardField> = []) {
        self.keys = keys
        self.identity = identity
        self.database = database
        self.consent = consent
        self.events = events
        self.limits = limits
        self.routeHints = routeHints
        self.requiredFields = requiredFields
    }

    public func with(routeHints: [RouteRecord.Hint]) -> ExchangeService {
        inheriting(ExchangeService(keys: keys, identity: identity, database: database, consent: consent, events: events, limits: limits,
                                   routeHints: routeHints, requiredFields: requiredFields))
    }

    /// The same node deciding with another consent provider (a dial the user asked for consents by itself).
    public func with(consent: ConsentProvider) -> ExchangeService {
        inheriting(ExchangeService(keys: keys, identity: identity, database: database, consent: consent, events: events, limits: limits,
                                   routeHints: routeHints, requiredFields: requiredFields))
    }

    /// `copy` starting its sessions with what this service last read (each session reads the store
    /// again before its card is made, so other route hints in it are replaced too).
    private func inheriting(_ copy: ExchangeService) -> ExchangeService {
        let last = lastRead.withLock { $0 }
        copy.lastRead.withLock { $0 = last }
        return copy
    }

    /// This side of a new exchange: the card and sharing policy as they are now.
    public func localParty() throws -> LocalParty {
        let shared = try database.sharedCard()
        let party = LocalParty(keys: keys, name: identity.name, card: shared.card ?? Card(name: identity.name ?? "Nearcard user"), policy: shared.policy,
                               routeHints: routeHints, issuerProof: shared.issuerProof, requiredFields: requiredFields)
        lastRead.withLock { $0 = party }
        return party
    }

    /// This side as a new session starts: the last party read, which the session reads again before its
    /// card is made (`ExchangeStateMachine.refreshLocal`), or — the first time — read now, which is
    /// current already (`isCurrent`).
    func startingParty() throws -> (party: LocalParty, isCurrent: Bool) {
        if let party = lastRead.withLock({ $0 }) { return (party, false) }
        return (try localParty(), true)
    }

    /// A fresh state machine for one session, and whether its card was read just now (if not, the
    /// session brings it up to date once it runs).
    func makeMachine(role: NoiseXXHandshake.Role, expected: ExpectedPeer) throws -> (machine: ExchangeStateMachine, cardIsCurrent: Bool) {
        let start = try startingParty()
        let machine = ExchangeStateMachine(role: role, local: start.party, expected: expected, ephemeralKey: X25519.PrivateKey(),
                                           sasNonce: Sodium.randomBytes(SAS.nonceByteCount),
                                           mailboxToken: Sodium.randomBytes(RouteRecord.mailboxTokenByteCount))
        return (machine, start.isCurrent)
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
