public import NearcardCrypto

/// A private follow-up message between contacts (docs/PROTOCOL.md "Follow-up messages"):
/// `{"version":1,"id","from","to","sentAt","expiresAt"?,"text","signature"}`, signed with the sender's Ed25519
/// key over `"nearcard/message/v1" ‖ 0x00 ‖ JCS(envelope without signature)`.
public struct MessageEnvelope: Sendable, Equatable {
    public static let version = 1
    public static let signatureDomain = "nearcard/message/v1"
    /// Longest text, in bytes of UTF-8.
    public static let maximumTextLength = 4096
    public static let idByteCount = 16
    /// The longest lifetime an expiring message may ask for (§15): 365 days after `sentAt`.
    public static let maximumLifetime: Int64 = 365 * 24 * 3600

    /// 16 random bytes, base64url: the de-duplication key (with `from`).
    public var id: String
    public var from: String
    public var to: String
    public var sentAt: Int64
    /// When both nodes delete the message (Unix seconds); nil: it stays until someone deletes it.
    public var expiresAt: Int64?
    public var text: String
    public var signature: [UInt8]

    public init(id: String, from: String, to: String, sentAt: Int64, expiresAt: Int64? = nil, text: String, signature: [UInt8] = []) {
        self.id = id
        self.from = from
        self.to = to
        self.sentAt = sentAt
        self.expiresAt = expiresAt
        self.text = text
        self.signature = signature
    }

    /// A new signed envelope with a fresh id.
    public static func make(text: String, from: String, to: String, sentAt: Int64, expiresAt: Int64? = nil, signer: Ed25519.PrivateKey) -> MessageEnvelope {
        var e = MessageEnvelope(id: Base64.urlEncode(Sodium.randomBytes(idByteCount)), from: from, to: to, sentAt: sentAt, expiresAt: expiresAt, text: text)
        e.signature = signer.signature(for: e.signingInput)
        return e
    }

    /// Why a text cannot be sent; nil when it can.
    public static func textProblem(_ text: String) -> String? { textProblemPhrase(text)?.english }

    /// `textProblem` as a sentence to say in a person's language.
    public static func textProblemPhrase(_ text: String) -> Phrase? {
        if text.isEmpty { return Phrase("the message is empty") }
        if text.utf8.count > maximumTextLength {
            return Phrase("a message is %1$@ bytes; at most %2$@", String(text.utf8.count), String(maximumTextLength))
        }
        if text.unicodeScalars.contains(where: { $0.isControl && $0 != "\n" && $0 != "\t" }) {
            return Phrase("a message must not contain control characters")
        }
        return nil
    }

    /// Why a lifetime cannot be asked for; nil when it can.
    public static func lifetimeProblem(sentAt: Int64, expiresAt: Int64) -> String? {
        lifetimeProblemPhrase(sentAt: sentAt, expiresAt: expiresAt)?.english
    }

    /// `lifetimeProblem` as a sentence to say in a person's language.
    public static func lifetimeProblemPhrase(sentAt: Int64, expiresAt: Int64) -> Phrase? {
        if expiresAt <= sentAt { return Phrase("a message must expire after it is sent") }
        if expiresAt - sentAt > maximumLifetime { return Phrase("a message may live at most 365 days") }
        return nil
    }

    /// True once the message has expired (`now` in Unix seconds).
    public func hasExpired(now: Int64) -> Bool { expiresAt.map { $0 <= now } ?? false }

    var unsignedJSON: JSONObject {
        var o: JSONObject = [
            "version": .number(Double(Self.version)), "id": .string(id), "from": .string(from), "to": .string(to),
            "sentAt": .number(Double(sentAt)), "text": .string(text),
        ]
        if let expiresAt { o["expiresAt"] = .number(Double(expiresAt)) }
        return o
    }

    public var signingInput: [UInt8] { Array(Self.signatureDomain.utf8) + [0] + JCS.canonicalize(.object(unsignedJSON)) }

    public var json: JSONValue {
        var o = unsignedJSON
        o["signature"] = .string(Base64.encode(signature))
        return .object(o)
    }

    public init(json: JSONValue) throws(ModelError) {
        guard let o = json.objectValue else { throw ModelError(.malformedPayload, Phrase("a message must be a JSON object")) }
        for key in o.keys where !["version", "id", "from", "to", "sentAt", "expiresAt", "text", "signature"].contains(key) {
            throw ModelError(.malformedPayload, Phrase("unknown member \"%1$@\" in the message", key))
        }
        guard o["version"]?.integerValue == Int64(Self.version) else { throw ModelError(.malformedPayload, Phrase("message version is not 1")) }
        guard let id = o["id"]?.stringValue, let idBytes = try? Base64.urlDecode(id), idBytes.count == Self.idByteCount else {
            throw ModelError(.malformedPayload, Phrase("the message id is not 16 bytes of base64url"))
        }
        guard let from = o["from"]?.stringValue, let to = o["to"]?.stringValue, from.utf8.count <= 256, to.utf8.count <= 256 else {
            throw ModelError(.malformedPayload, Phrase("the message has no from/to DID"))
        }
        guard let sentAt = o["sentAt"]?.integerValue else { throw ModelError(.malformedPayload, Phrase("%1$@ must be an integer", "sentAt")) }
        var expiresAt: Int64?
        if let e = o["expiresAt"] {
            guard let at = e.integerValue else { throw ModelError(.malformedPayload, Phrase("%1$@ must be an integer", "expiresAt")) }
            // §15: a lifetime over 365 days is over a limit (too_large); one that ends before it begins is malformed.
            if let problem = Self.lifetimeProblemPhrase(sentAt: sentAt, expiresAt: at) {
                throw ModelError(at > sentAt ? .limitExceeded : .malformedPayload, problem)
            }
            expiresAt = at
        }
        guard let text = o["text"]?.stringValue else { throw ModelError(.malformedPayload, Phrase("the message has no text")) }
        // Over the limit is too_large on the wire; empty or a control character is malformed (§13).
        if let problem = Self.textProblemPhrase(text) {
            throw ModelError(text.utf8.count > Self.maximumTextLength ? .limitExceeded : .malformedPayload, problem)
        }
        guard let sig = o["signature"]?.stringValue, let signature = try? Base64.decode(sig), signature.count == 64 else {
            throw ModelError(.malformedPayload, Phrase("the message signature is not 64 bytes of base64"))
        }
        self.init(id: id, from: from, to: to, sentAt: sentAt, expiresAt: expiresAt, text: text, signature: signature)
    }

    public func isSigned(by key: Ed25519.PublicKey) -> Bool { key.isValidSignature(signature, for: signingInput) }
}
