import NearcardCrypto
import NearcardModel
import Testing

@testable import NearcardProtocol

// What the exchange tests share: parties, machines started the way the node starts them (an initiator
// from its identity; a responder from the dispatch of message 1, then resumed), and two machines
// joined in memory.

let now: Int64 = 1_795_000_000

/// One side of an exchange: its identity (fixed) and its card (as the store would hold it).
struct Party {
    let local: LocalIdentity
    var localCard: LocalCard

    var keys: IdentityKeys { local.keys }
    var name: String? { local.name }
    var identity: PublicIdentity { local.identity }
    var card: Card {
        get { localCard.card }
        set { localCard.card = newValue }
    }
    var policy: SharingPolicy {
        get { localCard.policy }
        set { localCard.policy = newValue }
    }
    var requiredFields: Set<CardField> {
        get { localCard.requiredFields }
        set { localCard.requiredFields = newValue }
    }
}

func party(_ name: String, fields: Set<CardField> = [.name, .company, .title]) -> Party {
    Party(
        local: LocalIdentity(keys: IdentityKeys.generate(), name: name),
        localCard: LocalCard(
            card: Card(name: name, email: "\(name.lowercased())@example.org", company: "\(name) Ltd", title: "Engineer"),
            policy: SharingPolicy(fields: fields), presenceKey: Sodium.randomBytes(16), routeHints: [RouteRecord.Hint(host: "192.0.2.1", port: 7447)]))
}

func initiator(_ p: Party, expected: ExpectedPeer = ExpectedPeer()) -> ExchangeStateMachine {
    ExchangeStateMachine(
        initiatorFor: p.local, expected: expected, sessionKey: X25519.PrivateKey(), ephemeralKey: X25519.PrivateKey(),
        sasNonce: Sodium.randomBytes(32), mailboxToken: Sodium.randomBytes(32), sealKey: X25519.PrivateKey(), psiRandomness: .fresh())
}

/// A responder as a listener makes one: message 1 through `SessionDispatch`, then resumed and started
/// (its first actions: message 2, the handshake timer, the request for its card).
func responder(_ p: Party, reading message1: [UInt8]) throws(ProtocolError) -> (ExchangeStateMachine, [ExchangeStateMachine.Action]) {
    guard
        case .exchange(let noise) = try SessionDispatch.readFirstMessage(
            message1, ephemeralKey: X25519.PrivateKey(), sessionKey: X25519.PrivateKey(),
            longTermKey: p.keys.x25519)
    else {
        throw ProtocolError(.protocolError, "not an exchange")
    }
    var m = ExchangeStateMachine(
        resuming: noise, identity: p.local, presenceKey: p.localCard.presenceKey, sasNonce: Sodium.randomBytes(32),
        mailboxToken: Sodium.randomBytes(32), sealKey: X25519.PrivateKey(), psiRandomness: .fresh())
    let actions = m.start()
    return (m, actions)
}

/// Two state machines joined in memory: frames go straight across, in order. Each side's card is
/// handed over as soon as its machine asks (as the node does), unless `holdCards` keeps it back.
struct Pair {
    let a: Party
    let b: Party
    var i: ExchangeStateMachine
    /// The responder, once message 1 reached it.
    var r: ExchangeStateMachine!
    var iEvents: [ExchangeStateMachine.Action] = []
    var rEvents: [ExchangeStateMachine.Action] = []
    /// Frames in flight, for tests that tamper with or drop them.
    var toR: [[UInt8]] = []
    var toI: [[UInt8]] = []
    /// Every frame sent, in order, by direction.
    var transcript: [(toResponder: Bool, bytes: [UInt8])] = []
    /// Sides whose card is not handed over when asked for (`loadCard`) until the test does it.
    var holdCards: Set<Bool> = []
    /// Sides whose machine asked for the card.
    var askedForCard: [Bool] = []
    /// Sides whose store does not answer a commit (as if it were slow, or the process died) until the test says.
    var holdCommits: Set<Bool> = []
    /// Sides whose machine asked to make its card ahead of the peer's acceptance.
    var preparedCard: [Bool] = []
    /// The time a side's card is made at when it is made ahead (nil: `now`).
    var prepareTime: Int64?

    init(_ a: Party, _ b: Party, expected: ExpectedPeer = ExpectedPeer()) {
        self.a = a
        self.b = b
        i = initiator(a, expected: expected)
    }

    mutating func collect(_ actions: [ExchangeStateMachine.Action], fromInitiator: Bool) {
        for action in actions {
            if fromInitiator { iEvents.append(action) } else { rEvents.append(action) }
            switch action {
            case .send(let bytes):
                transcript.append((fromInitiator, bytes))
                if fromInitiator { toR.append(bytes) } else { toI.append(bytes) }
            case .loadCard:
                askedForCard.append(fromInitiator)
                if !holdCards.contains(fromInitiator) { loadCard(initiator: fromInitiator) }
            case .commit:
                if !holdCommits.contains(fromInitiator) { commit(initiator: fromInitiator) }
            case .prepareCard:
                // The node makes its card once its acceptance is flushed; frames here are queued already.
                preparedCard.append(fromInitiator)
                let t = prepareTime ?? now
                if fromInitiator { collect(i.prepareCard(now: t), fromInitiator: true) } else { collect(r.prepareCard(now: t), fromInitiator: false) }
            case .arm, .sasKnown, .identified, .confirmed, .unconfirmed, .finished, .failed, .commonContactsStarted:
                break
            }
        }
    }

    /// A side's store has written the contact (what the node does after a commit).
    mutating func commit(initiator: Bool) {
        if initiator { collect(i.committed(), fromInitiator: true) } else { collect(r.committed(), fromInitiator: false) }
    }

    /// Hands a side its card (what the node does when the machine asks).
    mutating func loadCard(initiator: Bool, _ card: LocalCard? = nil) {
        if initiator {
            collect(i.cardLoaded(card ?? a.localCard, now: now), fromInitiator: true)
        } else {
            collect(r.cardLoaded(card ?? b.localCard, now: now), fromInitiator: false)
        }
    }

    /// Delivers the next frame to the responder (the first one through the dispatch).
    mutating func stepToR() {
        guard !toR.isEmpty else { return }
        let f = toR.removeFirst()
        guard r != nil else {
            do {
                let (m, actions) = try responder(b, reading: f)
                r = m
                collect(actions, fromInitiator: false)
            } catch {
                rEvents.append(.failed(error, byPeer: false))
            }
            return
        }
        collect(r.receive(f, now: now), fromInitiator: false)
    }

    /// Delivers the next frame to the initiator.
    mutating func stepToI() {
        guard !toI.isEmpty else { return }
        let f = toI.removeFirst()
        collect(i.receive(f, now: now), fromInitiator: true)
    }

    /// Delivers frames until both sides are quiet.
    mutating func pump() {
        while !toR.isEmpty || !toI.isEmpty {
            stepToR()
            stepToI()
        }
    }

    mutating func start() {
        collect(i.start(), fromInitiator: true)
        pump()
    }

    mutating func decide(initiator: Bool, accept: Bool, message: String? = nil) {
        if initiator {
            collect(i.decide(accept: accept, message: message, now: now), fromInitiator: true)
        } else {
            collect(r.decide(accept: accept, message: message, now: now), fromInitiator: false)
        }
        pump()
    }
}

extension [ExchangeStateMachine.Action] {
    var identified: PeerIdentity? {
        for a in self { if case .identified(let p, _, _) = a { return p } }
        return nil
    }
    var sas: String? {
        for a in self { if case .identified(_, let s, _) = a { return s } }
        return nil
    }
    /// The outcome a side stored (its commit), once that side's exchange ended with it kept: the
    /// responder's `finished` (confirm sent), the initiator's `confirmed`.
    var completed: ExchangeOutcome? {
        guard contains(where: { if case .confirmed = $0 { true } else if case .finished = $0 { true } else { false } }) else { return nil }
        return committed
    }
    /// The outcome a side asked its store to write, confirmed or not.
    var committed: ExchangeOutcome? {
        for a in self { if case .commit(let o, _) = a { return o } }
        return nil
    }
    /// The initiator's end with its contact unconfirmed.
    var unconfirmed: ProtocolError? {
        for a in self { if case .unconfirmed(let e) = a { return e } }
        return nil
    }
    var failure: ProtocolError? {
        for a in self { if case .failed(let e, _) = a { return e } }
        return nil
    }
    var failedByPeer: Bool? {
        for a in self { if case .failed(_, let p) = a { return p } }
        return nil
    }
    var armed: [SessionTimer] { compactMap { if case .arm(let t) = $0 { t } else { nil } } }
    var sentCount: Int { filter { if case .send = $0 { true } else { false } }.count }
}

/// The frames among a batch of actions.
func sends(_ actions: [ExchangeStateMachine.Action]) -> [[UInt8]] {
    actions.compactMap { if case .send(let b) = $0 { b } else { nil } }
}
