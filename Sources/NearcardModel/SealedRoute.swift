public import NearcardCrypto

/// Where and how to reach its issuer later (docs/PROTOCOL.md "Sealed route").
public struct RouteRecord: Sendable, Equatable {
    public static let version = 1

    /// The issuer.
    public var did: String
    public var pubKey: X25519.PublicKey
    public var signPubKey: Ed25519.PublicKey
    public var fingerprint: String
    /// A per-contact secret: whoever presents it may deliver follow-up messages to the issuer.
    public var mailboxToken: [UInt8]
    /// The one contact this route is for.
    public var recipient: String
    public var issuedAt: Int64
    public var expiresAt: Int64
    /// Addresses the issuer was listening on when it issued the route (may be stale).
    public var hints: [Hint]

    public struct Hint: Sendable, Equatable {
        public var host: String
        public var port: Int
        public init(host: String, port: Int) {
            self.host = host
            self.port = port
        }

        /// IPv6 link-local (fe80::/10): its scope names an interface of the sender, meaningless to the
        /// receiver, so such addresses are never hints.
        public static func isLinkLocal(_ host: String) -> Bool {
            let h = host.lowercased()
            return h.hasPrefix("fe8") || h.hasPrefix("fe9") || h.hasPrefix("fea") || h.hasPrefix("feb")
        }
    }

    public static let mailboxTokenByteCount = 32
    /// How long a route is valid by default: a year — also the longest a route may be valid
    /// (docs/PROTOCOL.md §10: a longer one is `too_large`).
    public static let defaultValidity: Int64 = 365 * 24 * 3600
    public static let maximumValidity: Int64 = defaultValidity
    public static let maximumHints = 8

    public init(
        did: String, pubKey: X25519.PublicKey, signPubKey: Ed25519.PublicKey, fingerprint: String, mailboxToken: [UInt8],
        recipient: String, issuedAt: Int64, expiresAt: Int64, hints: [Hint]
    ) {
        self.did = did
        self.pubKey = pubKey
        self.signPubKey = signPubKey
        self.fingerprint = fingerprint
        self.mailboxToken = mailboxToken
        self.recipient = recipient
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
        self.hints = hints
    }

    public var json: JSONValue {
        [
            "version": .number(Double(Self.version)), "did": .string(did), "pubKey": .string(Base64.encode(pubKey.rawRepresentation)),
            "signPubKey": .string(Base64.encode(signPubKey.rawRepresentation)), "fingerprint": .string(fingerprint),
            "mailboxToken": .string(Base64.urlEncode(mailboxToken)), "recipient": .string(recipient),
            "issuedAt": .number(Double(issuedAt)), "expiresAt": .number(Double(expiresAt)),
            "hints": .array(hints.map { ["host": .string($0.host), "port": .number(Double($0.port))] }),
        ]
    }

    public init(json: JSONValue) throws(ModelError) {
        guard let o = json.objectValue, o["version"]?.integerValue == Int64(Self.version) else {
            throw ModelError(.malformedPayload, Phrase("a route record must be a version-1 JSON object"))
        }
        func s(_ k: String) throws(ModelError) -> String {
            guard let v = o[k]?.stringValue else { throw ModelError(.malformedPayload, Phrase("the route has no \"%1$@\"", k)) }
            return v
        }
        func n(_ k: String) throws(ModelError) -> Int64 {
            guard let v = o[k]?.integerValue else { throw ModelError(.malformedPayload, Phrase("the route's \"%1$@\" is not an integer", k)) }
            return v
        }
        do {
            did = try s("did")
            pubKey = try X25519.PublicKey(rawRepresentation: try Base64.decode(try s("pubKey")))
            signPubKey = try Ed25519.PublicKey(rawRepresentation: try Base64.decode(try s("signPubKey")))
            mailboxToken = try Base64.urlDecode(try s("mailboxToken"))
        } catch let e as ModelError {
            throw e
        } catch {
            throw ModelError(.malformedPayload, Phrase("the route's keys or token are malformed"))
        }
        guard mailboxToken.count == Self.mailboxTokenByteCount else { throw ModelError(.malformedPayload, Phrase("the route's mailbox token is not 32 bytes")) }
        fingerprint = try s("fingerprint")
        recipient = try s("recipient")
        issuedAt = try n("issuedAt")
        expiresAt = try n("expiresAt")
        guard expiresAt - issuedAt <= Self.maximumValidity else {
            throw ModelError(.limitExceeded, Phrase("the route is valid for %1$@ days; at most 365", String((expiresAt - issuedAt) / 86400)))
        }
        guard let hs = o["hints"]?.arrayValue else { throw ModelError(.malformedPayload, Phrase("the route has no hints list")) }
        guard hs.count <= Self.maximumHints else {
            throw ModelError(.limitExceeded, Phrase("the route has %1$@ hints; at most %2$@", String(hs.count), String(Self.maximumHints)))
        }
        var hints: [Hint] = []
        for h in hs {
            guard let host = h["host"]?.stringValue, host.utf8.count <= 256, let port = h["port"]?.integerValue, (1...65535).contains(port) else {
                throw ModelError(.malformedPayload, Phrase("a route hint is not {host, port}"))
            }
            hints.append(Hint(host: host, port: Int(port)))
        }
        self.hints = hints
    }
}

/// Why a sealed route was refused.
public enum RouteFailure: Error, Sendable, Equatable, CustomStringConvertible {
    case notForMe
    case malformed(String)
    /// Longer than `SealedRoute.maximumLength`: `too_large` on the wire.
    case tooLarge(Int)
    /// Within its length but over another limit (more than `RouteRecord.maximumHints` hints): `too_large`.
    case overLimit(String)
    case badSignature
    case wrongIssuer
    case wrongRecipient
    case expired
    case keyMismatch

    public var description: String { phrase.english }

    /// The reason as a sentence to say in a person's language.
    package var phrase: Phrase {
        switch self {
        case .notForMe: Phrase("the sealed route does not open with this key (it was sealed for someone else, or altered)")
        case .malformed(let why): Phrase("the sealed route is malformed: %1$@", why)
        case .tooLarge(let n): Phrase("the sealed route is %1$@ bytes; at most %2$@", String(n), String(SealedRoute.maximumLength))
        case .overLimit(let why): Phrase("the sealed route is over a limit: %1$@", why)
        case .badSignature: Phrase("the sealed route's signature does not verify")
        case .wrongIssuer: Phrase("the sealed route was issued by someone other than the sender")
        case .wrongRecipient: Phrase("the sealed route names another recipient")
        case .expired: Phrase("the sealed route has expired")
        case .keyMismatch: Phrase("the sealed route is signed by a key other than the sender's %1$@", "signPubKey")
        }
    }
}

/// A route signed with the issuer's Ed25519 key and sealed (`crypto_box_seal`) to the recipient's
/// X25519 key: `base64(crypto_box_seal(JCS({"route": record, "signature": base64(Ed25519(
/// "nearcard/sealed-route/v1" ‖ 0x00 ‖ JCS(record)))}), recipient pubKey))`.
public enum SealedRoute {
    public static let signatureDomain = "nearcard/sealed-route/v1"
    /// Largest sealed route accepted (base64 text).
    public static let maximumLength = 4096

    public static func signingInput(_ record: RouteRecord) -> [UInt8] {
        Array(signatureDomain.utf8) + [0] + JCS.canonicalize(record.json)
    }

    /// `ephemeral`: the sealed box's one-time key pair, when the caller made it ahead (else a fresh one).
    public static func seal(
        _ record: RouteRecord, signer: Ed25519.PrivateKey, to recipient: X25519.PublicKey,
        ephemeral: X25519.PrivateKey? = nil
    ) -> String {
        let inner: JSONValue = ["route": record.json, "signature": .string(Base64.encode(signer.signature(for: signingInput(record))))]
        let plain = JCS.canonicalize(inner)
        return Base64.encode(ephemeral.map { SealedBox.seal(plain, to: recipient, ephemeral: $0) } ?? SealedBox.seal(plain, to: recipient))
    }

    /// Opens and checks a sealed route: it must open with `key`, carry a valid signature by its own
    /// signPubKey, which must be `expectedSignKey` when given; be issued by `expectedIssuer` for
    /// `expectedRecipient`, and not be expired at `now`.
    public static func open(
        _ sealed: String, with key: X25519.PrivateKey, expectedIssuer: String?, expectedRecipient: String?,
        expectedSignKey: Ed25519.PublicKey?, now: Int64
    ) -> Result<RouteRecord, RouteFailure> {
        guard sealed.utf8.count <= maximumLength else { return .failure(.tooLarge(sealed.utf8.count)) }
        guard let box = try? Base64.decode(sealed) else { return .failure(.malformed("not base64")) }
        guard let plain = try? SealedBox.open(box, with: key) else { return .failure(.notForMe) }
        guard let inner = try? JSONParser(maximumDepth: 8, maximumLength: maximumLength).parse(plain),
            let routeJSON = inner["route"], let sigText = inner["signature"]?.stringValue,
            let signature = try? Base64.decode(sigText)
        else {
            return .failure(.malformed("not {route, signature}"))
        }
        let record: RouteRecord
        do { record = try RouteRecord(json: routeJSON) } catch {
            return .failure(error.kind == .limitExceeded ? .overLimit(error.message) : .malformed(error.message))
        }
        // The signature covers the record as received (canonicalised), so re-encoding cannot hide a change.
        guard record.signPubKey.isValidSignature(signature, for: Array(signatureDomain.utf8) + [0] + JCS.canonicalize(routeJSON)) else {
            return .failure(.badSignature)
        }
        if let expectedSignKey, expectedSignKey != record.signPubKey { return .failure(.keyMismatch) }
        if let expectedIssuer, expectedIssuer != record.did { return .failure(.wrongIssuer) }
        if let expectedRecipient, expectedRecipient != record.recipient { return .failure(.wrongRecipient) }
        if now >= record.expiresAt { return .failure(.expired) }
        return .success(record)
    }
}
