public import NearcardCrypto

/// A selective-disclosure proof the recipient can check, in the SD-JWT form of RFC 9901:
///
///     <issuer-signed JWT> ~ <disclosure> ~ … ~ <disclosure> ~
///
/// The JWT (ES256, signed with the sender's DID key, `typ` `nearcard-card+sd-jwt`) carries
/// `{"iss": did, "iat": t, "_sd_alg": "sha-256", "_sd": [digests, sorted]}`. Each disclosure is
/// base64url(JCS([salt, field, value])) with a fresh 128-bit salt; its digest is
/// base64url(SHA-256(ASCII(disclosure))). Only the disclosed fields' disclosures are attached.
///
/// How many digests, and what they commit to, depends on the exchange version (docs/PROTOCOL.md §9):
/// - **version 2** (and QR codes): one salted digest for each of the seven version-2 fields, present
///   or not (an absent one commits to `null`); a recipient learns of the hidden fields only that there
///   are `7 − disclosed` of them. A disclosure naming any other field is refused.
/// - **version 3**: exactly `slots` (16) digests: one for each field disclosed, random decoys for the
///   rest, so the count says nothing of what a person shares and a field added later needs no new
///   version. A disclosure naming a field the recipient does not know is set aside (`Disclosed.unknown`),
///   not refused.
public enum SelectiveDisclosure {
    /// The digests of a version-3 proof: real ones for the fields disclosed, decoys for the rest.
    public static let slots = 16

    /// How many digests a proof of exchange `version` holds.
    public static func digestCount(version: Int) -> Int { version >= 3 ? slots : CardField.fields(ofVersion: 2).count }

    public static let typ = "nearcard-card+sd-jwt"
    public static let saltByteCount = 16
    /// Largest SD-JWT accepted (it is carried inside a payload or a QR code).
    public static let maximumLength = 16 * 1024
    /// Largest disclosure accepted, decoded: the JSON `[salt, field, value]`.
    public static let maximumDisclosureLength = 8192

    /// Issues a proof of `card` disclosing `fields` (those the card has and `version` carries).
    /// `extraClaims` (for instance `exp` and `jti` in a QR code) are signed with the digests.
    public static func issue(
        card: Card, disclosing fields: Set<CardField>, signer: P256.PrivateKey, issuedAt: Int64,
        extraClaims: JSONObject = [:], version: Int = 2
    ) throws(CryptoError) -> String {
        let did = signer.didKey.did
        var digests: [String] = []
        var disclosures: [String] = []
        let carried = CardField.fields(ofVersion: version)
        // Version 2 commits to every field it knows; version 3 only to those disclosed.
        let committed = version >= 3 ? carried.filter { fields.contains($0) && card.value(of: $0) != nil } : carried
        precondition(committed.count <= digestCount(version: version))
        // Every salt from one draw of the CSPRNG (one system call, not seven), and the decoys from another.
        var salts = Sodium.randomBytes(saltByteCount * committed.count)
        defer { salts.wipe() }
        for (i, field) in committed.enumerated() {
            let value = card.value(of: field)
            let salt = Base64.urlEncode(salts[(i * saltByteCount)..<((i + 1) * saltByteCount)])
            let disclosure = makeDisclosure(salt: salt, field: field, value: value ?? .null)
            digests.append(digest(of: disclosure))
            if fields.contains(field), value != nil { disclosures.append(disclosure) }
        }
        // A decoy is 32 random bytes in a digest's form: nothing tells it from a real one (RFC 9901 §4.2.5).
        let decoys = digestCount(version: version) - digests.count
        let random = Sodium.randomBytes(decoys * SHA256.byteCount)
        for i in 0..<decoys { digests.append(Base64.urlEncode(random[(i * SHA256.byteCount)..<((i + 1) * SHA256.byteCount)])) }
        var claims: JSONObject = extraClaims
        claims["iss"] = .string(did)
        claims["iat"] = .number(Double(issuedAt))
        claims["_sd_alg"] = "sha-256"
        claims["_sd"] = .array(digests.sorted().map { .string($0) })
        let jwt = try CompactJWS.sign(payload: JCS.canonicalize(.object(claims)), header: ["typ": .string(typ)], signer: signer)
        return ([jwt] + disclosures).joined(separator: "~") + "~"
    }

    /// The largest proof a receiver of exchange `version` accepts: version 3 has room for a photo (§9).
    public static func maximumLength(version: Int) -> Int { version >= 3 ? 48 * 1024 : maximumLength }
    /// The largest disclosure, decoded, a receiver of exchange `version` accepts.
    public static func maximumDisclosureLength(version: Int) -> Int { version >= 3 ? 24 * 1024 : maximumDisclosureLength }
    /// The largest `card` message (one frame, docs/PROTOCOL.md §4), and what a card message holds besides
    /// the proof and the card: the sealed route (at most 4,096 bytes, base64), keys, nonce, signature,
    /// bindings and a 140-character message, with room to spare.
    static let maximumCardMessage = 65_519
    static let cardMessageBesides = 8 * 1024

    /// Why `card` could never be exchanged, or nil when it can, in every version this node speaks: the
    /// proof disclosing every field a version carries must be one its receivers accept (at most
    /// `maximumLength(version:)` bytes, each disclosure at most `maximumDisclosureLength(version:)`), and
    /// the card message must fit one frame. The reason names the field that takes the most room.
    public static func exchangeProblem(_ card: Card) -> String? {
        let key = P256.PrivateKey()
        for version in ExchangeVersions.spoken.reversed() {
            let carried = CardField.fields(ofVersion: version)
            guard let proof = try? issue(card: card, disclosing: Set(carried), signer: key, issuedAt: 0, version: version) else {
                return "the card cannot be signed"
            }
            let sizes = carried.compactMap { field -> (CardField, Int)? in
                guard let value = card.value(of: field) else { return nil }
                return (field, JCS.canonicalize([.string(String(repeating: "A", count: 22)), .string(field.rawValue), value]).count)
            }
            guard let (largest, bytes) = sizes.max(by: { $0.1 < $1.1 }) else { return nil }
            let (maxDisclosure, maxProof) = (maximumDisclosureLength(version: version), maximumLength(version: version))
            let older = version < ExchangeVersions.highest ? " whose Nearcard is older (exchange version \(version))" : ""
            if bytes > maxDisclosure {
                return
                    "its \(largest.rawValue) would be \(bytes) bytes in an exchange, and a peer\(older) accepts at most \(maxDisclosure) for one field: shorten or remove some of it"
            }
            if proof.utf8.count > maxProof {
                return
                    "it would take \(proof.utf8.count) bytes in an exchange, and a peer\(older) accepts at most \(maxProof): shorten \(largest.rawValue) (\(bytes) bytes), the largest field"
            }
            let message = proof.utf8.count + card.filtered(to: Set(carried)).json.canonicalText.utf8.count + cardMessageBesides
            if message > maximumCardMessage {
                return
                    "its card message would be about \(message) bytes, and one message holds at most \(maximumCardMessage): shorten \(largest.rawValue) (\(bytes) bytes), the largest field"
            }
            if case .failure(let why) = verify(proof, issuer: key.didKey, version: version) { return "a peer would refuse it: \(why)" }
        }
        return nil
    }

    public static func makeDisclosure(salt: String, field: CardField, value: JSONValue) -> String {
        Base64.urlEncode(JCS.canonicalize([.string(salt), .string(field.rawValue), value]))
    }

    /// base64url(SHA-256(ASCII(disclosure))), as RFC 9901 §4.2.3 defines it.
    public static func digest(of disclosure: String) -> String {
        Base64.urlEncode(SHA256.hash(Array(disclosure.utf8)))
    }

    /// What a verified proof shows.
    public struct Disclosed: Sendable, Equatable {
        public let issuer: String
        public let issuedAt: Int64
        public let fields: [CardField: JSONValue]
        /// Version 3: disclosures of fields this node does not know (a newer peer's), by name. Their
        /// digests are signed like the others; the receiver checks them against the card and keeps nothing.
        public let unknown: [String: JSONValue]
        /// Commitments not opened: hidden fields (version 2), hidden fields and decoys (version 3).
        public let hiddenCount: Int
        /// Every signed claim (for `exp`, `jti` and other extra claims).
        public let claims: JSONObject
    }

    /// Verifies the proof of exchange `version` against the issuer's did:key; every failure says why.
    public static func verify(_ sdJWT: String, issuer: DIDKey, version: Int = 2) -> Result<Disclosed, SDProofFailure> {
        let (maxProof, maxDisclosure) = (maximumLength(version: version), maximumDisclosureLength(version: version))
        guard sdJWT.utf8.count <= maxProof else {
            return .failure(.tooLarge("the selective-disclosure proof is \(sdJWT.utf8.count) bytes; at most \(maxProof)"))
        }
        let parts = sdJWT.split(ascii: "~")
        guard parts.count >= 2, parts.last == "" else {
            return .failure(.malformed("an SD-JWT is <JWT>~<disclosure>~…~ with a trailing '~' (key-binding JWTs are not used)"))
        }
        let outcome: JWTVerifier.Outcome
        do { outcome = try JWTVerifier(now: 0, leeway: .infinity).verify(parts[0], key: issuer) } catch {
            return .failure(.malformed("the issuer-signed JWT: \(error.message)"))
        }
        guard case .valid(let header, let claims, _) = outcome else {
            if case .invalid(let f) = outcome { return .failure(.badSignature("\(f)")) }
            return .failure(.badSignature("unknown"))
        }
        guard header["typ"]?.stringValue == typ else { return .failure(.malformed("the JWT's typ is not \(typ)")) }
        guard claims["iss"]?.stringValue == issuer.did else { return .failure(.wrongIssuer) }
        guard claims["_sd_alg"]?.stringValue == "sha-256" else { return .failure(.malformed("_sd_alg must be sha-256")) }
        let count = digestCount(version: version)
        guard let sd = claims["_sd"]?.arrayValue, sd.count == count else {
            return .failure(
                .malformed(
                    version >= 3
                        ? "_sd must hold exactly \(count) digests (version \(version): the fields disclosed and decoys)"
                        : "_sd must hold one digest per card field (\(count))"))
        }
        var digests = Set<String>()
        for d in sd {
            guard let s = d.stringValue, s.utf8.count == 43, digests.insert(s).inserted else {
                return .failure(.malformed("_sd holds a malformed or repeated digest"))
            }
        }
        guard let issuedAt = claims["iat"]?.integerValue else { return .failure(.malformed("iat must be an integer (Unix seconds)")) }
        var fields: [CardField: JSONValue] = [:]
        var unknown: [String: JSONValue] = [:]
        let known = Set(CardField.fields(ofVersion: version))
        var used = Set<String>()
        for disclosure in parts[1..<(parts.count - 1)] {
            let d = digest(of: disclosure)
            guard digests.contains(d) else { return .failure(.unknownDisclosure) }
            guard used.insert(d).inserted else { return .failure(.malformed("a disclosure is repeated")) }
            guard let bytes = try? Base64.urlDecode(disclosure) else { return .failure(.malformed("a disclosure is not base64url")) }
            guard bytes.count <= maxDisclosure else {
                return .failure(.tooLarge("a disclosure is \(bytes.count) bytes; at most \(maxDisclosure)"))
            }
            let parsed: JSONValue
            do { parsed = try JSONParser(maximumDepth: 8, maximumLength: maxDisclosure).parse(bytes) } catch {
                return .failure(.malformed("a disclosure is not JSON: \(error.message)"))
            }
            guard let array = parsed.arrayValue, array.count == 3 else {
                return .failure(.malformed("a disclosure is not a JSON array [salt, name, value]"))
            }
            guard let salt = array[0].stringValue, salt.utf8.count >= 16 else {
                return .failure(.malformed("a disclosure's salt is not a string of at least 16 characters"))
            }
            guard let name = array[1].stringValue else { return .failure(.malformed("a disclosure's field name is not a string")) }
            guard let field = CardField(rawValue: name), known.contains(field) else {
                guard version >= 3 else { return .failure(.malformed("a disclosure names \"\(name)\", which is not a card field")) }
                // A newer peer's field: checked like any other, then set aside.
                guard unknown[name] == nil else { return .failure(.malformed("the field \(name) is disclosed twice")) }
                unknown[name] = array[2]
                continue
            }
            guard fields[field] == nil else { return .failure(.malformed("the field \(name) is disclosed twice")) }
            fields[field] = array[2]
        }
        return .success(
            Disclosed(
                issuer: issuer.did, issuedAt: issuedAt, fields: fields, unknown: unknown, hiddenCount: sd.count - fields.count - unknown.count,
                claims: claims))
    }
}

public enum SDProofFailure: Error, Sendable, Equatable, CustomStringConvertible {
    case malformed(String)
    /// The proof, or one disclosure, is over its byte limit.
    case tooLarge(String)
    case badSignature(String)
    case wrongIssuer
    case unknownDisclosure
    /// A disclosure of `null`: it would say the field is absent; only present fields are disclosed.
    case nullDisclosure(CardField)

    public var description: String { phrase.english }

    /// The reason as a sentence to say in a person's language.
    package var phrase: Phrase {
        switch self {
        case .malformed(let why): Phrase("the selective-disclosure proof is malformed: %1$@", why)
        case .tooLarge(let why): Phrase(verbatim: why)
        case .nullDisclosure(let f):
            Phrase("the proof discloses %1$@ as null (absent); only fields the card has are disclosed", f.rawValue)
        case .badSignature(let why): Phrase("the selective-disclosure proof's signature fails: %1$@", why)
        case .wrongIssuer: Phrase("the selective-disclosure proof was issued by another DID")
        case .unknownDisclosure: Phrase("a disclosure matches none of the proof's signed digests")
        }
    }
}
