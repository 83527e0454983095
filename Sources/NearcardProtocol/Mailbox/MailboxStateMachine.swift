import NearcardCrypto
import NearcardModel

/// Delivery of one follow-up message (docs/PROTOCOL.md §15), a pure state machine:
///
///     I -> R   Noise XX message 1 (payload "nearcard-mail/1")
///     R -> I   Noise XX message 2        I checks R's static key is the one pinned in the route
///     I -> R   Noise XX message 3
///     I -> R   deliver {mailboxToken, envelope}
///              R checks the token it issued, that I's static and signing keys are the contact's,
///              and the envelope; stores it (de-duplicated by id), then:
///     R -> I   ack {id, status: "stored" | "duplicate"}
///
/// No consent is asked: the pinned keys and the mailbox token are the authorisation.
public struct MailboxStateMachine: Sendable {
    public enum Action: Sendable {
        case send([UInt8])
        /// Recipient: check and store this delivery, then call `authorized` or `refused`.
        case authorize(Delivery)
        /// Sender: the recipient stored it (or already had it).
        case delivered(id: String, duplicate: Bool)
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

    enum Phase: Sendable {
        case handshaking(NoiseXXHandshake)
        case awaitingDelivery
        case authorizing(id: String)
        case awaitingAck(id: String)
        case done
        case failed
    }

    public let role: NoiseXXHandshake.Role
    private var phase: Phase
    private var transport: NoiseTransport?
    private var remoteStatic: X25519.PublicKey?
    // Sender only.
    private let pinnedRecipient: X25519.PublicKey?
    private let token: [UInt8]
    private let envelope: MessageEnvelope?

    /// The sender.
    public init(sending envelope: MessageEnvelope, token: [UInt8], to pinned: X25519.PublicKey, staticKey: X25519.PrivateKey, ephemeralKey: X25519.PrivateKey) {
        role = .initiator
        phase = .handshaking(NoiseXXHandshake(role: .initiator, prologue: ExchangeStateMachine.prologue, staticKey: staticKey, ephemeralKey: ephemeralKey))
        pinnedRecipient = pinned
        self.token = token
        self.envelope = envelope
    }

    /// The recipient, after `SessionDispatch` read message 1.
    public init(receivingAfter noise: NoiseXXHandshake) {
        role = .responder
        phase = .handshaking(noise)
        pinnedRecipient = nil
        token = []
        envelope = nil
    }

    public var isFinished: Bool {
        switch phase {
        case .done, .failed: true
        case .handshaking, .awaitingDelivery, .authorizing, .awaitingAck: false
        }
    }

    /// Sender: message 1. Recipient: message 2 (message 1 was read by the dispatch).
    public mutating func start() -> [Action] {
        guard case .handshaking(var noise) = phase else { return [] }
        do {
            let m = try noise.writeMessage(payload: role == .initiator ? SessionKind.mail.tag : [])
            phase = .handshaking(noise)
            return [.send(m)]
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
        guard case .authorizing(let id) = phase else { return [] }
        do {
            let actions = try send(["type": "ack", "id": .string(id), "status": .string(duplicate ? "duplicate" : "stored")])
            phase = .done
            return actions
        } catch {
            return fail(error)
        }
    }

    /// Recipient: the delivery was refused.
    public mutating func refused(_ error: ProtocolError) -> [Action] {
        guard case .authorizing = phase else { return [] }
        return fail(error)
    }

    public mutating func abort(_ error: ProtocolError) -> [Action] {
        guard !isFinished else { return [] }
        return fail(error)
    }

    private mutating func handle(_ frame: [UInt8]) throws(ProtocolError) -> [Action] {
        switch phase {
        case .handshaking(var noise):
            _ = try noise.readMessage(frame)
            switch role {
            case .initiator:
                guard let rs = noise.remoteStatic, rs == pinnedRecipient else {
                    phase = .failed
                    return [.failed(ProtocolError(.identityMismatch, "the node that answered is not the contact (its key is not the one pinned when you exchanged cards)"), byPeer: false)]
                }
                let m3 = try noise.writeMessage()
                transport = noise.split()
                remoteStatic = rs
                guard let envelope else { preconditionFailure("sender without an envelope") }
                var actions: [Action] = [.send(m3)]
                actions += try send(["type": "deliver", "mailboxToken": .string(Base64.urlEncode(token)), "envelope": envelope.json])
                phase = .awaitingAck(id: envelope.id)
                return actions
            case .responder:
                transport = noise.split()
                remoteStatic = noise.remoteStatic
                phase = .awaitingDelivery
                return []
            }
        case .done, .failed:
            return []
        case .awaitingDelivery, .authorizing, .awaitingAck:
            guard var t = transport else { preconditionFailure("no transport") }
            let plaintext = try t.decrypt(frame)
            transport = t
            let value: JSONValue
            do { value = try JSONParser(maximumDepth: 8, maximumLength: ProtocolLimits.maximumMessageLength).parse(plaintext) } catch {
                throw ProtocolError(.protocolError, "a message is not JSON: \(error.message)")
            }
            guard let o = value.objectValue, let type = o["type"]?.stringValue else { throw ProtocolError(.protocolError, "a message without a type") }
            if type == "abort" {
                phase = .failed
                let code = ProtocolError.Code(rawValue: o["code"]?.stringValue ?? "") ?? .protocolError
                return [.failed(ProtocolError(code, "the recipient refused: \(o["reason"]?.stringValue?.prefix(200) ?? "")"), byPeer: true)]
            }
            switch (phase, type) {
            case (.awaitingDelivery, "deliver"):
                guard Set(o.keys) == ["type", "mailboxToken", "envelope"], let tokenText = o["mailboxToken"]?.stringValue,
                      let token = try? Base64.urlDecode(tokenText), token.count == RouteRecord.mailboxTokenByteCount, let e = o["envelope"] else {
                    throw ProtocolError(.protocolError, "deliver: needs mailboxToken (32 bytes) and envelope")
                }
                let envelope: MessageEnvelope
                do { envelope = try MessageEnvelope(json: e) } catch {
                    throw ProtocolError(error.kind == .limitExceeded ? .tooLarge : .protocolError, "deliver: \(error.message)")
                }
                guard let remoteStatic else { preconditionFailure("no remote static") }
                phase = .authorizing(id: envelope.id)
                return [.authorize(Delivery(mailboxToken: token, envelope: envelope, senderStatic: remoteStatic))]
            case (.awaitingAck(let id), "ack"):
                guard o["id"]?.stringValue == id, let status = o["status"]?.stringValue, status == "stored" || status == "duplicate" else {
                    throw ProtocolError(.protocolError, "ack: not for this message")
                }
                phase = .done
                return [.delivered(id: id, duplicate: status == "duplicate")]
            default:
                throw ProtocolError(.protocolError, "unexpected \(type.prefix(32)) in a mail session")
            }
        }
    }

    private mutating func send(_ message: JSONValue) throws(ProtocolError) -> [Action] {
        guard var t = transport else { preconditionFailure("sending before the handshake") }
        let c = try t.encrypt(JCS.canonicalize(message))
        transport = t
        return [.send(c)]
    }

    private mutating func fail(_ error: ProtocolError) -> [Action] {
        guard !isFinished else { return [] }
        var actions: [Action] = []
        if transport != nil, let sent = try? send(["type": "abort", "code": .string(error.code.rawValue), "reason": .string(error.message)]) {
            actions += sent
        }
        phase = .failed
        actions.append(.failed(error, byPeer: false))
        return actions
    }
}
