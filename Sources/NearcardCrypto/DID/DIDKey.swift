import Synchronization

/// A public key written as a did:key (https://w3c-ccg.github.io/did-key-spec/):
/// `did:key:` + multibase base58btc(multicodec varint ‖ raw public key).
public struct DIDKey: Sendable, Hashable, CustomStringConvertible {
    /// The key types Nearcard resolves, with their multicodec codes.
    public enum KeyType: String, Sendable, CaseIterable {
        case p256 = "P-256"
        case p384 = "P-384"
        case p521 = "P-521"
        case ed25519 = "Ed25519"
        case x25519 = "X25519"

        public var multicodec: UInt64 {
            switch self {
            case .p256: 0x1200
            case .p384: 0x1201
            case .p521: 0x1202
            case .ed25519: 0xED
            case .x25519: 0xEC
            }
        }

        /// The raw key length did:key carries (compressed points for the NIST curves).
        public var keyByteCount: Int {
            switch self {
            case .p256: 33
            case .p384: 49
            case .p521: 67
            case .ed25519, .x25519: 32
            }
        }

        var curve: ECCurve? {
            switch self {
            case .p256: .p256
            case .p384: .p384
            case .p521: .p521
            case .ed25519, .x25519: nil
            }
        }

        init?(multicodec: UInt64) {
            guard let t = KeyType.allCases.first(where: { $0.multicodec == multicodec }) else { return nil }
            self = t
        }
    }

    /// The longest did:key accepted (a P-521 did:key is 101 characters).
    public static let maximumLength = 256

    public let keyType: KeyType
    /// The raw key as did:key carries it (compressed SEC1 for the NIST curves).
    public let publicKeyBytes: [UInt8]
    /// For the NIST curves, the libcrypto key built when the point was checked, kept so that each
    /// verification does not decompress the point and build the key again.
    private let ecKey: ECPublicKey?

    // Equality and hashing are of the key itself (the cached libcrypto object is not part of it).
    public static func == (a: DIDKey, b: DIDKey) -> Bool { a.keyType == b.keyType && a.publicKeyBytes == b.publicKeyBytes }
    public func hash(into hasher: inout Hasher) {
        hasher.combine(keyType)
        hasher.combine(publicKeyBytes)
    }

    /// `z…`: the method-specific identifier, also the fragment of the key's verification method
    /// (encoded once: a session reads the DID many times).
    public let multibaseValue: String

    private static func multibase(_ keyType: KeyType, _ publicKeyBytes: [UInt8]) -> String {
        Multibase.encodeBase58btc(Varint.encode(keyType.multicodec) + publicKeyBytes)
    }

    public var did: String { "did:key:" + multibaseValue }

    /// `<did>#<multibase>`: the verification method id (and a JWS `kid`).
    public var keyID: String { did + "#" + multibaseValue }

    public var description: String { did }

    /// Validated key bytes: NIST points are decompressed and checked on the curve.
    public init(keyType: KeyType, publicKeyBytes: [UInt8]) throws(CryptoError) {
        guard publicKeyBytes.count == keyType.keyByteCount else {
            throw CryptoError(
                .didKey(.invalidPublicKeyLength),
                Phrase(
                    "%1$@: a %2$@ did:key carries %3$@ key bytes, this one %4$@", "invalidPublicKeyLength", keyType.rawValue,
                    String(keyType.keyByteCount), String(publicKeyBytes.count)))
        }
        var ecKey: ECPublicKey?
        if let curve = keyType.curve {
            do { ecKey = try ECPublicKey(curve: curve, sec1: publicKeyBytes) } catch {
                throw CryptoError(.didKey(.invalidPublicKey), Phrase("%1$@: the key bytes are not a point on %2$@", "invalidPublicKey", curve.rawValue))
            }
        }
        if keyType == .ed25519 {
            // A did:key must name a usable key: the point must decode (its X25519 form exists).
            do { _ = try Ed25519.PublicKey(rawRepresentation: publicKeyBytes).x25519() } catch {
                throw CryptoError(.didKey(.invalidPublicKey), Phrase("%1$@: the key bytes are not an Ed25519 point", "invalidPublicKey"))
            }
        }
        self.keyType = keyType
        self.publicKeyBytes = publicKeyBytes
        self.ecKey = ecKey
        self.multibaseValue = Self.multibase(keyType, publicKeyBytes)
    }

    public init(_ key: ECPublicKey) {
        let type: KeyType =
            switch key.curve {
            case .p256: .p256
            case .p384: .p384
            case .p521: .p521
            }
        self.keyType = type
        self.publicKeyBytes = key.compressedRepresentation
        self.ecKey = key
        self.multibaseValue = Self.multibase(type, publicKeyBytes)
    }

    public init(_ key: Ed25519.PublicKey) {
        keyType = .ed25519
        publicKeyBytes = key.rawRepresentation
        ecKey = nil
        multibaseValue = Self.multibase(keyType, publicKeyBytes)
    }

    public init(_ key: X25519.PublicKey) {
        keyType = .x25519
        publicKeyBytes = key.rawRepresentation
        ecKey = nil
        multibaseValue = Self.multibase(keyType, publicKeyBytes)
    }

    /// DIDs parsed recently, by their exact text: a session reads its peer's DID in the hello, the
    /// card and the card's SD-JWT, and decompressing the point and building the libcrypto key is
    /// most of a parse. Only keys that parsed and checked are kept; at `parsedCacheLimit` the cache
    /// starts over.
    private static let parsed = Mutex<[String: DIDKey]>([:])
    public static let parsedCacheLimit = 256

    /// Parses a DID (`did:key:z…`, optionally `did:key:1:z…`). Errors carry the spec's error names.
    public init(parsing text: String) throws(CryptoError) {
        guard text.utf8.count <= DIDKey.maximumLength else {
            throw CryptoError(.didKey(.invalidDid), Phrase("%1$@: longer than %2$@ characters", "invalidDid", String(DIDKey.maximumLength)))
        }
        if let known = Self.parsed.withLock({ $0[text] }) {
            self = known
            return
        }
        try self.init(uncachedParsing: text)
        let key = self
        Self.parsed.withLock { cache in
            if cache.count >= Self.parsedCacheLimit { cache.removeAll(keepingCapacity: true) }
            cache[text] = key
        }
    }

    private init(uncachedParsing text: String) throws(CryptoError) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3 || parts.count == 4, parts[0] == "did" else {
            throw CryptoError(.didKey(.invalidDid), Phrase("%1$@: \"%2$@\" is not of the form did:key:<multibase>", "invalidDid", Self.clip(text)))
        }
        guard parts[1] == "key" else {
            throw CryptoError(.didKey(.invalidDid), Phrase("%1$@: the method is \"%2$@\", not \"key\"", "invalidDid", Self.clip(String(parts[1]))))
        }
        if parts.count == 4 {
            guard parts[2] == "1" else {
                throw CryptoError(
                    .didKey(.invalidDid), Phrase("%1$@: did:key version \"%2$@\" is not supported (only 1)", "invalidDid", Self.clip(String(parts[2]))))
            }
        }
        let value = String(parts[parts.count - 1])
        if value.contains("#") || value.contains("?") || value.contains("/") {
            throw CryptoError(.didKey(.invalidDid), Phrase("%1$@: a DID has no path, query or fragment (this is a DID URL)", "invalidDid"))
        }
        guard value.first == "z" else {
            throw CryptoError(.didKey(.invalidDid), Phrase("%1$@: the multibase value must start with 'z' (base58btc)", "invalidDid"))
        }
        let decoded: [UInt8]
        do { decoded = try Multibase.decodeBase58btc(value) } catch {
            throw CryptoError(.didKey(.invalidDid), Phrase("%1$@: %2$@", "invalidDid", error.phrase))
        }
        guard let (codec, prefixLength) = Varint.decode(decoded) else {
            throw CryptoError(.didKey(.invalidDid), Phrase("%1$@: the decoded value does not start with a multicodec varint", "invalidDid"))
        }
        guard let type = KeyType(multicodec: codec) else {
            throw CryptoError(
                .didKey(.unsupportedPublicKeyType),
                Phrase(
                    "%1$@: multicodec 0x%2$@ is not P-256, P-384, P-521, Ed25519 or X25519", "unsupportedPublicKeyType", String(codec, radix: 16)))
        }
        try self.init(keyType: type, publicKeyBytes: Array(decoded[prefixLength...]))
    }

    /// Parses a DID URL such as a JWS `kid` (`did:key:z…#fragment`); returns the key and the fragment.
    public static func parse(didURL text: String) throws(CryptoError) -> (key: DIDKey, fragment: String?) {
        guard let hash = text.firstIndex(of: "#") else { return (try DIDKey(parsing: text), nil) }
        let key = try DIDKey(parsing: String(text[..<hash]))
        let fragment = String(text[text.index(after: hash)...])
        guard !fragment.isEmpty else {
            throw CryptoError(.didKey(.invalidDidUrl), Phrase("%1$@: the fragment after '#' is empty", "invalidDidUrl"))
        }
        return (key, fragment)
    }

    /// The key as a NIST curve point, when it is one.
    public func ecPublicKey() -> ECPublicKey? { ecKey }

    public func ed25519PublicKey() -> Ed25519.PublicKey? {
        guard keyType == .ed25519 else { return nil }
        return try? Ed25519.PublicKey(rawRepresentation: publicKeyBytes)
    }

    public func x25519PublicKey() -> X25519.PublicKey? {
        guard keyType == .x25519 else { return nil }
        return try? X25519.PublicKey(rawRepresentation: publicKeyBytes)
    }

    static func clip(_ s: String) -> String { s.count > 40 ? String(s.prefix(40)) + "…" : s }
}
