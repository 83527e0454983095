/// The on-disk formats of an identity (docs/SECURITY.md describes them):
///
/// `identity.json` (public):
/// `{"format":"nearcard-identity","version":1,"did":…,"pubKey":b64,"signPubKey":b64,"name":…|null}`
///
/// `secret-keys.json` (mode 0600), unsealed:
/// `{"format":"nearcard-secret-keys","version":1,"protection":"none","keys":{"p256":b64url,"x25519":b64url,"ed25519":b64url}}`
/// or sealed under a passphrase:
/// `{"format":"nearcard-secret-keys","version":1,"protection":"argon2id-xchacha20poly1305",
///   "kdf":{"opslimit":n,"memlimit":n,"salt":b64url},"nonce":b64url,"ciphertext":b64url}`
/// where the plaintext is the JCS form of the `keys` object and the associated data is the JCS
/// form of the file without `nonce` and `ciphertext` (so its parameters cannot be swapped).
public enum KeyFile {
    public static let identityFormat = "nearcard-identity"
    public static let secretFormat = "nearcard-secret-keys"
    public static let version = 1
    public static let sealedProtection = "argon2id-xchacha20poly1305"
    /// Key files are a few hundred bytes; anything over this is not one of ours.
    public static let maximumLength = 64 * 1024

    // MARK: identity.json

    public static func encodeIdentity(_ identity: PublicIdentity) -> [UInt8] {
        var o = JSONObject()
        o["format"] = .string(identityFormat)
        o["version"] = .number(Double(version))
        o["did"] = .string(identity.did)
        o["pubKey"] = .string(Base64.encode(identity.pubKey.rawRepresentation))
        o["signPubKey"] = .string(Base64.encode(identity.signPubKey.rawRepresentation))
        o["name"] = identity.name.map { .string($0) } ?? .null
        return Array((JSONValue.object(o).prettyText + "\n").utf8)
    }

    /// Parses identity.json. `name` is the file's path, used in the error messages.
    public static func decodeIdentity(_ bytes: [UInt8], name: String) throws(CryptoError) -> PublicIdentity {
        let o = try object(bytes, name: name, format: identityFormat)
        do throws(CryptoError) {
            let didKey = try DIDKey(parsing: try string(o, "did", name))
            guard didKey.keyType == .p256 else { throw CryptoError(.keyFile, Phrase("%1$@: the DID is not a P-256 did:key", name)) }
            let pub = try X25519.PublicKey(rawRepresentation: try Base64.decode(try string(o, "pubKey", name)))
            let sign = try Ed25519.PublicKey(rawRepresentation: try Base64.decode(try string(o, "signPubKey", name)))
            let displayName = o["name"]?.stringValue
            return PublicIdentity(didKey: didKey, pubKey: pub, signPubKey: sign, name: displayName)
        } catch  where error.kind == .keyFile {
            throw error
        } catch {
            throw CryptoError(.keyFile, Phrase("%1$@ is damaged: %2$@", name, error.phrase))
        }
    }

    // MARK: secret-keys.json

    /// Parameters for sealing; tests may lower the Argon2id limits, files record what was used.
    public struct SealingParameters: Sendable {
        public var opsLimit: UInt64
        public var memLimit: Int
        public init(opsLimit: UInt64 = Argon2id.defaultOpsLimit, memLimit: Int = Argon2id.defaultMemLimit) {
            self.opsLimit = opsLimit
            self.memLimit = memLimit
        }
    }

    /// Encodes the secret keys, sealed when a passphrase is given. The result holds secrets: the
    /// caller writes it to a 0600 file and drops it.
    public static func encodeSecrets(_ keys: IdentityKeys, passphrase: SecureBytes?, parameters: SealingParameters = .init()) throws(CryptoError) -> SecureBytes
    {
        let inner = secretKeysObject(keys)
        var file = JSONObject()
        file["format"] = .string(secretFormat)
        file["version"] = .number(Double(version))
        guard let passphrase else {
            file["protection"] = "none"
            file["keys"] = inner
            var text = Array((JSONValue.object(file).prettyText + "\n").utf8)
            defer { text.wipe() }
            return SecureBytes(text)
        }
        let salt = Sodium.randomBytes(Argon2id.saltByteCount)
        let nonce = Sodium.randomBytes(XChaChaPoly.nonceByteCount)
        file["protection"] = .string(sealedProtection)
        file["kdf"] = [
            "opslimit": .number(Double(parameters.opsLimit)), "memlimit": .number(Double(parameters.memLimit)),
            "salt": .string(Base64.urlEncode(salt)),
        ]
        let aad = JCS.canonicalize(.object(file))
        let key = try Argon2id.deriveKey(passphrase: passphrase, salt: salt, opsLimit: parameters.opsLimit, memLimit: parameters.memLimit)
        var plaintext = JCS.canonicalize(inner)
        defer { plaintext.wipe() }
        let ciphertext = try XChaChaPoly.seal(plaintext, key: key, nonce: nonce, authenticating: aad)
        file["nonce"] = .string(Base64.urlEncode(nonce))
        file["ciphertext"] = .string(Base64.urlEncode(ciphertext))
        return SecureBytes(Array((JSONValue.object(file).prettyText + "\n").utf8))
    }

    /// Whether a secret key file is sealed (so the caller knows to ask for the passphrase).
    public static func isSealed(_ bytes: SecureBytes, name: String) throws(CryptoError) -> Bool {
        let o = try bytes.withUnsafeBytes { b throws(CryptoError) in try object(Array(b), name: name, format: secretFormat) }
        switch o["protection"]?.stringValue {
        case "none": return false
        case sealedProtection: return true
        default: throw CryptoError(.keyFile, Phrase("%1$@ uses a protection Nearcard does not know; it was not written by this version of Nearcard", name))
        }
    }

    /// Decodes (and, when sealed, opens) a secret key file.
    public static func decodeSecrets(_ bytes: SecureBytes, name: String, passphrase: () throws -> SecureBytes?) throws -> IdentityKeys {
        var raw = bytes.bytes
        defer { raw.wipe() }
        let o = try object(raw, name: name, format: secretFormat)
        switch o["protection"]?.stringValue {
        case "none":
            guard let keys = o["keys"] else { throw CryptoError(.keyFile, Phrase("%1$@ is damaged: it has no \"keys\"", name)) }
            return try keysFrom(keys, name: name)
        case sealedProtection:
            guard let kdf = o["kdf"]?.objectValue,
                let ops = kdf["opslimit"]?.integerValue, let mem = kdf["memlimit"]?.integerValue, ops > 0, mem > 0,
                let saltText = kdf["salt"]?.stringValue, let salt = try? Base64.urlDecode(saltText),
                let nonceText = o["nonce"]?.stringValue, let nonce = try? Base64.urlDecode(nonceText),
                let ctText = o["ciphertext"]?.stringValue, let ciphertext = try? Base64.urlDecode(ctText)
            else {
                throw CryptoError(.keyFile, Phrase("%1$@ is damaged: its sealing parameters are missing or malformed", name))
            }
            var header = o
            header["nonce"] = nil
            header["ciphertext"] = nil
            let aad = JCS.canonicalize(.object(header))
            guard let pass = try passphrase() else {
                throw CryptoError(.wrongPassphrase, Phrase("%1$@ is sealed with a passphrase and none was given", name))
            }
            let key: SecureBytes
            do { key = try Argon2id.deriveKey(passphrase: pass, salt: salt, opsLimit: UInt64(ops), memLimit: Int(mem)) } catch {
                throw CryptoError(.keyFile, Phrase("%1$@: %2$@", name, error.phrase))
            }
            let plain: SecureBytes
            do { plain = try XChaChaPoly.open(ciphertext, key: key, nonce: nonce, authenticating: aad) } catch {
                throw CryptoError(.wrongPassphrase, Phrase("the passphrase does not open %1$@ (wrong passphrase, or the file was altered)", name))
            }
            let inner = try plain.withUnsafeBytes { b throws(CryptoError) in
                do { return try JSONParser.parse(Array(b)) } catch {
                    throw CryptoError(.keyFile, Phrase("%1$@ is damaged: its sealed content is not JSON", name))
                }
            }
            return try keysFrom(inner, name: name)
        default:
            throw CryptoError(.keyFile, Phrase("%1$@ uses a protection Nearcard does not know; it was not written by this version of Nearcard", name))
        }
    }

    private static func secretKeysObject(_ keys: IdentityKeys) -> JSONValue {
        // The base64 strings are secrets too; they live only as long as this encoding.
        [
            "p256": .string(Base64.urlEncode(keys.p256.rawRepresentation.bytes)),
            "x25519": .string(Base64.urlEncode(keys.x25519.secret.bytes)),
            "ed25519": .string(Base64.urlEncode(keys.ed25519.seed.bytes)),
        ]
    }

    private static func keysFrom(_ value: JSONValue, name: String) throws(CryptoError) -> IdentityKeys {
        func secret(_ k: String) throws(CryptoError) -> SecureBytes {
            guard let text = value[k]?.stringValue, var raw = try? Base64.urlDecode(text) else {
                throw CryptoError(.keyFile, Phrase("%1$@ is damaged: the %2$@ key is missing or not base64url", name, k))
            }
            defer { raw.wipe() }
            return SecureBytes(raw)
        }
        do throws(CryptoError) {
            return IdentityKeys(
                p256: try P256.PrivateKey(rawRepresentation: try secret("p256")),
                x25519: try X25519.PrivateKey(secret: try secret("x25519")),
                ed25519: try Ed25519.PrivateKey(seed: try secret("ed25519")))
        } catch  where error.kind == .keyFile {
            throw error
        } catch {
            throw CryptoError(.keyFile, Phrase("%1$@ is damaged: %2$@", name, error.phrase))
        }
    }

    private static func object(_ bytes: [UInt8], name: String, format: String) throws(CryptoError) -> JSONObject {
        guard bytes.count <= maximumLength else {
            throw CryptoError(.keyFile, Phrase("%1$@ is %2$@ bytes, too large to be a Nearcard key file", name, String(bytes.count)))
        }
        guard let value = try? JSONParser(maximumDepth: 8).parse(bytes), let o = value.objectValue else {
            throw CryptoError(.keyFile, Phrase("%1$@ is not a Nearcard key file (not JSON: truncated or foreign); it was left untouched", name))
        }
        guard o["format"]?.stringValue == format else {
            throw CryptoError(
                .keyFile,
                format == identityFormat
                    ? Phrase("%1$@ is not a Nearcard identity file (its \"format\" is not \"%2$@\"); it was left untouched", name, format)
                    : Phrase("%1$@ is not a Nearcard secret key file (its \"format\" is not \"%2$@\"); it was left untouched", name, format)
            )
        }
        guard o["version"]?.integerValue == Int64(version) else {
            throw CryptoError(
                .keyFile,
                o["version"].map { Phrase("%1$@ has version %2$@; this Nearcard reads version %3$@", name, $0.compactText, String(version)) }
                    ?? Phrase("%1$@ has version none; this Nearcard reads version %2$@", name, String(version)))
        }
        return o
    }

    private static func string(_ o: JSONObject, _ key: String, _ name: String) throws(CryptoError) -> String {
        guard let s = o[key]?.stringValue else { throw CryptoError(.keyFile, Phrase("%1$@ is damaged: \"%2$@\" is missing", name, key)) }
        return s
    }
}
