import NearcardCrypto
import NearcardModel

/// The application messages of an exchange, each one Noise transport message whose plaintext is the
/// RFC 8785 JSON of an object with a `type` (docs/PROTOCOL.md "Messages").
public enum ExchangeMessage: Sendable, Equatable {
    /// `{"type":"hello","version":1,"did","name"?,"signPubKey","sasCommit"|"sasNonce","signature"}`
    case hello(Hello)
    /// `{"type":"sas-reveal","nonce"}`: the initiator opens its SAS commitment.
    case sasReveal(nonce: [UInt8])
    /// `{"type":"decision","accept":bool,"reason"?}`
    case decision(accept: Bool, reason: String?)
    /// `{"type":"card","payload":{ProximityPayload},"message"?}`
    case card(payload: JSONValue, message: String?)
    /// `{"type":"done"}`: the sender verified the peer's card.
    case done
    /// `{"type":"abort","code","reason"}`
    case abort(code: String, reason: String)

    /// The `invite` member of an initiator's hello: `{id, proof}` (§19).
    public struct Invite: Sendable, Equatable {
        public let id: [UInt8]
        public let proof: [UInt8]
        public init(id: [UInt8], proof: [UInt8]) {
            self.id = id
            self.proof = proof
        }
    }

    public struct Hello: Sendable, Equatable {
        public static let version = 1
        public var did: String
        public var name: String?
        public var signPubKey: [UInt8]
        /// Initiator: SHA-256 commitment to its SAS nonce. Responder: nil.
        public var sasCommit: [UInt8]?
        /// Responder: its SAS nonce. Initiator: nil.
        public var sasNonce: [UInt8]?
        /// ECDSA P-256 (raw r‖s) by the DID key over `HelloProof.signingInput`.
        public var signature: [UInt8]
        /// Initiator only: the QR invitation it holds (§19).
        public var invite: Invite?

        public init(did: String, name: String?, signPubKey: [UInt8], sasCommit: [UInt8]?, sasNonce: [UInt8]?, signature: [UInt8],
                    invite: Invite? = nil) {
            self.did = did
            self.name = name
            self.signPubKey = signPubKey
            self.sasCommit = sasCommit
            self.sasNonce = sasNonce
            self.signature = signature
            self.invite = invite
        }

        /// The object the signature covers: every member but `signature`, plus the sender's role and h.
        public func signedObject(role: NoiseXXHandshake.Role, handshakeHash: [UInt8]) -> JSONValue {
            var o = unsignedMembers
            o["role"] = .string(role.rawValue)
            o["handshakeHash"] = .string(Base64.urlEncode(handshakeHash))
            return .object(o)
        }

        var unsignedMembers: JSONObject {
            var o: JSONObject = ["type": "hello", "version": .number(Double(Self.version)), "did": .string(did),
                                 "signPubKey": .string(Base64.encode(signPubKey))]
            if let name { o["name"] = .string(name) }
            if let sasCommit { o["sasCommit"] = .string(Base64.urlEncode(sasCommit)) }
            if let sasNonce { o["sasNonce"] = .string(Base64.urlEncode(sasNonce)) }
            if let invite {
                o["invite"] = ["id": .string(Base64.urlEncode(invite.id)), "proof": .string(Base64.urlEncode(invite.proof))]
            }
            return o
        }

        public static let signatureDomain = "nearcard/session-auth/v1"

        public static func signingInput(_ signed: JSONValue) -> [UInt8] {
            Array(signatureDomain.utf8) + [0] + JCS.canonicalize(signed)
        }
    }

    // MARK: encoding

    public var json: JSONValue {
        switch self {
        case .hello(let h):
            var o = h.unsignedMembers
            o["signature"] = .string(Base64.encode(h.signature))
            return .object(o)
        case .sasReveal(let nonce):
            return ["type": "sas-reveal", "nonce": .string(Base64.urlEncode(nonce))]
        case .decision(let accept, let reason):
            var o: JSONObject = ["type": "decision", "accept": .bool(accept)]
            if let reason { o["reason"] = .string(reason) }
            return .object(o)
        case .card(let payload, let message):
            var o: JSONObject = ["type": "card", "payload": payload]
            if let message { o["message"] = .string(message) }
            return .object(o)
        case .done:
            return ["type": "done"]
        case .abort(let code, let reason):
            return ["type": "abort", "code": .string(code), "reason": .string(reason)]
        }
    }

    public var encoded: [UInt8] { JCS.canonicalize(json) }

    /// Decodes one message strictly: unknown types, missing or extra members, wrong types and
    /// over-long values are refused.
    public init(decoding bytes: [UInt8]) throws(ProtocolError) {
        let value = try Self.parseCanonical(bytes)
        guard let o = value.objectValue, let type = o["type"]?.stringValue else {
            throw ProtocolError(.protocolError, "a message is not an object with a \"type\"")
        }
        func only(_ members: Set<String>) throws(ProtocolError) {
            for k in o.keys where !members.contains(k) { throw ProtocolError(.protocolError, "\(type): unexpected member \"\(k)\"") }
        }
        func string(_ k: String, max: Int) throws(ProtocolError) -> String {
            guard let s = o[k]?.stringValue else { throw ProtocolError(.protocolError, "\(type): \"\(k)\" missing or not a string") }
            guard s.utf8.count <= max else { throw ProtocolError(.tooLarge, "\(type): \"\(k)\" is over \(max) bytes") }
            return s
        }
        /// Human text: its limit counts characters (Unicode scalar values, §1); a control character
        /// other than those allowed is malformed.
        func text(_ k: String, maxCharacters: Int, allowing: Set<Unicode.Scalar>) throws(ProtocolError) -> String {
            let s = try string(k, max: ProtocolLimits.maximumMessageLength)
            let length = s.unicodeScalars.count
            guard length <= maxCharacters else {
                throw ProtocolError(.tooLarge, "\(type): \"\(k)\" is \(length) characters; at most \(maxCharacters) (Unicode code points)")
            }
            if let c = s.unicodeScalars.first(where: { $0.properties.generalCategory == .control && !allowing.contains($0) }) {
                throw ProtocolError(.protocolError, "\(type): \"\(k)\" contains the control character U+\(String(c.value, radix: 16, uppercase: true).leftPadded(4))")
            }
            return s
        }
        func fixedBytes(_ k: String, urlSafe: Bool, count: Int) throws(ProtocolError) -> [UInt8] {
            let s = try string(k, max: 128)
            guard let b = urlSafe ? try? Base64.urlDecode(s) : try? Base64.decode(s), b.count == count else {
                throw ProtocolError(.protocolError, "\(type): \"\(k)\" is not \(count) bytes of base64")
            }
            return b
        }
        switch type {
        case "hello":
            try only(["type", "version", "did", "name", "signPubKey", "sasCommit", "sasNonce", "signature", "invite"])
            guard let version = o["version"], version.integerValue != nil else {
                throw ProtocolError(.protocolError, "hello: \"version\" missing or not an integer")
            }
            guard version.integerValue == Int64(Hello.version) else {
                throw ProtocolError(.unsupportedVersion, "the peer speaks hello version \(o["version"]?.compactText ?? "none"); this Nearcard speaks \(Hello.version)")
            }
            let name = o["name"] == nil ? nil : try text("name", maxCharacters: ProtocolLimits.maximumNameLength, allowing: [])
            let commit = o["sasCommit"] == nil ? nil : try fixedBytes("sasCommit", urlSafe: true, count: 32)
            let nonce = o["sasNonce"] == nil ? nil : try fixedBytes("sasNonce", urlSafe: true, count: 32)
            guard (commit == nil) != (nonce == nil) else { throw ProtocolError(.protocolError, "hello: exactly one of sasCommit and sasNonce") }
            var invite: Invite?
            if let i = o["invite"] {
                guard let io = i.objectValue, Set(io.keys) == ["id", "proof"],
                      let id = io["id"]?.stringValue.flatMap({ try? Base64.urlDecode($0) }), id.count == Invitation.idByteCount,
                      let proof = io["proof"]?.stringValue.flatMap({ try? Base64.urlDecode($0) }), proof.count == HMACSHA256.byteCount else {
                    throw ProtocolError(.protocolError, "hello: \"invite\" must be {id: 8 bytes, proof: 32 bytes} of base64url")
                }
                guard commit != nil else { throw ProtocolError(.protocolError, "hello: only the initiator presents an invitation") }
                invite = Invite(id: id, proof: proof)
            }
            self = .hello(Hello(did: try string("did", max: 256), name: name, signPubKey: try fixedBytes("signPubKey", urlSafe: false, count: 32),
                                sasCommit: commit, sasNonce: nonce, signature: try fixedBytes("signature", urlSafe: false, count: 64), invite: invite))
        case "sas-reveal":
            try only(["type", "nonce"])
            self = .sasReveal(nonce: try fixedBytes("nonce", urlSafe: true, count: 32))
        case "decision":
            try only(["type", "accept", "reason"])
            guard let accept = o["accept"]?.boolValue else { throw ProtocolError(.protocolError, "decision: \"accept\" must be true or false") }
            self = .decision(accept: accept, reason: o["reason"] == nil ? nil : try string("reason", max: 512))
        case "card":
            try only(["type", "payload", "message"])
            guard let payload = o["payload"], payload.objectValue != nil else { throw ProtocolError(.protocolError, "card: \"payload\" must be an object") }
            self = .card(payload: payload,
                         message: o["message"] == nil ? nil : try text("message", maxCharacters: ProximityPayload.maximumMessageLength, allowing: ["\n"]))
        case "done":
            try only(["type"])
            self = .done
        case "abort":
            try only(["type", "code", "reason"])
            self = .abort(code: try string("code", max: 64), reason: try string("reason", max: 512))
        default:
            throw ProtocolError(.protocolError, "unknown message type \"\(type.prefix(32))\"")
        }
    }

    /// Parses one received message: JSON within the depth limit, and in its canonical (RFC 8785) form,
    /// byte for byte, as §1 requires of every sender.
    static func parseCanonical(_ bytes: [UInt8]) throws(ProtocolError) -> JSONValue {
        let value: JSONValue
        do { value = try JSONParser(maximumDepth: ProtocolLimits.maximumJSONDepth, maximumLength: ProtocolLimits.maximumMessageLength).parse(bytes) } catch {
            throw ProtocolError(.protocolError, "a message is not JSON: \(error.message)")
        }
        guard JCS.canonicalize(value) == bytes else {
            throw ProtocolError(.protocolError, "a message is not in its canonical JSON form (RFC 8785: sorted members, no whitespace, shortest escapes)")
        }
        return value
    }

    /// The message's type, for errors and logs.
    public var typeName: String {
        switch self {
        case .hello: "hello"
        case .sasReveal: "sas-reveal"
        case .decision: "decision"
        case .card: "card"
        case .done: "done"
        case .abort: "abort"
        }
    }
}
