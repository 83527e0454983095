public import NearcardCrypto
public import NearcardModel

/// The application messages of an exchange, each one Noise transport message whose plaintext is the
/// RFC 8785 JSON of an object with a `type` (docs/PROTOCOL.md §6, protocol version 2).
public enum ExchangeMessage: Sendable, Equatable {
    /// `{"type":"hello","version":2,"sasCommit","identity"?,"invite"?}`: the initiator's first message.
    /// Without `identity` the initiator asks a recognised contact to prove itself first (§6.2).
    case hello(Hello)
    /// `{"type":"nonce","sasNonce","sealedIdentity"?}`: the responder's SAS nonce; its identity sealed
    /// under its presence key when the hello came without one.
    case nonce(sasNonce: [UInt8], sealedIdentity: [UInt8]?)
    /// `{"type":"sas-reveal","nonce","identity"?}`: the initiator opens its SAS commitment (and, after
    /// a sealed identity proved the contact, shows its own).
    case sasReveal(nonce: [UInt8], identity: Identity?)
    /// `{"type":"decision","accept":bool,"reason"?,"identity"?,"commonContacts"?}`: a responder that has
    /// not yet shown itself does so in its acceptance, never before; `commonContacts: true` offers the
    /// private common-contacts step (§22).
    case decision(accept: Bool, reason: String?, identity: Identity?, commonContacts: Bool = false)
    /// `psi-1` … `psi-4` (§22): the private set intersection, when both acceptances offered it.
    case psi(PSI.Message)
    /// `{"type":"card","payload":{ProximityPayload},"message"?,"presenceKey"}`
    case card(payload: JSONValue, message: String?, presenceKey: [UInt8])
    /// `{"type":"done"}`: responder — "I verified your card and will keep it once you say done";
    /// initiator — "I have stored yours (unconfirmed)".
    case done
    /// `{"type":"confirm"}`: the responder has stored the contact (§11).
    case confirm
    /// `{"type":"abort","code","reason"}`
    case abort(code: String, reason: String)

    /// The highest exchange version this node speaks (hello `version`); it speaks every one of
    /// `ExchangeVersions.spoken`. Message 1's tag stays `nearcard/2` whatever the version (§5).
    public static let version = ExchangeVersions.highest

    /// The `invite` member of an initiator's hello: `{id, proof}` (§19).
    public struct Invite: Sendable, Equatable {
        public let id: [UInt8]
        public let proof: [UInt8]
        public init(id: [UInt8], proof: [UInt8]) {
            self.id = id
            self.proof = proof
        }
    }

    /// Who a side is, proven for this session: its DID signs the handshake hash (§6.1).
    public struct Identity: Sendable, Equatable {
        public var did: String
        public var name: String?
        /// The long-term X25519 key (sealed routes, follow-up mail), not the session's Noise key.
        public var pubKey: [UInt8]
        public var signPubKey: [UInt8]
        /// ECDSA P-256 (raw r‖s) by the DID key over `signingInput(signedObject(...))`.
        public var signature: [UInt8]

        public init(did: String, name: String?, pubKey: [UInt8], signPubKey: [UInt8], signature: [UInt8] = []) {
            self.did = did
            self.name = name
            self.pubKey = pubKey
            self.signPubKey = signPubKey
            self.signature = signature
        }

        /// The object the signature covers: every member but `signature`, plus the sender's role and h.
        public func signedObject(role: NoiseXXHandshake.Role, handshakeHash: [UInt8]) -> JSONValue {
            var o = unsignedMembers
            o["role"] = .string(role.rawValue)
            o["handshakeHash"] = .string(Base64.urlEncode(handshakeHash))
            return .object(o)
        }

        var unsignedMembers: JSONObject {
            var o: JSONObject = ["did": .string(did), "pubKey": .string(Base64.encode(pubKey)), "signPubKey": .string(Base64.encode(signPubKey))]
            if let name { o["name"] = .string(name) }
            return o
        }

        public var json: JSONValue {
            var o = unsignedMembers
            o["signature"] = .string(Base64.encode(signature))
            return .object(o)
        }

        public static let signatureDomain = "nearcard/session-auth/v2"

        public static func signingInput(_ signed: JSONValue) -> [UInt8] {
            Array(signatureDomain.utf8) + [0] + JCS.canonicalize(signed)
        }

        /// Decodes an `identity` object strictly (`in` names the message, for errors).
        public init(json value: JSONValue, in type: String) throws(ProtocolError) {
            guard let o = value.objectValue else { throw ProtocolError(.protocolError, Phrase("%1$@: \"identity\" must be an object", type)) }
            for k in o.keys where !["did", "name", "pubKey", "signPubKey", "signature"].contains(k) {
                throw ProtocolError(.protocolError, Phrase("%1$@: identity: unexpected member \"%2$@\"", type, k))
            }
            let fields = MessageFields(o, type: "\(type): identity")
            let name = o["name"] == nil ? nil : try fields.text("name", maxCharacters: ProtocolLimits.maximumNameLength, allowing: [])
            // §1: a name on the wire holds no bidirectional control; "Eve\u{202E}gnp.exe" would print reversed.
            if let bidi = name?.unicodeScalars.first(where: \.isBidiControl) {
                throw ProtocolError(
                    .badIdentity,
                    Phrase(
                        "%1$@: identity: \"name\" contains a bidirectional control (U+%2$@), which would reorder the text around it", type,
                        String(bidi.value, radix: 16, uppercase: true)))
            }
            self.init(
                did: try fields.string("did", max: 256),
                name: name,
                pubKey: try fields.fixedBytes("pubKey", urlSafe: false, count: 32),
                signPubKey: try fields.fixedBytes("signPubKey", urlSafe: false, count: 32),
                signature: try fields.fixedBytes("signature", urlSafe: false, count: 64))
        }
    }

    public struct Hello: Sendable, Equatable {
        /// SHA-256 commitment to the initiator's SAS nonce.
        public var sasCommit: [UInt8]
        /// Absent when the initiator dials a contact it recognised and waits for its proof (§6.2).
        public var identity: Identity?
        /// The QR invitation the initiator holds (§19); only with an identity.
        public var invite: Invite?
        /// The exchange version the initiator speaks in this session (2 or 3, §21).
        public var version: Int

        public init(sasCommit: [UInt8], identity: Identity?, invite: Invite? = nil, version: Int = ExchangeMessage.version) {
            self.sasCommit = sasCommit
            self.identity = identity
            self.invite = invite
            self.version = version
        }
    }

    // MARK: encoding

    public var json: JSONValue {
        switch self {
        case .hello(let h):
            var o: JSONObject = ["type": "hello", "version": .number(Double(h.version)), "sasCommit": .string(Base64.urlEncode(h.sasCommit))]
            if let identity = h.identity { o["identity"] = identity.json }
            if let invite = h.invite {
                o["invite"] = ["id": .string(Base64.urlEncode(invite.id)), "proof": .string(Base64.urlEncode(invite.proof))]
            }
            return .object(o)
        case .nonce(let nonce, let sealed):
            var o: JSONObject = ["type": "nonce", "sasNonce": .string(Base64.urlEncode(nonce))]
            if let sealed { o["sealedIdentity"] = .string(Base64.urlEncode(sealed)) }
            return .object(o)
        case .sasReveal(let nonce, let identity):
            var o: JSONObject = ["type": "sas-reveal", "nonce": .string(Base64.urlEncode(nonce))]
            if let identity { o["identity"] = identity.json }
            return .object(o)
        case .decision(let accept, let reason, let identity, let commonContacts):
            var o: JSONObject = ["type": "decision", "accept": .bool(accept)]
            if let reason { o["reason"] = .string(reason) }
            if let identity { o["identity"] = identity.json }
            if commonContacts { o["commonContacts"] = .bool(true) }
            return .object(o)
        case .psi(let m):
            return m.json
        case .card(let payload, let message, let presenceKey):
            var o: JSONObject = ["type": "card", "payload": payload, "presenceKey": .string(Base64.urlEncode(presenceKey))]
            if let message { o["message"] = .string(message) }
            return .object(o)
        case .done:
            return ["type": "done"]
        case .confirm:
            return ["type": "confirm"]
        case .abort(let code, let reason):
            return ["type": "abort", "code": .string(code), "reason": .string(reason)]
        }
    }

    public var encoded: [UInt8] { JCS.canonicalize(json) }

    /// The largest sealed identity (an identity object's JCS is at most ~700 bytes, plus the tag).
    public static let maximumSealedIdentityLength = 1024

    /// Decodes one message strictly: unknown types, missing or extra members, wrong types and
    /// over-long values are refused.
    public init(decoding bytes: [UInt8]) throws(ProtocolError) {
        let value = try Self.parseCanonical(bytes)
        guard let o = value.objectValue, let type = o["type"]?.stringValue else {
            throw ProtocolError(.protocolError, Phrase("a message is not an object with a \"type\""))
        }
        func only(_ members: Set<String>) throws(ProtocolError) {
            for k in o.keys where !members.contains(k) { throw ProtocolError(.protocolError, Phrase("%1$@: unexpected member \"%2$@\"", type, k)) }
        }
        let fields = MessageFields(o, type: type)
        func identity(_ k: String = "identity") throws(ProtocolError) -> Identity? {
            guard let v = o[k] else { return nil }
            return try Identity(json: v, in: type)
        }
        switch type {
        case "hello":
            try only(["type", "version", "sasCommit", "identity", "invite"])
            guard let version = o["version"], version.integerValue != nil else {
                throw ProtocolError(.protocolError, Phrase("hello: \"version\" missing or not an integer"))
            }
            guard let spoken = version.integerValue.flatMap({ ExchangeVersions.spoken.contains(Int($0)) ? Int($0) : nil }) else {
                throw ProtocolError(
                    .unsupportedVersion,
                    Phrase(
                        "the peer speaks hello version %1$@; this Nearcard speaks %2$@", version.compactText,
                        ExchangeVersions.spoken.map(String.init).joined(separator: " and ")))
            }
            let commit = try fields.fixedBytes("sasCommit", urlSafe: true, count: 32)
            let id = try identity()
            var invite: Invite?
            if let i = o["invite"] {
                guard let io = i.objectValue, Set(io.keys) == ["id", "proof"],
                    let inviteID = io["id"]?.stringValue.flatMap({ try? Base64.urlDecode($0) }), inviteID.count == Invitation.idByteCount,
                    let proof = io["proof"]?.stringValue.flatMap({ try? Base64.urlDecode($0) }), proof.count == HMACSHA256.byteCount
                else {
                    throw ProtocolError(.protocolError, Phrase("hello: \"invite\" must be {id: 8 bytes, proof: 32 bytes} of base64url"))
                }
                guard id != nil else { throw ProtocolError(.protocolError, Phrase("hello: an invitation is presented with an identity")) }
                invite = Invite(id: inviteID, proof: proof)
            }
            self = .hello(Hello(sasCommit: commit, identity: id, invite: invite, version: spoken))
        case "nonce":
            try only(["type", "sasNonce", "sealedIdentity"])
            var sealed: [UInt8]?
            if o["sealedIdentity"] != nil {
                let s = try fields.string("sealedIdentity", max: Self.maximumSealedIdentityLength * 4 / 3 + 4)
                guard let b = try? Base64.urlDecode(s), b.count > ChaChaPoly.tagByteCount else {
                    throw ProtocolError(.protocolError, Phrase("nonce: \"sealedIdentity\" is not base64url of a sealed box"))
                }
                sealed = b
            }
            self = .nonce(sasNonce: try fields.fixedBytes("sasNonce", urlSafe: true, count: 32), sealedIdentity: sealed)
        case "sas-reveal":
            try only(["type", "nonce", "identity"])
            self = .sasReveal(nonce: try fields.fixedBytes("nonce", urlSafe: true, count: 32), identity: try identity())
        case "decision":
            try only(["type", "accept", "reason", "identity", "commonContacts"])
            guard let accept = o["accept"]?.boolValue else { throw ProtocolError(.protocolError, Phrase("decision: \"accept\" must be true or false")) }
            let id = try identity()
            guard accept || id == nil else { throw ProtocolError(.protocolError, Phrase("decision: a refusal carries no identity")) }
            var offer = false
            if let c = o["commonContacts"] {
                guard let b = c.boolValue else { throw ProtocolError(.protocolError, Phrase("decision: \"commonContacts\" must be true or false")) }
                guard accept else { throw ProtocolError(.protocolError, Phrase("decision: a refusal offers no common contacts")) }
                offer = b
            }
            self = .decision(accept: accept, reason: o["reason"] == nil ? nil : try fields.string("reason", max: 512), identity: id, commonContacts: offer)
        case _ where PSI.Message.typeNames.contains(type):
            self = .psi(try PSI.Message(object: o, type: type))
        case "card":
            try only(["type", "payload", "message", "presenceKey"])
            guard let payload = o["payload"], payload.objectValue != nil else {
                throw ProtocolError(.protocolError, Phrase("card: \"payload\" must be an object"))
            }
            self = .card(
                payload: payload,
                message: o["message"] == nil ? nil : try fields.text("message", maxCharacters: ProximityPayload.maximumMessageLength, allowing: ["\n"]),
                presenceKey: try fields.fixedBytes("presenceKey", urlSafe: true, count: ProtocolLimits.presenceKeyByteCount))
        case "done":
            try only(["type"])
            self = .done
        case "confirm":
            try only(["type"])
            self = .confirm
        case "abort":
            try only(["type", "code", "reason"])
            self = .abort(code: try fields.string("code", max: 64), reason: try fields.string("reason", max: 512))
        default:
            throw ProtocolError(.protocolError, Phrase("unknown message type \"%1$@\"", type.prefix(32)))
        }
    }

    /// Parses one received message: JSON within the depth limit, and in its canonical (RFC 8785) form,
    /// byte for byte, as §1 requires of every sender.
    static func parseCanonical(_ bytes: [UInt8]) throws(ProtocolError) -> JSONValue {
        let value: JSONValue
        do { value = try JSONParser(maximumDepth: ProtocolLimits.maximumJSONDepth, maximumLength: ProtocolLimits.maximumMessageLength).parse(bytes) } catch {
            throw ProtocolError(.protocolError, Phrase("a message is not JSON: %1$@", error.phrase))
        }
        guard JCS.canonicalize(value) == bytes else {
            throw ProtocolError(
                .protocolError, Phrase("a message is not in its canonical JSON form (RFC 8785: sorted members, no whitespace, shortest escapes)"))
        }
        return value
    }

    /// The message's type, for errors and logs.
    public var typeName: String {
        switch self {
        case .hello: "hello"
        case .nonce: "nonce"
        case .sasReveal: "sas-reveal"
        case .decision: "decision"
        case .card: "card"
        case .done: "done"
        case .confirm: "confirm"
        case .psi(let m): m.typeName
        case .abort: "abort"
        }
    }
}

/// A message's members, read strictly (used for messages and their nested objects).
struct MessageFields {
    let o: JSONObject
    let type: String

    init(_ o: JSONObject, type: String) {
        self.o = o
        self.type = type
    }

    func string(_ k: String, max: Int) throws(ProtocolError) -> String {
        guard let s = o[k]?.stringValue else { throw ProtocolError(.protocolError, Phrase("%1$@: \"%2$@\" missing or not a string", type, k)) }
        guard s.utf8.count <= max else { throw ProtocolError(.tooLarge, Phrase("%1$@: \"%2$@\" is over %3$@ bytes", type, k, String(max))) }
        return s
    }

    /// Human text: its limit counts characters (Unicode scalar values, §1); a control character
    /// other than those allowed is malformed.
    func text(_ k: String, maxCharacters: Int, allowing: Set<Unicode.Scalar>) throws(ProtocolError) -> String {
        let s = try string(k, max: ProtocolLimits.maximumMessageLength)
        let length = s.unicodeScalars.count
        guard length <= maxCharacters else {
            throw ProtocolError(
                .tooLarge, Phrase("%1$@: \"%2$@\" is %3$@ characters; at most %4$@ (Unicode code points)", type, k, String(length), String(maxCharacters)))
        }
        if let c = s.unicodeScalars.first(where: { $0.isControl && !allowing.contains($0) }) {
            throw ProtocolError(
                .protocolError,
                Phrase("%1$@: \"%2$@\" contains the control character U+%3$@", type, k, String(c.value, radix: 16, uppercase: true).leftPadded(4)))
        }
        return s
    }

    func fixedBytes(_ k: String, urlSafe: Bool, count: Int) throws(ProtocolError) -> [UInt8] {
        let s = try string(k, max: 128)
        guard let b = urlSafe ? try? Base64.urlDecode(s) : try? Base64.decode(s), b.count == count else {
            throw ProtocolError(.protocolError, Phrase("%1$@: \"%2$@\" is not %3$@ bytes of base64", type, k, String(count)))
        }
        return b
    }
}
