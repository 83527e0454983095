import NearcardCrypto
import NearcardModel

/// What this side brings to an exchange.
public struct LocalParty: Sendable {
    public var keys: IdentityKeys
    public var name: String?
    public var card: Card
    public var policy: SharingPolicy
    /// Addresses to put in the sealed route we hand over.
    public var routeHints: [RouteRecord.Hint]
    public var routeValidity: Int64
    /// A group-membership proof (Semaphore JSON, bound to our DID) the card carries, if any.
    public var issuerProof: String?
    /// Fields the peer's card must disclose (a bot policy); a card without them ends the session with
    /// `declined` instead of `done`, so neither side stores the exchange.
    public var requiredFields: Set<CardField>

    public init(keys: IdentityKeys, name: String?, card: Card, policy: SharingPolicy, routeHints: [RouteRecord.Hint] = [],
                routeValidity: Int64 = RouteRecord.defaultValidity, issuerProof: String? = nil, requiredFields: Set<CardField> = []) {
        self.keys = keys
        self.name = name
        self.card = card
        self.policy = policy
        self.routeHints = routeHints
        self.routeValidity = routeValidity
        self.issuerProof = issuerProof
        self.requiredFields = requiredFields
    }

    public var identity: PublicIdentity { keys.publicIdentity(name: name) }
}

/// Who the initiator expects to reach (from discovery or the command line); checked against what
/// the peer proves.
public struct ExpectedPeer: Sendable, Equatable {
    public var fingerprint: String?
    public var did: String?
    public init(fingerprint: String? = nil, did: String? = nil) {
        self.fingerprint = fingerprint
        self.did = did
    }
}

/// The peer as proven in the session: its DID signed this session's handshake hash.
public struct PeerIdentity: Sendable, Equatable {
    public let did: String
    public let didKey: DIDKey
    public let name: String?
    /// Its Noise static key (= its X25519 `pubKey`).
    public let pubKey: X25519.PublicKey
    public let signPubKey: Ed25519.PublicKey
    public let fingerprint: String
    /// The short authentication string both screens show ("123 456").
    public let sas: String

    public init(did: String, didKey: DIDKey, name: String?, pubKey: X25519.PublicKey, signPubKey: Ed25519.PublicKey, fingerprint: String, sas: String) {
        self.did = did
        self.didKey = didKey
        self.name = name
        self.pubKey = pubKey
        self.signPubKey = signPubKey
        self.fingerprint = fingerprint
        self.sas = sas
    }
}

/// Everything a completed exchange produced.
public struct ExchangeOutcome: Sendable {
    public let peer: PeerIdentity
    public let handshakeHash: [UInt8]
    public let myPayload: ProximityPayload
    public let theirPayload: ProximityPayload.Verified
    public let theirPayloadJSON: JSONValue
    public let myMessage: String?
    public let theirMessage: String?
    /// The route the peer gave us (sealed form as received, and opened).
    public let theirSealedRoute: String
    public let theirRoute: RouteRecord
    /// The route we gave the peer (its mailbox token is how we will recognise them).
    public let myRoute: RouteRecord
    public let graphEdgeID: String
    public let completedAt: Int64
}

/// One exchange, from the first handshake byte to both contacts: a pure state machine.
/// The driver feeds it received Noise messages (`receive`), the local decision (`decide`) and
/// timeouts (`abort`), and performs the actions it returns. It never touches a socket or a clock.
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
public struct ExchangeStateMachine: Sendable {
    /// The handshake's first payload: the protocol and its version, in the clear.
    public static let versionTag = Array("nearcard/1".utf8)
    /// The Noise prologue, which both sides hash first.
    public static let prologue = Array("nearcard-exchange".utf8)
    /// How far a payload's timestamp may be from our clock.
    public static let maximumClockSkew: Int64 = 300

    public enum Action: Sendable {
        /// Send these bytes as one frame.
        case send([UInt8])
        /// The peer is authenticated and the SAS is known: show it and ask for a decision.
        case identified(PeerIdentity)
        /// The peer decided (informational; `accept: false` is followed by `failed`).
        case peerDecided(accept: Bool)
        /// Both cards verified and both `done`: store the contact.
        case completed(ExchangeOutcome)
        /// The exchange is over without a contact. `byPeer`: the peer aborted or declined.
        case failed(ProtocolError, byPeer: Bool)
    }

    /// Where the exchange is. Each case is named for what has happened.
    enum Phase: Sendable {
        case handshaking(NoiseXXHandshake)
        case awaitingPeerHello
        case awaitingReveal(commitment: [UInt8])
        case deciding(mine: Decision?, theirs: Bool)
        case exchangingCards(received: Received?, sentDone: Bool, receivedDone: Bool)
        case completed
        case failed
    }

    struct Decision: Sendable {
        var accept: Bool
        var message: String?
    }

    struct Received: Sendable {
        var verified: ProximityPayload.Verified
        var json: JSONValue
        var message: String?
        var sealedRoute: String
        var route: RouteRecord
    }

    public let role: NoiseXXHandshake.Role
    private var local: LocalParty
    /// `local.identity`, derived once.
    private let me: PublicIdentity
    private let expected: ExpectedPeer
    private let sasNonce: [UInt8]
    private let mailboxToken: [UInt8]
    private var phase: Phase
    private var transport: NoiseTransport?
    private var handshakeHash: [UInt8] = []
    /// The peer as its hello proved it (verified once, on arrival); the SAS is added at the reveal.
    private var provenPeer: PeerIdentity?
    private var peer: PeerIdentity?
    private var myDecision: Decision?
    private var myPayload: ProximityPayload?
    private var myRoute: RouteRecord?
    private var remoteStaticKey: X25519.PublicKey?

    /// - Parameters:
    ///   - ephemeralKey: this session's Noise ephemeral key (fresh per session).
    ///   - sasNonce: 32 fresh random bytes.
    ///   - mailboxToken: 32 fresh random bytes for the sealed route we hand over.
    public init(role: NoiseXXHandshake.Role, local: LocalParty, expected: ExpectedPeer = ExpectedPeer(),
                ephemeralKey: X25519.PrivateKey, sasNonce: [UInt8], mailboxToken: [UInt8]) {
        precondition(sasNonce.count == SAS.nonceByteCount && mailboxToken.count == RouteRecord.mailboxTokenByteCount)
        self.role = role
        self.local = local
        self.me = local.identity
        self.expected = expected
        self.sasNonce = sasNonce
        self.mailboxToken = mailboxToken
        self.phase = .handshaking(NoiseXXHandshake(role: role, prologue: Self.prologue, staticKey: local.keys.x25519, ephemeralKey: ephemeralKey))
    }

    /// A responder whose message 1 was already read by `SessionDispatch`.
    public init(resuming noise: NoiseXXHandshake, local: LocalParty, sasNonce: [UInt8], mailboxToken: [UInt8]) {
        precondition(noise.role == .responder && noise.isResponderReadyToAnswer, "resume only after message 1")
        self.role = .responder
        self.local = local
        self.me = local.identity
        self.expected = ExpectedPeer()
        self.sasNonce = sasNonce
        self.mailboxToken = mailboxToken
        self.phase = .handshaking(noise)
    }

    /// Replaces what this side's card will carry (card, sharing policy, group proof, route hints, required
    /// fields) with `fresh`, e.g. the store read again while waiting for the peer. Only until the card is
    /// made and only for the same identity and name (the hello may have gone already); returns whether
    /// it took `fresh`.
    public mutating func refreshLocal(_ fresh: LocalParty) -> Bool {
        guard myPayload == nil, !isFinished, fresh.identity == me else { return false }
        local = fresh
        return true
    }

    /// True once the exchange has completed or failed.
    public var isFinished: Bool {
        switch phase {
        case .completed, .failed: true
        case .handshaking, .awaitingPeerHello, .awaitingReveal, .deciding, .exchangingCards: false
        }
    }

    /// True while we wait for our own person's (or policy's) decision.
    public var awaitsLocalDecision: Bool {
        if case .deciding(let mine, _) = phase { return mine == nil }
        return false
    }

    /// A short name of the current phase, for logs and timeouts.
    public var phaseName: String {
        switch phase {
        case .handshaking: "handshake"
        case .awaitingPeerHello: "hello"
        case .awaitingReveal: "sas-reveal"
        case .deciding: "consent"
        case .exchangingCards: "cards"
        case .completed: "completed"
        case .failed: "failed"
        }
    }

    public var identifiedPeer: PeerIdentity? { peer }

    // MARK: events

    /// The initiator's first message; a resumed responder's message 2; otherwise nothing.
    public mutating func start() -> [Action] {
        guard case .handshaking(var noise) = phase else { return [] }
        guard role == .initiator || noise.isResponderReadyToAnswer else { return [] }
        do {
            let m = try noise.writeMessage(payload: role == .initiator ? Self.versionTag : [])
            phase = .handshaking(noise)
            return [.send(m)]
        } catch {
            return fail(error)
        }
    }

    /// One received frame (a Noise message).
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
        guard case .deciding(let mine, let theirs) = phase, mine == nil else { return [] }
        do throws(ProtocolError) {
            if let message, let problem = ProximityPayload.messageProblem(message) {
                throw ProtocolError(.protocolError, problem)
            }
            guard accept else {
                let why = String((reason ?? "declined").prefix(200))
                var actions = try send(.decision(accept: false, reason: why))
                phase = .failed
                actions.append(.failed(ProtocolError(.declined, "declined here (\(why))"), byPeer: false))
                return actions
            }
            let decision = Decision(accept: true, message: message?.isEmpty == true ? nil : message)
            myDecision = decision
            var actions = try send(.decision(accept: true, reason: nil))
            if theirs {
                actions += try sendCard(now: now)
            } else {
                phase = .deciding(mine: decision, theirs: false)
            }
            return actions
        } catch {
            return fail(error)
        }
    }

    /// Ends the exchange from our side (a timeout, a local error); tells the peer why.
    public mutating func abort(_ error: ProtocolError) -> [Action] {
        guard !isFinished else { return [] }
        return fail(error)
    }

    // MARK: handling

    private mutating func handle(_ frame: [UInt8], now: Int64) throws(ProtocolError) -> [Action] {
        switch phase {
        case .handshaking(var noise):
            let payload = try noise.readMessage(frame)
            var actions: [Action] = []
            switch role {
            case .responder:
                if !noise.isComplete {
                    // Message 1: its payload names the protocol.
                    guard payload == Self.versionTag else {
                        throw ProtocolError(.unsupportedVersion, "the peer does not speak nearcard/1 (it sent \(String(decoding: payload.prefix(32), as: UTF8.self).debugDescription))")
                    }
                    actions.append(.send(try noise.writeMessage()))
                    phase = .handshaking(noise)
                    return actions
                }
                established(noise)
                phase = .awaitingPeerHello
                return []
            case .initiator:
                actions.append(.send(try noise.writeMessage()))
                established(noise)
                actions += try send(.hello(try makeHello()))
                phase = .awaitingPeerHello
                return actions
            }
        case .completed, .failed:
            return []
        case .awaitingPeerHello, .awaitingReveal, .deciding, .exchangingCards:
            guard var t = transport else { preconditionFailure("no transport after the handshake") }
            let plaintext = try t.decrypt(frame)
            transport = t
            let message = try ExchangeMessage(decoding: plaintext)
            if case .abort(let code, let reason) = message {
                phase = .failed
                let c = ProtocolError.Code(rawValue: code) ?? .protocolError
                return [.failed(ProtocolError(c, "the peer ended the exchange: \(reason.prefix(200))"), byPeer: true)]
            }
            return try handle(message, now: now)
        }
    }

    private mutating func handle(_ message: ExchangeMessage, now: Int64) throws(ProtocolError) -> [Action] {
        switch (phase, message) {
        case (.awaitingPeerHello, .hello(let hello)):
            // Verified now, so a bad identity ends the session before we reveal anything more.
            let identity = try verifyHello(hello)
            provenPeer = identity
            switch role {
            case .responder:
                guard let commitment = hello.sasCommit else { throw ProtocolError(.protocolError, "the initiator's hello has no SAS commitment") }
                let actions = try send(.hello(try makeHello()))
                phase = .awaitingReveal(commitment: commitment)
                return actions
            case .initiator:
                guard let theirNonce = hello.sasNonce else { throw ProtocolError(.protocolError, "the responder's hello has no SAS nonce") }
                var actions = try send(.sasReveal(nonce: sasNonce))
                let sas = SAS.display(SAS.value(handshakeHash: handshakeHash, initiatorNonce: sasNonce, responderNonce: theirNonce))
                let p = identity.with(sas: sas)
                peer = p
                phase = .deciding(mine: nil, theirs: false)
                actions.append(.identified(p))
                return actions
            }
        case (.awaitingReveal(let commitment), .sasReveal(let nonce)):
            guard Sodium.constantTimeEquals(SAS.commitment(handshakeHash: handshakeHash, nonce: nonce), commitment) else {
                throw ProtocolError(.badCommitment, "the initiator's SAS nonce does not match its commitment")
            }
            guard let identity = provenPeer else { preconditionFailure("reveal without hello") }
            let sas = SAS.display(SAS.value(handshakeHash: handshakeHash, initiatorNonce: nonce, responderNonce: sasNonce))
            let p = identity.with(sas: sas)
            peer = p
            phase = .deciding(mine: nil, theirs: false)
            return [.identified(p)]
        case (.deciding(let mine, false), .decision(let accept, let reason)):
            guard accept else {
                phase = .failed
                return [.peerDecided(accept: false),
                        .failed(ProtocolError(.declined, "the peer declined" + (reason.map { " (\($0.prefix(100)))" } ?? "")), byPeer: true)]
            }
            var actions: [Action] = [.peerDecided(accept: true)]
            if mine != nil {
                actions += try sendCard(now: now)
            } else {
                phase = .deciding(mine: nil, theirs: true)
            }
            return actions
        case (.exchangingCards(nil, false, false), .card(let payload, let message)):
            let received = try verifyCard(payload, message: message, now: now)
            let actions = try send(.done)
            phase = .exchangingCards(received: received, sentDone: true, receivedDone: false)
            return actions
        case (.exchangingCards(.some(let received), true, false), .done):
            phase = .completed
            return [.completed(outcome(received, now: now))]
        case (.exchangingCards(nil, _, _), .done):
            throw ProtocolError(.protocolError, "the peer said done before sending its card")
        default:
            throw ProtocolError(.protocolError, "unexpected \(message.typeName) during \(phaseName)")
        }
    }

    // MARK: steps

    private mutating func established(_ noise: NoiseXXHandshake) {
        transport = noise.split()
        handshakeHash = noise.handshakeHash
        remoteStaticKey = noise.remoteStatic
    }

    private func makeHello() throws(ProtocolError) -> ExchangeMessage.Hello {
        var hello = ExchangeMessage.Hello(
            did: me.did, name: local.name, signPubKey: local.keys.ed25519.publicKey.rawRepresentation,
            sasCommit: role == .initiator ? SAS.commitment(handshakeHash: handshakeHash, nonce: sasNonce) : nil,
            sasNonce: role == .responder ? sasNonce : nil, signature: [])
        let input = ExchangeMessage.Hello.signingInput(hello.signedObject(role: role, handshakeHash: handshakeHash))
        do { hello.signature = try local.keys.p256.signature(for: input) } catch {
            throw ProtocolError(.internalError, "signing the hello failed: \(error.message)")
        }
        return hello
    }

    /// Checks the peer's DID proof over this session's h, and what we expected of the peer.
    private func verifyHello(_ hello: ExchangeMessage.Hello) throws(ProtocolError) -> PeerIdentity {
        let didKey: DIDKey
        do { didKey = try DIDKey(parsing: hello.did) } catch {
            throw ProtocolError(.badIdentity, "the peer's DID is unusable: \(error.message)")
        }
        guard didKey.keyType == .p256, let ec = didKey.ecPublicKey() else { throw ProtocolError(.badIdentity, "the peer's DID is not a P-256 did:key") }
        let peerRole: NoiseXXHandshake.Role = role == .initiator ? .responder : .initiator
        let input = ExchangeMessage.Hello.signingInput(hello.signedObject(role: peerRole, handshakeHash: handshakeHash))
        guard ec.isValidRawSignature(hello.signature, for: input) else {
            throw ProtocolError(.badIdentity, "the peer's DID signature over this session does not verify")
        }
        guard let remoteStatic = remoteStaticKey else { preconditionFailure("no remote static after the handshake") }
        let sign: Ed25519.PublicKey
        do { sign = try Ed25519.PublicKey(rawRepresentation: hello.signPubKey) } catch { throw ProtocolError(.badIdentity, "bad signPubKey") }
        let fingerprint = PublicIdentity.fingerprint(didKey: didKey, pubKey: remoteStatic, signPubKey: sign)
        if let want = expected.fingerprint, !fingerprint.hasPrefix(want.lowercased()) {
            throw ProtocolError(.identityMismatch, "the peer advertised fingerprint \(want) but proved \(fingerprint): someone else is answering")
        }
        if let want = expected.did, want != hello.did {
            throw ProtocolError(.identityMismatch, "expected \(want) but the peer proved \(hello.did)")
        }
        if hello.did == me.did {
            throw ProtocolError(.badIdentity, "the peer uses this node's own identity")
        }
        return PeerIdentity(did: hello.did, didKey: didKey, name: hello.name, pubKey: remoteStatic, signPubKey: sign,
                            fingerprint: fingerprint, sas: "")
    }

    private mutating func sendCard(now: Int64) throws(ProtocolError) -> [Action] {
        guard let peer, let decision = myDecision else { preconditionFailure("card before identification and decision") }
        let route = RouteRecord(did: me.did, pubKey: me.pubKey, signPubKey: me.signPubKey, fingerprint: me.fingerprint,
                                mailboxToken: mailboxToken, recipient: peer.did, issuedAt: now, expiresAt: now + local.routeValidity,
                                hints: Array(local.routeHints.prefix(RouteRecord.maximumHints)))
        let sealed = SealedRoute.seal(route, signer: local.keys.ed25519, to: peer.pubKey)
        let payload: ProximityPayload
        do {
            payload = try ProximityPayload.make(card: local.card, policy: local.policy, keys: local.keys, receiver: peer.did,
                                                sessionBinding: handshakeHash, ephemeralMessage: decision.message, sealedRoute: sealed,
                                                issuerProof: local.issuerProof, now: now)
        } catch {
            throw ProtocolError(.internalError, "building our card failed: \(error.message)")
        }
        myPayload = payload
        myRoute = route
        let actions = try send(.card(payload: payload.json, message: decision.message))
        phase = .exchangingCards(received: nil, sentDone: false, receivedDone: false)
        return actions
    }

    private func verifyCard(_ json: JSONValue, message: String?, now: Int64) throws(ProtocolError) -> Received {
        guard let peer else { preconditionFailure("card before identification") }
        if let message, let problem = ProximityPayload.messageProblem(message) {
            throw ProtocolError(.badCard, "the peer's message: \(problem)")
        }
        let context = PayloadVerificationContext(expectedSenderDID: peer.did, receiverDID: me.did, sessionBinding: handshakeHash,
                                                 peerStaticKey: peer.pubKey, ephemeralMessage: message, now: now,
                                                 maximumSkew: Self.maximumClockSkew, requireDisclosureProof: true)
        let verified: ProximityPayload.Verified
        switch ProximityPayload.verify(json: json, context: context) {
        case .success(let v): verified = v
        case .failure(let f): throw ProtocolError(.badCard, "the peer's card failed verification (\(f.code)): \(f)")
        }
        guard verified.signPubKey == peer.signPubKey else {
            throw ProtocolError(.badCard, "the card's signPubKey is not the one the peer proved in its hello")
        }
        let missing = local.requiredFields.subtracting(verified.payload.cardFields.presentFields)
        guard missing.isEmpty else {
            throw ProtocolError(.declined, "the card does not disclose \(missing.map(\.rawValue).sorted().joined(separator: ", ")), which this node requires")
        }
        guard let sealed = verified.payload.sealedRoute else { throw ProtocolError(.badCard, "the peer's card carries no sealed route") }
        switch SealedRoute.open(sealed, with: local.keys.x25519, expectedIssuer: peer.did, expectedRecipient: me.did,
                                expectedSignKey: peer.signPubKey, now: now) {
        case .success(let route):
            guard route.pubKey == peer.pubKey, route.fingerprint == peer.fingerprint else {
                throw ProtocolError(.badCard, "the peer's sealed route names other keys than the session's")
            }
            return Received(verified: verified, json: json, message: message, sealedRoute: sealed, route: route)
        case .failure(let f):
            throw ProtocolError(.badCard, "the peer's sealed route: \(f)")
        }
    }

    private func outcome(_ received: Received, now: Int64) -> ExchangeOutcome {
        guard let peer, let myPayload, let myRoute else { preconditionFailure("outcome before both cards") }
        return ExchangeOutcome(
            peer: peer, handshakeHash: handshakeHash, myPayload: myPayload, theirPayload: received.verified, theirPayloadJSON: received.json,
            myMessage: myDecision?.message, theirMessage: received.message, theirSealedRoute: received.sealedRoute, theirRoute: received.route,
            myRoute: myRoute, graphEdgeID: Contact.graphEdgeID(me.did, peer.did, sessionBinding: handshakeHash), completedAt: now)
    }

    private mutating func send(_ message: ExchangeMessage) throws(ProtocolError) -> [Action] {
        guard var t = transport else { preconditionFailure("sending \(message.typeName) before the handshake completed") }
        let c = try t.encrypt(message.encoded)
        transport = t
        return [.send(c)]
    }

    private mutating func fail(_ error: ProtocolError) -> [Action] {
        guard !isFinished else { return [] }
        var actions: [Action] = []
        // Tell the peer why, when there is a channel to tell it on.
        if transport != nil, let sent = try? send(.abort(code: error.code.rawValue, reason: error.message)) {
            actions += sent
        }
        phase = .failed
        actions.append(.failed(error, byPeer: false))
        return actions
    }
}

extension PeerIdentity {
    func with(sas: String) -> PeerIdentity {
        PeerIdentity(did: did, didKey: didKey, name: name, pubKey: pubKey, signPubKey: signPubKey, fingerprint: fingerprint, sas: sas)
    }
}
