public import NearcardCrypto
public import NearcardModel

/// Delivery of one follow-up message (docs/PROTOCOL.md §15), or one confirmation query (§11), a pure
/// state machine:
///
///     I -> R   Noise IK message 1 (payload "nearcard-mail/2"), made for the key pinned in the route
///     R -> I   Noise IK message 2        it decrypts only if R holds that key
///     I -> R   deliver {mailboxToken, envelope}
///              R checks the token it issued, that I's static and signing keys are the contact's,
///              and the envelope; stores it (de-duplicated by id), then:
///     R -> I   ack {id, status: "stored" | "duplicate"}
///
/// or, for an exchange the sender stored unconfirmed (the sender was its initiator):
///
///     I -> R   query {edge}              "do you hold the exchange with this graph-edge id?"
///     R -> I   answer {edge, held}       R remembers an exchange it does not hold as withdrawn
///
/// No consent is asked: the pinned keys and the mailbox token are the authorisation.
public struct MailboxStateMachine: Sendable {
    public enum Action: Sendable {
        case send([UInt8])
        /// Run this timer from now; report it with `timerFired` if it runs out.
        case arm(SessionTimer)
        /// Recipient: check and store this delivery, then call `authorized` or `refused`.
        case authorize(Delivery)
        /// Sender: the recipient stored it (or already had it).
        case delivered(id: String, duplicate: Bool)
        /// Recipient: answer this confirmation query (the store decides), then call `answered`.
        case answerQuery(edge: String, senderStatic: X25519.PublicKey)
        /// Sender: the recipient's answer to our query.
        case answered(edge: String, held: Bool)
        case failed(ProtocolError, byPeer: Bool)
    }

    /// What the recipient must check before accepting.
    public struct Delivery: Sendable {
        public let mailboxToken: [UInt8]
        public let envelope: MessageEnvelope
        /// The sender's Noise static key, proven in the handshake.
        public let senderStatic: X25519.PublicKey

        public init(mailboxToken: [UInt8], envelope: MessageEnvelope, senderStatic: X25519.PublicKey) {
            self.mailboxToken = mailboxToken
            self.envelope = envelope
            self.senderStatic = senderStatic
        }
    }

    /// What the sender brings: the message and the token the recipient issued, or the query; and the
    /// key pinned for the recipient.
    struct Sending: Sendable {
        enum Request: Sendable {
            case deliver(MessageEnvelope, token: [UInt8])
            case query(edge: String)
        }
        let request: Request
        let pinnedRecipient: X25519.PublicKey
    }

    /// A graph-edge id as a query names it: 32 lower-case hex digits.
    public static func isEdgeID(_ s: String) -> Bool {
        s.utf8.count == 32 && s.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    /// Where the delivery is; each case is named for what this side waits for and carries what that needs.
    enum State: Sendable {
        /// Sender, before `start`.
        case idle(NoiseIKHandshake, Sending)
        /// Recipient: message 1 read by the dispatch.
        case resumed(NoiseIKHandshake)
        case awaitingMessage2(NoiseIKHandshake, Sending)
        case awaitingDelivery(EstablishedChannel)
        /// Recipient: the node checks and stores the delivery.
        case authorizing(EstablishedChannel, id: String)
        /// Recipient: the node looks the queried exchange up.
        case answering(EstablishedChannel, edge: String)
        case awaitingAck(EstablishedChannel, id: String)
        /// Sender: the answer to our query.
        case awaitingAnswer(EstablishedChannel, edge: String)
        case done
        case failed
    }

    public let role: NoiseXXHandshake.Role
    private var state: State

    /// The sender.
    public init(sending envelope: MessageEnvelope, token: [UInt8], to pinned: X25519.PublicKey, staticKey: X25519.PrivateKey, ephemeralKey: X25519.PrivateKey) {
        role = .initiator
        state = .idle(
            NoiseIKHandshake(initiatorTo: pinned, prologue: SessionKind.prologue, staticKey: staticKey, ephemeralKey: ephemeralKey),
            Sending(request: .deliver(envelope, token: token), pinnedRecipient: pinned))
    }

    /// The sender of a confirmation query about exchange `edge` (§11).
    public init(asking edge: String, to pinned: X25519.PublicKey, staticKey: X25519.PrivateKey, ephemeralKey: X25519.PrivateKey) {
        precondition(Self.isEdgeID(edge))
        role = .initiator
        state = .idle(
            NoiseIKHandshake(initiatorTo: pinned, prologue: SessionKind.prologue, staticKey: staticKey, ephemeralKey: ephemeralKey),
            Sending(request: .query(edge: edge), pinnedRecipient: pinned))
    }

    /// The recipient, after `SessionDispatch` read message 1.
    public init(receivingAfter noise: NoiseIKHandshake) {
        role = .responder
        state = .resumed(noise)
    }

    public var isFinished: Bool {
        switch state {
        case .done, .failed: true
        case .idle, .resumed, .awaitingMessage2, .awaitingDelivery, .authorizing, .answering, .awaitingAck, .awaitingAnswer: false
        }
    }

    /// Sender: message 1. Recipient: message 2 (message 1 was read by the dispatch). Then the session's timer.
    public mutating func start() -> [Action] {
        do throws(ProtocolError) {
            switch state {
            case .idle(var noise, let sending):
                let m1 = try noise.writeMessage(payload: SessionKind.mail.tag)
                state = .awaitingMessage2(noise, sending)
                return [.send(m1), .arm(.mail)]
            case .resumed(var noise):
                let m2 = try noise.writeMessage()
                state = .awaitingDelivery(try EstablishedChannel(completed: noise))
                return [.send(m2), .arm(.mail)]
            default:
                return []
            }
        } catch {
            return fail(error)
        }
    }

    public mutating func receive(_ frame: [UInt8]) -> [Action] {
        do {
            return try handle(frame)
        } catch {
            return fail(error)
        }
    }

    /// Recipient: the delivery was checked and stored (or was a duplicate).
    public mutating func authorized(duplicate: Bool) -> [Action] {
        guard case .authorizing(var channel, let id) = state else { return [] }
        do {
            let actions = try send(["type": "ack", "id": .string(id), "status": .string(duplicate ? "duplicate" : "stored")], on: &channel)
            state = .done
            return actions
        } catch {
            return fail(error)
        }
    }

    /// Recipient: the store's answer to the query (an exchange not held is now remembered as withdrawn).
    public mutating func answered(held: Bool) -> [Action] {
        guard case .answering(var channel, let edge) = state else { return [] }
        do {
            let actions = try send(["type": "answer", "edge": .string(edge), "held": .bool(held)], on: &channel)
            state = .done
            return actions
        } catch {
            return fail(error)
        }
    }

    /// Recipient: the delivery was refused.
    public mutating func refused(_ error: ProtocolError) -> [Action] {
        guard case .authorizing = state else { return [] }
        return fail(error)
    }

    /// The timer armed at the start ran out after `seconds`.
    public mutating func timerFired(_ timer: SessionTimer, after seconds: Int) -> [Action] {
        guard timer == .mail else { return [] }
        return fail(ProtocolError(.timeout, Phrase("no progress within %1$@ s", String(seconds))))
    }

    public mutating func abort(_ error: ProtocolError) -> [Action] {
        fail(error)
    }

    private mutating func handle(_ frame: [UInt8]) throws(ProtocolError) -> [Action] {
        switch state {
        case .idle, .resumed:
            throw ProtocolError(.protocolError, Phrase("the peer sent a frame before this side began"))
        case .awaitingMessage2(var noise, let sending):
            // Message 2 decrypts only for the holder of the pinned key: anything else is another node.
            let payload: [UInt8]
            do { payload = try noise.readMessage(frame) } catch {
                state = .failed
                return [
                    .failed(
                        ProtocolError(
                            .identityMismatch,
                            Phrase("the node that answered is not the contact (it does not hold the key pinned when you exchanged cards)")),
                        byPeer: false)
                ]
            }
            guard payload.isEmpty else {
                throw ProtocolError(.protocolError, Phrase("Noise message %1$@ carries a %2$@-byte payload; it must be empty", "2", String(payload.count)))
            }
            var channel = try EstablishedChannel(completed: noise)
            var actions: [Action] = []
            switch sending.request {
            case .deliver(let envelope, let token):
                actions += try send(["type": "deliver", "mailboxToken": .string(Base64.urlEncode(token)), "envelope": envelope.json], on: &channel)
                state = .awaitingAck(channel, id: envelope.id)
            case .query(let edge):
                actions += try send(["type": "query", "edge": .string(edge)], on: &channel)
                state = .awaitingAnswer(channel, edge: edge)
            }
            return actions
        case .awaitingDelivery(var channel):
            let (type, o) = try decrypt(frame, on: &channel)
            state = .awaitingDelivery(channel)
            if type == "query" {
                guard Set(o.keys) == ["type", "edge"], let edge = o["edge"]?.stringValue, Self.isEdgeID(edge) else {
                    throw ProtocolError(.protocolError, Phrase("query: needs edge (32 lower-case hex digits)"))
                }
                state = .answering(channel, edge: edge)
                return [.answerQuery(edge: edge, senderStatic: channel.remoteStatic)]
            }
            guard type == "deliver" else { return try unexpected(type, o) }
            guard Set(o.keys) == ["type", "mailboxToken", "envelope"], let tokenText = o["mailboxToken"]?.stringValue,
                let token = try? Base64.urlDecode(tokenText), token.count == RouteRecord.mailboxTokenByteCount, let e = o["envelope"]
            else {
                throw ProtocolError(.protocolError, Phrase("deliver: needs mailboxToken (32 bytes) and envelope"))
            }
            let envelope: MessageEnvelope
            do { envelope = try MessageEnvelope(json: e) } catch {
                throw ProtocolError(error.kind == .limitExceeded ? .tooLarge : .protocolError, Phrase("%1$@: %2$@", "deliver", error.phrase))
            }
            state = .authorizing(channel, id: envelope.id)
            return [.authorize(Delivery(mailboxToken: token, envelope: envelope, senderStatic: channel.remoteStatic))]
        case .authorizing(var channel, let id):
            // Nothing is due from the sender while the node checks; anything but an abort is out of turn.
            let (type, o) = try decrypt(frame, on: &channel)
            state = .authorizing(channel, id: id)
            return try unexpected(type, o)
        case .answering(var channel, let edge):
            let (type, o) = try decrypt(frame, on: &channel)
            state = .answering(channel, edge: edge)
            return try unexpected(type, o)
        case .awaitingAnswer(var channel, let edge):
            let (type, o) = try decrypt(frame, on: &channel)
            state = .awaitingAnswer(channel, edge: edge)
            guard type == "answer" else { return try unexpected(type, o) }
            guard Set(o.keys) == ["type", "edge", "held"], o["edge"]?.stringValue == edge, let held = o["held"]?.boolValue else {
                throw ProtocolError(.protocolError, Phrase("answer: not for this query (needs edge and held)"))
            }
            state = .done
            return [.answered(edge: edge, held: held)]
        case .awaitingAck(var channel, let id):
            let (type, o) = try decrypt(frame, on: &channel)
            state = .awaitingAck(channel, id: id)
            guard type == "ack" else { return try unexpected(type, o) }
            guard o["id"]?.stringValue == id, let status = o["status"]?.stringValue, status == "stored" || status == "duplicate" else {
                throw ProtocolError(.protocolError, Phrase("ack: not for this message"))
            }
            state = .done
            return [.delivered(id: id, duplicate: status == "duplicate")]
        case .done, .failed:
            return []
        }
    }

    /// A message with no place in this state: the peer's abort ends the session as the peer's doing.
    private mutating func unexpected(_ type: String, _ o: JSONObject) throws(ProtocolError) -> [Action] {
        if type == "abort" {
            state = .failed
            let code = ProtocolErrorCode(rawValue: o["code"]?.stringValue ?? "") ?? .protocolError
            return [.failed(ProtocolError(code, Phrase("the recipient refused: %1$@", o["reason"]?.stringValue?.prefix(200) ?? "")), byPeer: true)]
        }
        throw ProtocolError(.protocolError, Phrase("unexpected %1$@ in a mail session", type.prefix(32)))
    }

    private func decrypt(_ frame: [UInt8], on channel: inout EstablishedChannel) throws(ProtocolError) -> (String, JSONObject) {
        let plaintext = try channel.decrypt(frame)
        let value = try ExchangeMessage.parseCanonical(plaintext)
        guard let o = value.objectValue, let type = o["type"]?.stringValue else { throw ProtocolError(.protocolError, Phrase("a message without a type")) }
        return (type, o)
    }

    private func send(_ message: JSONValue, on channel: inout EstablishedChannel) throws(ProtocolError) -> [Action] {
        [.send(try channel.encrypt(JCS.canonicalize(message)))]
    }

    /// The encrypted channel, when there is one (to tell the peer why we end).
    private var channel: EstablishedChannel? {
        switch state {
        case .awaitingDelivery(let c), .authorizing(let c, _), .answering(let c, _), .awaitingAck(let c, _), .awaitingAnswer(let c, _): c
        case .idle, .resumed, .awaitingMessage2, .done, .failed: nil
        }
    }

    private mutating func fail(_ error: ProtocolError) -> [Action] {
        guard !isFinished else { return [] }
        var actions: [Action] = []
        if var c = channel, let sent = try? send(["type": "abort", "code": .string(error.code.rawValue), "reason": .string(error.message)], on: &c) {
            actions += sent
        }
        state = .failed
        actions.append(.failed(error, byPeer: false))
        return actions
    }
}
