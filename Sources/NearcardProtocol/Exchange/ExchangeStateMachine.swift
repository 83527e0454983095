import NearcardCrypto
import NearcardModel

/// One exchange, from the first handshake byte to both contacts: a pure state machine.
/// The driver feeds it received frames (`receive`), this side's card when it asks for it
/// (`cardLoaded`), the local decision (`decide`), the timers it armed (`timerFired`) and local
/// failures (`abort`), and performs the actions it returns. It never touches a socket, a clock or a disk.
///
///     I -> R   Noise XX message 1 (payload "nearcard/1")
///     R -> I   Noise XX message 2
///     I -> R   Noise XX message 3
///     I -> R   hello {sasCommit}            (encrypted from here on)
///     R -> I   hello {sasNonce}
///     I -> R   sas-reveal                   both show the SAS and ask for consent
///     both     decision {accept}
///     both     card {payload, message?}     once both accepted
///     both     done                         once the peer's card verified
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
        /// Run this timer from now (replacing the one before); report it with `timerFired` if it runs out.
        case arm(SessionTimer)
        /// The peer is authenticated and the SAS is known: show it and ask for a decision. A responder
        /// whose initiator presented a QR invitation gets it here, to check (§19): accepted, it stands
        /// for the decision; refused, the driver aborts with `invite_refused`.
        case identified(PeerIdentity, sas: String, invite: Invitation.Presented?)
        /// Both cards verified and both `done`: store the contact.
        case completed(ExchangeOutcome)
        /// The exchange is over without a contact. `byPeer`: the peer aborted or declined.
        case failed(ProtocolError, byPeer: Bool)
    }

    // MARK: states

    /// The channel and the peer as its hello proved it, with the SAS both screens show.
    struct Identified: Sendable {
        var channel: EstablishedChannel
        let peer: PeerIdentity
        let sas: String
        /// The session was opened with a QR invitation (ours as initiator, presented to us as responder).
        let invited: Bool
    }

    /// This side's decision, and whether it has gone to the peer. An acceptance waits for this side's
    /// card before it is sent, so the peer's card can never arrive before ours exists.
    enum MyDecision: Sendable {
        case undecided
        case waitingForCard(message: String?)
        case sent(message: String?, card: LocalCard)
    }

    struct Deciding: Sendable {
        var session: Identified
        var mine: MyDecision
        /// The peer accepted (a refusal ends the exchange).
        var theirsAccepted: Bool
        /// Our person or policy has not answered yet.
        var isUndecided: Bool { if case .undecided = mine { true } else { false } }
        /// The consent time ran out after we decided: the grace for the peer's verdict runs.
        var waitingPastConsent = false
    }

    struct CardSent: Sendable {
        var session: Identified
        let card: LocalCard
        let myMessage: String?
        let myPayload: ProximityPayload
        let myRoute: RouteRecord
    }

    struct Received: Sendable {
        let verified: ProximityPayload.Verified
        let json: JSONValue
        let message: String?
        let sealedRoute: String
        let route: RouteRecord
    }

    struct AwaitingDone: Sendable {
        var sent: CardSent
        let received: Received
    }

    /// Where the exchange is; each case is named for what this side waits for and carries what that needs.
    enum State: Sendable {
        /// Initiator, before `start`.
        case idle(NoiseXXHandshake)
        /// Responder: message 1 read by the dispatch, message 2 not yet written.
        case resumed(NoiseXXHandshake)
        case awaitingMessage2(NoiseXXHandshake)
        case awaitingMessage3(NoiseXXHandshake)
        case awaitingHello(EstablishedChannel)
        /// Responder: the initiator's hello (and its commitment) arrived, ours went back.
        case awaitingReveal(EstablishedChannel, peer: PeerIdentity, commitment: [UInt8], invite: Invitation.Presented?)
        case deciding(Deciding)
        case awaitingCard(CardSent)
        case awaitingDone(AwaitingDone)
        case completed
        case failed
    }

    public let role: NoiseXXHandshake.Role
    private let me: LocalIdentity
    private let expected: ExpectedPeer
    private let sasNonce: [UInt8]
    private let mailboxToken: [UInt8]
    /// Initiator: the QR invitation this session was opened with.
    private let invitation: Invitation.Claim?
    private var state: State
    /// This side's card, once loaded: it may arrive in any state before the cards go across.
    private var card: LocalCard?

    /// An initiator.
    /// - Parameters:
    ///   - ephemeralKey: this session's Noise ephemeral key (fresh per session).
    ///   - sasNonce: 32 fresh random bytes.
    ///   - mailboxToken: 32 fresh random bytes for the sealed route we hand over.
    ///   - invitation: the QR invitation to present (§19), if the session is opened with one.
    public init(initiatorFor identity: LocalIdentity, expected: ExpectedPeer = ExpectedPeer(), ephemeralKey: X25519.PrivateKey,
                sasNonce: [UInt8], mailboxToken: [UInt8], invitation: Invitation.Claim? = nil) {
        precondition(sasNonce.count == SAS.nonceByteCount && mailboxToken.count == RouteRecord.mailboxTokenByteCount)
        self.invitation = invitation
        role = .initiator
        me = identity
        self.expected = expected
        self.sasNonce = sasNonce
        self.mailboxToken = mailboxToken
        state = .idle(NoiseXXHandshake(role: .initiator, prologue: SessionKind.prologue, staticKey: identity.keys.x25519, ephemeralKey: ephemeralKey))
    }

    /// A responder whose message 1 `SessionDispatch.readFirstMessage` read (and found to ask for an exchange).
    public init(resuming noise: NoiseXXHandshake, identity: LocalIdentity, sasNonce: [UInt8], mailboxToken: [UInt8]) {
        precondition(sasNonce.count == SAS.nonceByteCount && mailboxToken.count == RouteRecord.mailboxTokenByteCount)
        role = .responder
        invitation = nil
        me = identity
        expected = ExpectedPeer()
        self.sasNonce = sasNonce
        self.mailboxToken = mailboxToken
        state = .resumed(noise)
    }

    /// True once the exchange has completed or failed.
    public var isFinished: Bool {
        switch state {
        case .completed, .failed: true
        case .idle, .resumed, .awaitingMessage2, .awaitingMessage3, .awaitingHello, .awaitingReveal, .deciding, .awaitingCard, .awaitingDone: false
        }
    }

    /// True while we wait for our own person's (or policy's) decision.
    public var awaitsLocalDecision: Bool {
        if case .deciding(let d) = state, case .undecided = d.mine { return true }
        return false
    }

    /// A short name of the current phase, for logs and timeouts.
    public var phaseName: String {
        switch state {
        case .idle, .resumed, .awaitingMessage2, .awaitingMessage3: "handshake"
        case .awaitingHello: "hello"
        case .awaitingReveal: "sas-reveal"
        case .deciding: "consent"
        case .awaitingCard, .awaitingDone: "cards"
        case .completed: "completed"
        case .failed: "failed"
        }
    }

    /// The peer once its hello proved it.
    public var identifiedPeer: PeerIdentity? {
        switch state {
        case .awaitingReveal(_, let peer, _, _): peer
        case .deciding(let d): d.session.peer
        case .awaitingCard(let s): s.session.peer
        case .awaitingDone(let a): a.sent.session.peer
        case .idle, .resumed, .awaitingMessage2, .awaitingMessage3, .awaitingHello, .completed, .failed: nil
        }
    }

    /// The timer the current state runs, if any.
    private var runningTimer: SessionTimer? {
        switch state {
        case .awaitingMessage2, .awaitingMessage3, .awaitingHello, .awaitingReveal: .handshake
        case .deciding(let d): d.waitingPastConsent ? .peerDecision : .consent
        case .awaitingCard, .awaitingDone: .cards
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
            case .awaitingMessage2, .awaitingMessage3, .awaitingHello, .awaitingReveal, .deciding, .awaitingCard, .awaitingDone, .completed, .failed:
                return []
            }
        } catch {
            return fail(error)
        }
    }

    /// This side's card (the answer to `loadCard`). Taken once; an acceptance that waited for it leaves now.
    public mutating func cardLoaded(_ loaded: LocalCard, now: Int64) -> [Action] {
        guard card == nil, !isFinished else { return [] }
        card = loaded
        guard case .deciding(var d) = state, case .waitingForCard(let message) = d.mine else { return [] }
        do throws(ProtocolError) {
            var actions = try send(.decision(accept: true, reason: nil), on: &d.session.channel)
            d.mine = .sent(message: message, card: loaded)
            state = .deciding(d)
            if d.theirsAccepted { actions += sendCardOrFail(d, card: loaded, message: message, now: now) }
            return actions
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

    /// Our person's (or policy's) decision, and the ephemeral message to send with our card; a
    /// refusal's `reason` is sent to the peer.
    public mutating func decide(accept: Bool, message: String?, reason: String? = nil, now: Int64) -> [Action] {
        guard case .deciding(var d) = state, case .undecided = d.mine else { return [] }
        do throws(ProtocolError) {
            if let message, let problem = ProximityPayload.messageProblem(message) {
                throw ProtocolError(.protocolError, problem)
            }
            guard accept else {
                let why = String((reason ?? "declined").prefix(200))
                var actions = try send(.decision(accept: false, reason: why), on: &d.session.channel)
                state = .failed
                actions.append(.failed(ProtocolError(.declined, "declined here (\(why))"), byPeer: false))
                return actions
            }
            let message = message?.isEmpty == true ? nil : message
            guard let card else {
                d.mine = .waitingForCard(message: message)
                state = .deciding(d)
                return []
            }
            var actions = try send(.decision(accept: true, reason: nil), on: &d.session.channel)
            d.mine = .sent(message: message, card: card)
            state = .deciding(d)
            if d.theirsAccepted { actions += sendCardOrFail(d, card: card, message: message, now: now) }
            return actions
        } catch {
            return fail(error)
        }
    }

    /// A timer this machine armed ran out after `seconds`. A timer the current state no longer runs
    /// (it was replaced as the firing was on its way) is ignored.
    public mutating func timerFired(_ timer: SessionTimer, after seconds: Int) -> [Action] {
        guard timer == runningTimer else { return [] }
        switch timer {
        case .handshake: return fail(ProtocolError(.timeout, "no answer within \(seconds) s during the \(phaseName)"))
        case .consent:
            // Our side accepted and the peer's decision never came: that is silence on the wire (an
            // outage, a frozen laptop), not a decision, so it is a timeout; only our own person's
            // missing decision is consent_timeout.
            if case .deciding(var d) = state, !d.isUndecided {
                // A peer whose person did not decide says so itself (its abort is on its way); wait a
                // moment for it before calling the silence an outage.
                d.waitingPastConsent = true
                state = .deciding(d)
                return [.arm(.peerDecision)]
            }
            return fail(ProtocolError(.consentTimeout, "no decision within \(seconds) s"))
        case .peerDecision:
            return fail(ProtocolError(.timeout, "the peer's decision never arrived (no answer for \(seconds) s past the consent time): the network between you may be down"))
        case .cards, .mail: return fail(ProtocolError(.timeout, "no progress within \(seconds) s"))
        }
    }

    /// Ends the exchange from our side (a local error, the connection's end); tells the peer why when it can.
    public mutating func abort(_ error: ProtocolError) -> [Action] {
        fail(error)
    }

    // MARK: handling

    private mutating func handle(_ frame: [UInt8], now: Int64) throws(ProtocolError) -> [Action] {
        switch state {
        case .idle, .resumed:
            throw ProtocolError(.protocolError, "the peer sent a frame before this side began")
        case .awaitingMessage2(var noise):
            // <- e, ee, s, es; then -> s, se and our hello in the same flight.
            try noise.readEmptyMessage(frame)
            let m3 = try noise.writeMessage()
            var channel = try EstablishedChannel(completed: noise)
            var actions: [Action] = [.send(m3)]
            actions += try send(.hello(try makeHello(channel)), on: &channel)
            state = .awaitingHello(channel)
            return actions
        case .awaitingMessage3(var noise):
            try noise.readEmptyMessage(frame)
            state = .awaitingHello(try EstablishedChannel(completed: noise))
            return []
        case .awaitingHello(var channel):
            let message = try decrypt(frame, on: &channel)
            // On every path below the state is replaced or the exchange fails; keep the advanced cipher.
            state = .awaitingHello(channel)
            guard case .hello(let hello) = message else { return try unexpected(message) }
            // Verified now, so a bad identity ends the session before we reveal anything more.
            let peer = try verifyHello(hello, channel)
            switch role {
            case .responder:
                guard let commitment = hello.sasCommit else { throw ProtocolError(.protocolError, "the initiator's hello has no SAS commitment") }
                let invite = hello.invite.map { Invitation.Presented(id: $0.id, proof: $0.proof, handshakeHash: channel.handshakeHash) }
                let actions = try send(.hello(try makeHello(channel)), on: &channel)
                state = .awaitingReveal(channel, peer: peer, commitment: commitment, invite: invite)
                return actions
            case .initiator:
                guard let theirNonce = hello.sasNonce else { throw ProtocolError(.protocolError, "the responder's hello has no SAS nonce") }
                var actions = try send(.sasReveal(nonce: sasNonce), on: &channel)
                let sas = SAS.display(SAS.value(handshakeHash: channel.handshakeHash, initiatorNonce: sasNonce, responderNonce: theirNonce))
                state = .deciding(Deciding(session: Identified(channel: channel, peer: peer, sas: sas, invited: invitation != nil),
                                           mine: .undecided, theirsAccepted: false))
                actions += [.arm(.consent), .identified(peer, sas: sas, invite: nil)]
                return actions
            }
        case .awaitingReveal(var channel, let peer, let commitment, let invite):
            let message = try decrypt(frame, on: &channel)
            state = .awaitingReveal(channel, peer: peer, commitment: commitment, invite: invite)
            guard case .sasReveal(let nonce) = message else { return try unexpected(message) }
            guard Sodium.constantTimeEquals(SAS.commitment(handshakeHash: channel.handshakeHash, nonce: nonce), commitment) else {
                throw ProtocolError(.badCommitment, "the initiator's SAS nonce does not match its commitment")
            }
            let sas = SAS.display(SAS.value(handshakeHash: channel.handshakeHash, initiatorNonce: nonce, responderNonce: sasNonce))
            state = .deciding(Deciding(session: Identified(channel: channel, peer: peer, sas: sas, invited: invite != nil), mine: .undecided,
                                       theirsAccepted: false))
            return [.arm(.consent), .identified(peer, sas: sas, invite: invite)]
        case .deciding(var d):
            let message = try decrypt(frame, on: &d.session.channel)
            state = .deciding(d)
            guard case .decision(let accept, let reason) = message, !d.theirsAccepted else { return try unexpected(message) }
            guard accept else {
                state = .failed
                return [.failed(ProtocolError(.declined, "the peer declined" + (reason.map { " (\($0.prefix(100)))" } ?? "")), byPeer: true)]
            }
            d.theirsAccepted = true
            state = .deciding(d)
            guard case .sent(let myMessage, let card) = d.mine else { return [] }
            return sendCardOrFail(d, card: card, message: myMessage, now: now)
        case .awaitingCard(var sent):
            let message = try decrypt(frame, on: &sent.session.channel)
            state = .awaitingCard(sent)
            switch message {
            case .card(let payload, let theirMessage):
                let received = try verifyCard(payload, message: theirMessage, sent: sent, now: now)
                let actions = try send(.done, on: &sent.session.channel)
                state = .awaitingDone(AwaitingDone(sent: sent, received: received))
                return actions
            case .done:
                throw ProtocolError(.protocolError, "the peer said done before sending its card")
            case .hello, .sasReveal, .decision, .abort:
                return try unexpected(message)
            }
        case .awaitingDone(var a):
            let message = try decrypt(frame, on: &a.sent.session.channel)
            state = .awaitingDone(a)
            guard case .done = message else { return try unexpected(message) }
            state = .completed
            return [.completed(outcome(a, now: now))]
        case .completed, .failed:
            return []
        }
    }

    /// A message that has no place in this state: the peer's abort ends the exchange as the peer's
    /// doing, anything else is a protocol error.
    private mutating func unexpected(_ message: ExchangeMessage) throws(ProtocolError) -> [Action] {
        if case .abort(let code, let reason) = message {
            state = .failed
            let c = ProtocolError.Code(rawValue: code) ?? .protocolError
            return [.failed(ProtocolError(c, "the peer ended the exchange: \(reason.prefix(200))"), byPeer: true)]
        }
        throw ProtocolError(.protocolError, "unexpected \(message.typeName) during \(phaseName)")
    }

    // MARK: steps

    private func makeHello(_ channel: EstablishedChannel) throws(ProtocolError) -> ExchangeMessage.Hello {
        let h = channel.handshakeHash
        var hello = ExchangeMessage.Hello(
            did: me.identity.did, name: me.name, signPubKey: me.keys.ed25519.publicKey.rawRepresentation,
            sasCommit: role == .initiator ? SAS.commitment(handshakeHash: h, nonce: sasNonce) : nil,
            sasNonce: role == .responder ? sasNonce : nil, signature: [],
            invite: invitation.map { .init(id: $0.id, proof: Invitation.proof(secret: $0.secret, handshakeHash: h)) })
        let input = ExchangeMessage.Hello.signingInput(hello.signedObject(role: role, handshakeHash: h))
        do { hello.signature = try me.keys.p256.signature(for: input) } catch {
            throw ProtocolError(.internalError, "signing the hello failed: \(error.message)")
        }
        return hello
    }

    /// Checks the peer's DID proof over this session's h, and what we expected of the peer.
    private func verifyHello(_ hello: ExchangeMessage.Hello, _ channel: EstablishedChannel) throws(ProtocolError) -> PeerIdentity {
        let didKey: DIDKey
        do { didKey = try DIDKey(parsing: hello.did) } catch {
            throw ProtocolError(.badIdentity, "the peer's DID is unusable: \(error.message)")
        }
        guard didKey.keyType == .p256, let ec = didKey.ecPublicKey() else { throw ProtocolError(.badIdentity, "the peer's DID is not a P-256 did:key") }
        let peerRole: NoiseXXHandshake.Role = role == .initiator ? .responder : .initiator
        let input = ExchangeMessage.Hello.signingInput(hello.signedObject(role: peerRole, handshakeHash: channel.handshakeHash))
        guard ec.isValidRawSignature(hello.signature, for: input) else {
            throw ProtocolError(.badIdentity, "the peer's DID signature over this session does not verify")
        }
        let sign: Ed25519.PublicKey
        do { sign = try Ed25519.PublicKey(rawRepresentation: hello.signPubKey) } catch { throw ProtocolError(.badIdentity, "bad signPubKey") }
        let fingerprint = PublicIdentity.fingerprint(didKey: didKey, pubKey: channel.remoteStatic, signPubKey: sign)
        if let want = expected.fingerprint, !fingerprint.hasPrefix(want.lowercased()) {
            throw ProtocolError(.identityMismatch, "the peer advertised fingerprint \(want) but proved \(fingerprint): someone else is answering")
        }
        if let want = expected.did, want != hello.did {
            throw ProtocolError(.identityMismatch, "expected \(want) but the peer proved \(hello.did)")
        }
        if hello.did == me.identity.did {
            throw ProtocolError(.badIdentity, "the peer uses this node's own identity")
        }
        return PeerIdentity(did: hello.did, didKey: didKey, name: hello.name, pubKey: channel.remoteStatic, signPubKey: sign, fingerprint: fingerprint)
    }

    /// `sendCard`, or the abort after what this flight already sent (our decision went with a nonce the
    /// abort must follow).
    private mutating func sendCardOrFail(_ d: Deciding, card: LocalCard, message: String?, now: Int64) -> [Action] {
        do { return try sendCard(d, card: card, message: message, now: now) } catch { return fail(error) }
    }

    /// Both accepted and our card is loaded: make it, send it, wait for theirs.
    private mutating func sendCard(_ d: Deciding, card: LocalCard, message: String?, now: Int64) throws(ProtocolError) -> [Action] {
        var session = d.session
        let peer = session.peer
        let route = RouteRecord(did: me.identity.did, pubKey: me.identity.pubKey, signPubKey: me.identity.signPubKey,
                                fingerprint: me.identity.fingerprint, mailboxToken: mailboxToken, recipient: peer.did, issuedAt: now,
                                expiresAt: now + card.routeValidity, hints: Array(card.routeHints.prefix(RouteRecord.maximumHints)))
        let sealed = SealedRoute.seal(route, signer: me.keys.ed25519, to: peer.pubKey)
        let payload: ProximityPayload
        do {
            payload = try ProximityPayload.make(card: card.card, policy: card.policy, keys: me.keys, receiver: peer.did,
                                                sessionBinding: session.channel.handshakeHash, ephemeralMessage: message, sealedRoute: sealed,
                                                issuerProof: card.issuerProof, now: now)
        } catch {
            throw ProtocolError(.internalError, "building our card failed: \(error.message)")
        }
        var actions = try send(.card(payload: payload.json, message: message), on: &session.channel)
        state = .awaitingCard(CardSent(session: session, card: card, myMessage: message, myPayload: payload, myRoute: route))
        actions.append(.arm(.cards))
        return actions
    }

    private func verifyCard(_ json: JSONValue, message: String?, sent: CardSent, now: Int64) throws(ProtocolError) -> Received {
        let peer = sent.session.peer
        let context = PayloadVerificationContext(expectedSenderDID: peer.did, receiverDID: me.identity.did,
                                                 sessionBinding: sent.session.channel.handshakeHash, peerStaticKey: peer.pubKey,
                                                 ephemeralMessage: message, now: now, maximumSkew: ProtocolLimits.maximumClockSkew,
                                                 requireDisclosureProof: true)
        let verified: ProximityPayload.Verified
        switch ProximityPayload.verify(json: json, context: context) {
        case .success(let v): verified = v
        case .failure(.tooLarge(let why)): throw ProtocolError(.tooLarge, "the peer's card is over a limit: \(why)")
        case .failure(let f): throw ProtocolError(.badCard, "the peer's card failed verification (\(f.code)): \(f)")
        }
        guard verified.signPubKey == peer.signPubKey else {
            throw ProtocolError(.badCard, "the card's signPubKey is not the one the peer proved in its hello")
        }
        let missing = sent.card.requiredFields.subtracting(verified.payload.cardFields.presentFields)
        guard missing.isEmpty else {
            throw ProtocolError(.declined, "the card does not disclose \(missing.map(\.rawValue).sorted().joined(separator: ", ")), which this node requires")
        }
        guard let sealed = verified.payload.sealedRoute else { throw ProtocolError(.badCard, "the peer's card carries no sealed route") }
        switch SealedRoute.open(sealed, with: me.keys.x25519, expectedIssuer: peer.did, expectedRecipient: me.identity.did,
                                expectedSignKey: peer.signPubKey, now: now) {
        case .success(let route):
            guard route.pubKey == peer.pubKey, route.fingerprint == peer.fingerprint else {
                throw ProtocolError(.badCard, "the peer's sealed route names other keys than the session's")
            }
            return Received(verified: verified, json: json, message: message, sealedRoute: sealed, route: route)
        case .failure(.tooLarge(let n)):
            throw ProtocolError(.tooLarge, "the peer's sealed route is \(n) bytes; at most \(SealedRoute.maximumLength)")
        case .failure(let f):
            throw ProtocolError(.badCard, "the peer's sealed route: \(f)")
        }
    }

    private func outcome(_ a: AwaitingDone, now: Int64) -> ExchangeOutcome {
        let s = a.sent.session
        return ExchangeOutcome(
            peer: s.peer, sas: s.sas, handshakeHash: s.channel.handshakeHash, myPayload: a.sent.myPayload, theirPayload: a.received.verified,
            theirPayloadJSON: a.received.json, myMessage: a.sent.myMessage, theirMessage: a.received.message,
            theirSealedRoute: a.received.sealedRoute, theirRoute: a.received.route, myRoute: a.sent.myRoute,
            graphEdgeID: Contact.graphEdgeID(me.identity.did, s.peer.did, sessionBinding: s.channel.handshakeHash), completedAt: now,
            invited: s.invited)
    }

    private func decrypt(_ frame: [UInt8], on channel: inout EstablishedChannel) throws(ProtocolError) -> ExchangeMessage {
        try ExchangeMessage(decoding: try channel.decrypt(frame))
    }

    private func send(_ message: ExchangeMessage, on channel: inout EstablishedChannel) throws(ProtocolError) -> [Action] {
        [.send(try channel.encrypt(message.encoded))]
    }

    /// The encrypted channel, when there is one (to tell the peer why we end).
    private var channel: EstablishedChannel? {
        switch state {
        case .awaitingHello(let c), .awaitingReveal(let c, _, _, _): c
        case .deciding(let d): d.session.channel
        case .awaitingCard(let s): s.session.channel
        case .awaitingDone(let a): a.sent.session.channel
        case .idle, .resumed, .awaitingMessage2, .awaitingMessage3, .completed, .failed: nil
        }
    }

    private mutating func fail(_ error: ProtocolError) -> [Action] {
        guard !isFinished else { return [] }
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
