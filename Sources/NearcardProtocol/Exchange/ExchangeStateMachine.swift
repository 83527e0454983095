public import NearcardCrypto
public import NearcardModel

/// One exchange, from the first handshake byte to both contacts: a pure state machine.
/// The driver feeds it received frames (`receive`), this side's card when it asks for it
/// (`cardLoaded`), the local decision (`decide`), the store's answer (`committed`), the timers it
/// armed (`timerFired`) and local failures (`abort`), and performs the actions it returns. It never
/// touches a socket, a clock or a disk. Protocol version 2 (docs/PROTOCOL.md §5–§11):
///
///     I -> R   Noise XX message 1 (payload "nearcard/2"); both Noise static keys are per session
///     R -> I   Noise XX message 2
///     I -> R   Noise XX message 3
///     I -> R   hello {sasCommit, identity?}    (encrypted from here on; no identity: "prove yourself")
///     R -> I   nonce {sasNonce, sealedIdentity?}
///     I -> R   sas-reveal {nonce, identity?}    both know the SAS
///     R -> I   decision {accept, identity?}     the responder decides first, and shows itself only
///                                               when it accepts
///     I -> R   decision {accept}, card           once the initiator knows who the responder is
///     R -> I   card, done                        the responder verified the initiator's card
///     I -> R   done                              the initiator stored the contact, unconfirmed
///     R -> I   confirm                           the responder stored it; the initiator confirms its own
///
/// A responder starts from `SessionDispatch.readFirstMessage` (which learns what the session is for)
/// and `init(resuming:)`; an initiator from `init(initiatorFor:)`.
public struct ExchangeStateMachine: Sendable {
    public enum Action: Sendable {
        /// Send these bytes as one frame.
        case send([UInt8])
        /// Read this side's card (the store) and hand it over with `cardLoaded`. Asked once, after the
        /// first flight, so the read happens while the peer computes its answer.
        case loadCard
        /// Our acceptance is on its way and the peer has not accepted yet: call `prepareCard` once it has
        /// been sent, so our card (signatures, sealed route) is made while the peer reads the acceptance
        /// and decides, not after its acceptance arrives. Nothing goes out before the peer accepts.
        case prepareCard
        /// Run this timer from now (replacing the one before); report it with `timerFired` if it runs out.
        case arm(SessionTimer)
        /// The common-contacts step began with this peer (§22): the node counts it against the peer's rate
        /// whether or not the exchange completes.
        case commonContactsStarted(peer: String)
        /// Initiator, the responder still anonymous: the SAS both screens show, before the responder's
        /// person has decided (and shown who they are).
        case sasKnown(String)
        /// The peer is authenticated and the SAS is known: show it and ask for a decision. A responder
        /// whose initiator presented a QR invitation gets it here, to check (§19): accepted, it stands
        /// for the decision; refused, the driver aborts with `invite_refused`.
        case identified(PeerIdentity, sas: String, invite: Invitation.Presented?)
        /// Store the contact, then call `committed()`. `confirmed: false` (the initiator): the
        /// responder has not stored it yet — keep it as unconfirmed (§11).
        case commit(ExchangeOutcome, confirmed: Bool)
        /// Initiator: the responder confirmed; the unconfirmed contact is confirmed. The exchange is over.
        case confirmed
        /// Initiator: the session ended after our commit and before the responder's confirmation: the
        /// contact stays unconfirmed until the peer answers a confirmation query (§11).
        case unconfirmed(ProtocolError)
        /// Responder: `confirm` is on its way; the exchange is over.
        case finished
        /// The exchange is over without a contact. `byPeer`: the peer aborted or declined.
        case failed(ProtocolError, byPeer: Bool)
    }

    // MARK: states

    /// The channel and the peer as its identity proved it, with the SAS both screens show.
    struct Identified: Sendable {
        var channel: EstablishedChannel
        let peer: PeerIdentity
        let sas: String
        /// The session was opened with a QR invitation (ours as initiator, presented to us as responder).
        let invited: Bool
    }

    /// Where the exchange is; each case is named for what this side waits for and carries what that needs.
    enum State: Sendable {
        /// Initiator, before `start`.
        case idle(NoiseXXHandshake)
        /// Responder: message 1 read by the dispatch, message 2 not yet written.
        case resumed(NoiseXXHandshake)
        case awaitingMessage2(NoiseXXHandshake)
        case awaitingMessage3(NoiseXXHandshake)
        /// Responder: the initiator's hello.
        case awaitingHello(EstablishedChannel)
        /// Initiator: the responder's nonce (and sealed identity, when we asked for it).
        case awaitingNonce(EstablishedChannel)
        /// Responder: our nonce went back; the initiator's reveal (and identity, if it has not shown it).
        case awaitingReveal(EstablishedChannel, peer: PeerIdentity?, commitment: [UInt8], invite: Invitation.Presented?, revealed: Bool)
        /// Initiator: the SAS is known, the responder still anonymous: its decision (with its identity).
        case awaitingResponder(EstablishedChannel, sas: String, waitingPastConsent: Bool)
        case deciding(Deciding)
        /// Both accepted and both offered it: the PSI messages before the cards (§22).
        case commonContacts(CommonContacts)
        case awaitingCard(CardSent)
        /// Both cards verified; waiting for the peer's `done`.
        case awaitingDone(AwaitingDone)
        /// The store is writing the contact (`commit`); `committed()` continues.
        case committing(AwaitingDone)
        /// Initiator: stored unconfirmed, `done` sent; waiting for the responder's `confirm`.
        case awaitingConfirm(EstablishedChannel)
        case completed
        case failed
    }

    public let role: NoiseXXHandshake.Role
    let me: LocalIdentity
    let expected: ExpectedPeer
    let sasNonce: [UInt8]
    let mailboxToken: [UInt8]
    /// The one-time key pair of the sealed box our route travels in (§10): made ahead by the node, used once.
    let sealKey: X25519.PrivateKey
    /// What the common-contacts step draws at random (§22.2), made by the node for this session.
    let psiRandomness: PSI.Session.Randomness
    /// Responder: the presence key our contacts resolve our tag with (a contact's recall opens with it).
    let presenceKey: [UInt8]
    /// Initiator: the QR invitation this session was opened with.
    let invitation: Invitation.Claim?
    /// The exchange version of this session (§21): the initiator's choice, which a responder learns
    /// from the hello. It decides which fields the cards carry and how their disclosure proofs are built.
    public internal(set) var version: Int
    var state: State
    /// This side's card, once loaded (with, for an initiator, its disclosure proof): the one input
    /// that is not a state's, because it arrives from the store in whichever state the session has
    /// reached by then; every state after the acceptance carries its own copy.
    var card: LocalCard?
    /// Whether our acceptance offers the step: our person turned it on and the peer is within the rate.
    func offersCommonContacts(_ d: Deciding, _ card: LocalCard) -> Bool { card.commonContacts != nil && !d.commonContactsWithheld }

    /// An initiator.
    /// - Parameters:
    ///   - sessionKey: this session's Noise static key (fresh per session: §5).
    ///   - ephemeralKey: this session's Noise ephemeral key (fresh per session).
    ///   - sasNonce: 32 fresh random bytes.
    ///   - mailboxToken: 32 fresh random bytes for the sealed route we hand over.
    ///   - sealKey: a fresh X25519 key pair for the sealed box of that route.
    ///   - psiRandomness: fresh randomness for the common-contacts step, if it runs (§22).
    ///   - invitation: the QR invitation to present (§19), if the session is opened with one.
    ///   - version: the exchange version to speak (§21): the highest both sides speak, as far as the
    ///     initiator knows (the peer's announcement, or 2 after the peer answered `unsupported_version`).
    public init(
        initiatorFor identity: LocalIdentity, expected: ExpectedPeer = ExpectedPeer(), sessionKey: X25519.PrivateKey,
        ephemeralKey: X25519.PrivateKey, sasNonce: [UInt8], mailboxToken: [UInt8], sealKey: X25519.PrivateKey, psiRandomness: PSI.Session.Randomness,
        invitation: Invitation.Claim? = nil, version: Int = ExchangeMessage.version
    ) {
        precondition(ExchangeVersions.spoken.contains(version))
        self.version = version
        precondition(sasNonce.count == SAS.nonceByteCount && mailboxToken.count == RouteRecord.mailboxTokenByteCount)
        precondition(expected.presenceKey == nil || (expected.did != nil && invitation == nil), "a recall names the contact's DID")
        self.invitation = invitation
        role = .initiator
        me = identity
        self.expected = expected
        self.sasNonce = sasNonce
        self.mailboxToken = mailboxToken
        self.sealKey = sealKey
        self.psiRandomness = psiRandomness
        presenceKey = []
        state = .idle(NoiseXXHandshake(role: .initiator, prologue: SessionKind.prologue, staticKey: sessionKey, ephemeralKey: ephemeralKey))
    }

    /// A responder whose message 1 `SessionDispatch.readFirstMessage` read (and found to ask for an
    /// exchange); the handshake carries this session's own static key.
    public init(
        resuming noise: NoiseXXHandshake, identity: LocalIdentity, presenceKey: [UInt8], sasNonce: [UInt8], mailboxToken: [UInt8],
        sealKey: X25519.PrivateKey, psiRandomness: PSI.Session.Randomness
    ) {
        precondition(sasNonce.count == SAS.nonceByteCount && mailboxToken.count == RouteRecord.mailboxTokenByteCount)
        precondition(presenceKey.count == ProtocolLimits.presenceKeyByteCount)
        role = .responder
        invitation = nil
        version = ExchangeMessage.version
        me = identity
        expected = ExpectedPeer()
        self.sasNonce = sasNonce
        self.mailboxToken = mailboxToken
        self.sealKey = sealKey
        self.psiRandomness = psiRandomness
        self.presenceKey = presenceKey
        state = .resumed(noise)
    }

    /// True once the exchange has ended (with or without a contact).
    public var isFinished: Bool {
        switch state {
        case .completed, .failed: true
        case .idle, .resumed, .awaitingMessage2, .awaitingMessage3, .awaitingHello, .awaitingNonce, .awaitingReveal, .awaitingResponder,
            .deciding, .commonContacts, .awaitingCard, .awaitingDone, .committing, .awaitingConfirm:
            false
        }
    }

    /// True while we wait for our own person's (or policy's) decision.
    public var awaitsLocalDecision: Bool {
        if case .deciding(let d) = state, case .undecided = d.mine { return true }
        return false
    }

    /// True once this side has stored the contact (a commit asked for): the end is a contact, confirmed or not.
    public var hasCommitted: Bool {
        switch state {
        case .committing, .awaitingConfirm: true
        default: false
        }
    }

    /// The current phase in words a person reads after "during the" (timeouts, a closed connection,
    /// logs): §12's phases, not the messages inside them.
    public var phaseName: String {
        switch state {
        case .idle, .resumed, .awaitingMessage2, .awaitingMessage3, .awaitingHello, .awaitingNonce, .awaitingReveal: "handshake"
        case .awaitingResponder, .deciding: "decisions"
        case .commonContacts: "common-contacts step"
        case .awaitingCard, .awaitingDone, .committing: "card exchange"
        case .awaitingConfirm: "confirmation"
        case .completed: "completed"
        case .failed: "failed"
        }
    }

    /// The peer once its identity proved it.
    public var identifiedPeer: PeerIdentity? {
        switch state {
        case .awaitingReveal(_, let peer, _, _, _): peer
        case .deciding(let d): d.session.peer
        case .commonContacts(let c): c.session.peer
        case .awaitingCard(let s): s.session.peer
        case .awaitingDone(let a), .committing(let a): a.sent.session.peer
        case .idle, .resumed, .awaitingMessage2, .awaitingMessage3, .awaitingHello, .awaitingNonce, .awaitingResponder, .awaitingConfirm,
            .completed, .failed:
            nil
        }
    }

    /// The timer the current state runs, if any.
    var runningTimer: SessionTimer? {
        switch state {
        case .awaitingMessage2, .awaitingMessage3, .awaitingHello, .awaitingNonce, .awaitingReveal: .handshake
        case .awaitingResponder(_, _, let past): past ? .peerDecision : .consent
        case .deciding(let d): d.waitingPastConsent ? .peerDecision : .consent
        case .commonContacts, .awaitingCard, .awaitingDone, .committing, .awaitingConfirm: .cards
        case .idle, .resumed, .completed, .failed: nil
        }
    }

    // MARK: events

    /// The initiator's message 1, or the resumed responder's message 2; then the first timer, then the
    /// request for this side's card.
    public mutating func start() -> [Action] {
        do throws(ProtocolError) {
            switch state {
            case .idle(var noise):
                let m1 = try noise.writeMessage(payload: SessionKind.exchange.tag)
                state = .awaitingMessage2(noise)
                return [.send(m1), .arm(.handshake), .loadCard]
            case .resumed(var noise):
                let m2 = try noise.writeMessage()
                state = .awaitingMessage3(noise)
                return [.send(m2), .arm(.handshake), .loadCard]
            default:
                return []
            }
        } catch {
            return fail(error)
        }
    }

    /// This side's card (the answer to `loadCard`). Taken once; an acceptance that waited for it leaves now.
    public mutating func cardLoaded(_ loaded: LocalCard, now: Int64) -> [Action] {
        guard card == nil, !isFinished else { return [] }
        var loaded = loaded
        // An initiator makes the card as soon as the responder accepts: its disclosure proof is made
        // now, in the wait for message 2, not then (it depends on neither the session nor the
        // receiver, §9). A responder's card is made while the initiator decides (`prepareCard`):
        // nothing to gain, and nothing is made for a stranger it declines.
        if role == .initiator {
            loaded.disclosureProof = try? ProximityPayload.disclosureProof(
                card: loaded.card, policy: loaded.policy, signer: me.keys.p256, now: now, version: version)
        }
        card = loaded
        guard case .deciding(let d) = state, case .waitingForCard(let message) = d.mine else { return [] }
        do throws(ProtocolError) {
            return try sendAcceptance(d, card: loaded, message: message, now: now)
        } catch {
            return fail(error)
        }
    }

    /// One received frame.
    public mutating func receive(_ frame: [UInt8], now: Int64) -> [Action] {
        do {
            return try handle(frame, now: now)
        } catch {
            return fail(error)
        }
    }

    /// Our person's (or policy's) decision, and the ephemeral message to send with our card. A
    /// refusal's `reason` stays on this side (its events and log): on the wire a refusal says only that
    /// it is one (§8), so a stranger learns nothing of who or what declined.
    public mutating func decide(accept: Bool, message: String?, reason: String? = nil, now: Int64) -> [Action] {
        guard case .deciding(var d) = state, case .undecided = d.mine else { return [] }
        do throws(ProtocolError) {
            if let message, let problem = ProximityPayload.messageProblemPhrase(message) {
                throw ProtocolError(.protocolError, problem)
            }
            guard accept else {
                let why = reason.flatMap { $0.isEmpty ? nil : String($0.prefix(200)) }
                var actions = try send(.decision(accept: false, reason: nil, identity: nil), on: &d.session.channel)
                state = .failed
                actions.append(.failed(ProtocolError(.declined, why.map { Phrase("declined here: %1$@", $0) } ?? Phrase("declined here")), byPeer: false))
                return actions
            }
            let message = message?.isEmpty == true ? nil : message
            guard let card else {
                d.mine = .waitingForCard(message: message)
                state = .deciding(d)
                return []
            }
            return try sendAcceptance(d, card: card, message: message, now: now)
        } catch {
            return fail(error)
        }
    }

    /// Whether our acceptance could offer the common-contacts step (§22): our person turned it on (or
    /// our card, which says so, is not loaded yet).
    public var mayOfferCommonContacts: Bool { card.map { $0.commonContacts != nil } ?? true }

    /// How a peer's refusal reads: "the peer declined", and its reason after a colon when it gave one
    /// (the first 100 characters, and not a bare "declined" again, which older nodes send).
    static func peerDeclined(_ reason: String?) -> String { peerDeclinedPhrase(reason).english }

    /// `peerDeclined` as a sentence to say in a person's language.
    static func peerDeclinedPhrase(_ reason: String?) -> Phrase {
        guard let reason, !reason.allSatisfy(\.isWhitespace), reason.lowercased() != "declined" else {
            return Phrase("the peer declined")
        }
        return Phrase("the peer declined: %1$@", reason.prefix(100))
    }

    /// The driver's word, once the peer is known (its `identified`) and before our decision: do not
    /// offer the common-contacts step to this peer (§22.3's rate). It belongs to the deciding state;
    /// said at any other time there is no acceptance left for it to change.
    public mutating func withholdCommonContacts() {
        guard case .deciding(var d) = state else { return }
        d.commonContactsWithheld = true
        state = .deciding(d)
    }

    /// The store has written the contact the last `commit` asked for: the initiator says `done` and
    /// waits for the confirmation; the responder confirms and is finished.
    public mutating func committed() -> [Action] {
        guard case .committing(var a) = state else { return [] }
        do throws(ProtocolError) {
            switch role {
            case .initiator:
                let actions = try send(.done, on: &a.sent.session.channel)
                state = .awaitingConfirm(a.sent.session.channel)
                return actions
            case .responder:
                var actions = try send(.confirm, on: &a.sent.session.channel)
                state = .completed
                actions.append(.finished)
                return actions
            }
        } catch {
            return fail(error)
        }
    }

    /// The store could not write the contact the last `commit` asked for: nothing is kept on this side,
    /// so the exchange fails here and the peer is told (an initiator's peer then holds nothing either; a
    /// responder's initiator, unconfirmed, asks and withdraws).
    public mutating func storeFailed(_ error: ProtocolError) -> [Action] {
        guard case .committing(var a) = state else { return fail(error) }
        var actions: [Action] = []
        if let sent = try? send(.abort(code: error.code.rawValue, reason: error.message), on: &a.sent.session.channel) { actions += sent }
        state = .failed
        actions.append(.failed(error, byPeer: false))
        return actions
    }

    /// The store's commit went unanswered (the book froze or went away as it committed): whether the
    /// contact was kept is not known here, so the peer is told nothing — the connection just ends. An
    /// initiator then keeps its contact unconfirmed and asks (§11); the book answers once it is back.
    public mutating func storeInDoubt(_ error: ProtocolError) -> [Action] {
        guard case .committing = state else { return fail(error) }
        state = .failed
        return [.failed(error, byPeer: false)]
    }

    /// A timer this machine armed ran out after `seconds`. A timer the current state no longer runs
    /// (it was replaced as the firing was on its way) is ignored.
    public mutating func timerFired(_ timer: SessionTimer, after seconds: Int) -> [Action] {
        guard timer == runningTimer else { return [] }
        switch timer {
        case .handshake: return fail(ProtocolError(.timeout, Phrase("no answer within %1$@ s during the %2$@", String(seconds), phaseName)))
        case .consent:
            // Our side accepted (or, as an initiator waiting for the responder, has nothing to decide
            // yet) and the peer's decision never came: that is silence on the wire (an outage, a frozen
            // laptop), not a decision, so it is a timeout; only our own person's missing decision is
            // consent_timeout. A peer whose person did not decide says so itself (its abort is on its
            // way): wait a moment for it before calling the silence an outage.
            if case .deciding(var d) = state, !d.isUndecided {
                d.waitingPastConsent = true
                state = .deciding(d)
                return [.arm(.peerDecision)]
            }
            if case .awaitingResponder(let c, let sas, false) = state {
                state = .awaitingResponder(c, sas: sas, waitingPastConsent: true)
                return [.arm(.peerDecision)]
            }
            // Our person did not decide: consent_timeout here, and to the peer a refusal like any other
            // (§8) — the same `decision` a person's "no" sends, so a stranger cannot tell that a person
            // was asked, nor how long this side gives them.
            let timedOut = ProtocolError(.consentTimeout, Phrase("no decision within %1$@ s", String(seconds)))
            if case .deciding(var d) = state, d.isUndecided {
                var actions = (try? send(.decision(accept: false, reason: nil, identity: nil), on: &d.session.channel)) ?? []
                state = .failed
                actions.append(.failed(timedOut, byPeer: false))
                return actions
            }
            return fail(timedOut)
        case .peerDecision:
            return fail(
                ProtocolError(
                    .timeout,
                    Phrase(
                        "the peer's decision never arrived (no answer for %1$@ s past the consent time): the network between you may be down",
                        String(seconds))))
        case .cards, .mail: return fail(ProtocolError(.timeout, Phrase("no progress within %1$@ s", String(seconds))))
        }
    }

    /// Ends the exchange from our side (a local error, the connection's end); tells the peer why when it can.
    public mutating func abort(_ error: ProtocolError) -> [Action] {
        fail(error)
    }

    // MARK: handling

    mutating func handle(_ frame: [UInt8], now: Int64) throws(ProtocolError) -> [Action] {
        switch state {
        case .idle, .resumed:
            throw ProtocolError(.protocolError, Phrase("the peer sent a frame before this side began"))
        case .awaitingMessage2(let noise):
            return try receiveInAwaitingMessage2(noise, frame: frame, now: now)
        case .awaitingMessage3(let noise):
            return try receiveInAwaitingMessage3(noise, frame: frame, now: now)
        case .awaitingHello(let channel):
            return try receiveInAwaitingHello(channel, frame: frame, now: now)
        case .awaitingNonce(let channel):
            return try receiveInAwaitingNonce(channel, frame: frame, now: now)
        case .awaitingReveal(let channel, let known, let commitment, let invite, let revealed):
            return try receiveInAwaitingReveal(channel, known, commitment, invite, revealed, frame: frame, now: now)
        case .awaitingResponder(let channel, let sas, let past):
            return try receiveInAwaitingResponder(channel, sas, past, frame: frame, now: now)
        case .deciding(let d):
            return try receiveInDeciding(d, frame: frame, now: now)
        case .commonContacts(let c):
            return try receiveInCommonContacts(c, frame: frame, now: now)
        case .awaitingCard(let sent):
            return try receiveInAwaitingCard(sent, frame: frame, now: now)
        case .awaitingDone(let a):
            return try receiveInAwaitingDone(a, frame: frame, now: now)
        case .committing(let a):
            return try receiveInCommitting(a, frame: frame, now: now)
        case .awaitingConfirm(let channel):
            return try receiveInAwaitingConfirm(channel, frame: frame, now: now)
        case .completed, .failed:
            return []
        }
    }

    /// A message that has no place in this state: the peer's abort ends the exchange as the peer's
    /// doing, anything else is a protocol error.
    mutating func unexpected(_ message: ExchangeMessage) throws(ProtocolError) -> [Action] {
        if case .abort(let code, let reason) = message {
            let c = ProtocolErrorCode(rawValue: code) ?? .protocolError
            // A refusal reads as one ("the peer declined: …") whether it came as a decision or an abort.
            let error = ProtocolError(c, c == .declined ? Self.peerDeclinedPhrase(reason) : Phrase("the peer ended the exchange: %1$@", reason.prefix(200)))
            if hasCommitted {
                state = .failed
                return [.unconfirmed(error)]
            }
            state = .failed
            return [.failed(error, byPeer: true)]
        }
        throw ProtocolError(.protocolError, Phrase("unexpected %1$@ during %2$@", message.typeName, phaseName))
    }

    // MARK: steps

    /// Our identity for this session: the DID's signature over h, in our role.
    func makeIdentity(_ channel: EstablishedChannel) throws(ProtocolError) -> ExchangeMessage.Identity {
        var identity = ExchangeMessage.Identity(
            did: me.identity.did, name: me.name, pubKey: me.keys.x25519.publicKey.rawRepresentation,
            signPubKey: me.keys.ed25519.publicKey.rawRepresentation)
        let input = ExchangeMessage.Identity.signingInput(identity.signedObject(role: role, handshakeHash: channel.handshakeHash))
        do { identity.signature = try me.keys.p256.signature(for: input) } catch {
            throw ProtocolError(.internalError, Phrase("signing our identity failed: %1$@", error.phrase))
        }
        return identity
    }

    /// Checks the peer's DID proof over this session's h, and what we expected of the peer.
    func verify(_ identity: ExchangeMessage.Identity, _ channel: EstablishedChannel) throws(ProtocolError) -> PeerIdentity {
        let didKey: DIDKey
        do { didKey = try DIDKey(parsing: identity.did) } catch {
            throw ProtocolError(.badIdentity, Phrase("the peer's DID is unusable: %1$@", error.phrase))
        }
        guard didKey.keyType == .p256, let ec = didKey.ecPublicKey() else { throw ProtocolError(.badIdentity, Phrase("the peer's DID is not a P-256 did:key")) }
        let peerRole: NoiseXXHandshake.Role = role == .initiator ? .responder : .initiator
        let input = ExchangeMessage.Identity.signingInput(identity.signedObject(role: peerRole, handshakeHash: channel.handshakeHash))
        guard ec.isValidRawSignature(identity.signature, for: input) else {
            throw ProtocolError(.badIdentity, Phrase("the peer's DID signature over this session does not verify"))
        }
        let sign: Ed25519.PublicKey
        let pub: X25519.PublicKey
        do {
            sign = try Ed25519.PublicKey(rawRepresentation: identity.signPubKey)
            pub = try X25519.PublicKey(rawRepresentation: identity.pubKey)
        } catch { throw ProtocolError(.badIdentity, Phrase("bad %1$@ or %2$@", "signPubKey", "pubKey")) }
        let fingerprint = PublicIdentity.fingerprint(didKey: didKey, pubKey: pub, signPubKey: sign)
        if let want = expected.fingerprint, !fingerprint.hasPrefix(want.lowercased()) {
            throw ProtocolError(
                .identityMismatch, Phrase("expected fingerprint %1$@ but the peer proved %2$@: someone else is answering", want, fingerprint))
        }
        if let want = expected.did, want != identity.did {
            throw ProtocolError(.identityMismatch, Phrase("expected %1$@ but the peer proved %2$@", want, identity.did))
        }
        if identity.did == me.identity.did {
            throw ProtocolError(.badIdentity, Phrase("the peer uses this node's own identity"))
        }
        return PeerIdentity(did: identity.did, didKey: didKey, name: identity.name, pubKey: pub, signPubKey: sign, fingerprint: fingerprint)
    }

    /// Our acceptance (with our identity, when we are a responder that has not shown it), then our
    /// card if the peer has accepted too.
    mutating func sendAcceptance(_ d: Deciding, card: LocalCard, message: String?, now: Int64) throws(ProtocolError) -> [Action] {
        var d = d
        let identity = role == .responder && !d.revealed ? try makeIdentity(d.session.channel) : nil
        var actions = try send(.decision(accept: true, reason: nil, identity: identity, commonContacts: offersCommonContacts(d, card)), on: &d.session.channel)
        d.mine = .sent(message: message, card: card, prepared: nil)
        d.revealed = true
        state = .deciding(d)
        if d.theirsAccepted {
            do { actions += try sendCard(d, card: card, message: message, now: now) } catch {
                // The acceptance went with a nonce the abort must follow.
                return actions + fail(error)
            }
        } else {
            actions.append(.prepareCard)
        }
        return actions
    }

    /// Makes our card now, while the peer decides (after `.prepareCard`); it is sent, unchanged, if the
    /// peer accepts. A card that cannot be made here is made (and its failure reported) when it is due.
    public mutating func prepareCard(now: Int64) -> [Action] {
        guard case .deciding(var d) = state, case .sent(let message, let card, nil) = d.mine, !d.theirsAccepted else { return [] }
        // The common-contacts step, when the peer offers it, runs before the cards: nothing to gain.
        guard !offersCommonContacts(d, card) else { return [] }
        guard let made = try? makeCard(d.session, card: card, message: message, now: now) else { return [] }
        d.mine = .sent(message: message, card: card, prepared: made)
        state = .deciding(d)
        return []
    }

    /// Both accepted and our card is loaded: make it, send it, wait for theirs — or, when both offered
    /// it, run the common-contacts step first (§22; the initiator opens it, the responder waits).
    /// `common`: what that step found, when it has run (the cards follow it).
    mutating func sendCard(
        _ d: Deciding, card: LocalCard, message: String?, prepared: PreparedCard? = nil, common: PSI.Result? = nil,
        now: Int64
    ) throws(ProtocolError) -> [Action] {
        if common == nil, d.theirsOffered, offersCommonContacts(d, card), let mine = card.commonContacts {
            // Neither side's own DID can be common (§22.1): leave both out.
            let set = mine.filter { $0 != d.session.peer.did && $0 != me.identity.did }
            var c = CommonContacts(session: d.session, psi: PSI.Session(role: role, mine: set, randomness: psiRandomness), card: card, message: message)
            var actions: [Action] = [.commonContactsStarted(peer: d.session.peer.did)]
            if role == .initiator { actions += try send(.psi(c.psi.start()), on: &c.session.channel) }
            state = .commonContacts(c)
            // The cards phase begins with the step (§22.3) and is not restarted when the card goes.
            return actions + [.arm(.cards)]
        }
        var session = d.session
        let made: PreparedCard
        if let prepared { made = prepared } else { made = try makeCard(session, card: card, message: message, now: now) }
        var actions = try send(.card(payload: made.payload.json, message: message, presenceKey: card.presenceKey), on: &session.channel)
        state = .awaitingCard(CardSent(session: session, card: card, myMessage: message, myPayload: made.payload, myRoute: made.route, common: common))
        if common == nil { actions.append(.arm(.cards)) }
        return actions
    }

    /// Our card for this session: the route record sealed to the peer, and the payload (selective
    /// disclosure, signature over the session binding and the receiver).
    func makeCard(_ session: Identified, card: LocalCard, message: String?, now: Int64) throws(ProtocolError) -> PreparedCard {
        let peer = session.peer
        let route = RouteRecord(
            did: me.identity.did, pubKey: me.identity.pubKey, signPubKey: me.identity.signPubKey,
            fingerprint: me.identity.fingerprint, mailboxToken: mailboxToken, recipient: peer.did, issuedAt: now,
            expiresAt: now + card.routeValidity, hints: Array(card.routeHints.prefix(RouteRecord.maximumHints)))
        let sealed = SealedRoute.seal(route, signer: me.keys.ed25519, to: peer.pubKey, ephemeral: sealKey)
        do {
            let payload = try ProximityPayload.make(
                card: card.card, policy: card.policy, keys: me.keys, receiver: peer.did,
                sessionBinding: session.channel.handshakeHash, ephemeralMessage: message, sealedRoute: sealed,
                issuerProof: card.issuerProof, sdProof: card.disclosureProof, now: now, version: version)
            return PreparedCard(payload: payload, route: route)
        } catch {
            throw ProtocolError(.internalError, Phrase("building our card failed: %1$@", error.phrase))
        }
    }

    func verifyCard(_ json: JSONValue, message: String?, presenceKey: [UInt8], sent: CardSent, now: Int64) throws(ProtocolError) -> Received {
        let peer = sent.session.peer
        let context = PayloadVerificationContext(
            expectedSenderDID: peer.did, receiverDID: me.identity.did,
            sessionBinding: sent.session.channel.handshakeHash, peerStaticKey: peer.pubKey,
            ephemeralMessage: message, now: now, maximumSkew: ProtocolLimits.maximumClockSkew,
            requireDisclosureProof: true, version: version)
        let verified: ProximityPayload.Verified
        switch ProximityPayload.verify(json: json, context: context) {
        case .success(let v): verified = v
        case .failure(.tooLarge(let why)): throw ProtocolError(.tooLarge, Phrase("the peer's card is over a limit: %1$@", why))
        case .failure(let f): throw ProtocolError(.badCard, Phrase("the peer's card failed verification (%1$@): %2$@", f.code, f.phrase))
        }
        guard verified.signPubKey == peer.signPubKey else {
            throw ProtocolError(.badCard, Phrase("the card's %1$@ is not the one the peer proved in its identity", "signPubKey"))
        }
        let missing = sent.card.requiredFields.subtracting(verified.payload.cardFields.presentFields)
        guard missing.isEmpty else {
            throw ProtocolError(
                .declined, Phrase("the card does not disclose %1$@, which this node requires", missing.map(\.rawValue).sorted().joined(separator: ", ")))
        }
        guard let sealed = verified.payload.sealedRoute else { throw ProtocolError(.badCard, Phrase("the peer's card carries no sealed route")) }
        switch SealedRoute.open(
            sealed, with: me.keys.x25519, expectedIssuer: peer.did, expectedRecipient: me.identity.did,
            expectedSignKey: peer.signPubKey, now: now)
        {
        case .success(let route):
            guard route.pubKey == peer.pubKey, route.fingerprint == peer.fingerprint else {
                throw ProtocolError(.badCard, Phrase("the peer's sealed route names other keys than the session's"))
            }
            return Received(verified: verified, json: json, message: message, sealedRoute: sealed, route: route, presenceKey: presenceKey)
        case .failure(.tooLarge(let n)):
            throw ProtocolError(.tooLarge, Phrase("the peer's sealed route is %1$@ bytes; at most %2$@", String(n), String(SealedRoute.maximumLength)))
        case .failure(.overLimit(let why)):
            throw ProtocolError(.tooLarge, Phrase("the peer's sealed route: %1$@", why))
        case .failure(let f):
            throw ProtocolError(.badCard, Phrase("the peer's sealed route: %1$@", f.phrase))
        }
    }

    func outcome(_ a: AwaitingDone, now: Int64) -> ExchangeOutcome {
        let s = a.sent.session
        return ExchangeOutcome(
            peer: s.peer, sas: s.sas, handshakeHash: s.channel.handshakeHash, myPayload: a.sent.myPayload, theirPayload: a.received.verified,
            theirPayloadJSON: a.received.json, myMessage: a.sent.myMessage, theirMessage: a.received.message,
            theirSealedRoute: a.received.sealedRoute, theirRoute: a.received.route, myRoute: a.sent.myRoute,
            graphEdgeID: Contact.graphEdgeID(me.identity.did, s.peer.did, sessionBinding: s.channel.handshakeHash), completedAt: now,
            invited: s.invited, theirPresenceKey: a.received.presenceKey, commonContacts: a.sent.common, version: version)
    }

    func decrypt(_ frame: [UInt8], on channel: inout EstablishedChannel) throws(ProtocolError) -> ExchangeMessage {
        try ExchangeMessage(decoding: try channel.decrypt(frame))
    }

    func send(_ message: ExchangeMessage, on channel: inout EstablishedChannel) throws(ProtocolError) -> [Action] {
        [.send(try channel.encrypt(message.encoded))]
    }

    /// The encrypted channel, when there is one (to tell the peer why we end).
    var channel: EstablishedChannel? {
        switch state {
        case .awaitingHello(let c), .awaitingNonce(let c), .awaitingReveal(let c, _, _, _, _), .awaitingResponder(let c, _, _): c
        case .deciding(let d): d.session.channel
        case .commonContacts(let c): c.session.channel
        case .awaitingCard(let s): s.session.channel
        case .awaitingDone(let a): a.sent.session.channel
        case .idle, .resumed, .awaitingMessage2, .awaitingMessage3, .committing, .awaitingConfirm, .completed, .failed: nil
        }
    }

    mutating func fail(_ error: ProtocolError) -> [Action] {
        guard !isFinished else { return [] }
        // After our commit the end is a contact either way: the initiator's stays unconfirmed until the
        // confirmation query answers (§11); nothing is sent (the peer may already hold it too).
        if hasCommitted {
            state = .failed
            return [.unconfirmed(error)]
        }
        var actions: [Action] = []
        // Tell the peer why, when there is a channel to tell it on.
        if var c = channel, let sent = try? send(.abort(code: error.code.rawValue, reason: error.message), on: &c) {
            actions += sent
        }
        state = .failed
        actions.append(.failed(error, byPeer: false))
        return actions
    }
}
