import Foundation
import NearcardCrypto
import Testing

@Suite struct KeyFileTests {
    let fast = KeyFile.SealingParameters(opsLimit: 1, memLimit: 8192 * 1024)

    @Test func unsealedRoundTrip() throws {
        let keys = IdentityKeys.generate()
        let file = try KeyFile.encodeSecrets(keys, passphrase: nil)
        #expect(try !KeyFile.isSealed(file, name: "k"))
        let back = try KeyFile.decodeSecrets(file, name: "k") { nil }
        #expect(back.publicIdentity(name: nil) == keys.publicIdentity(name: nil))
    }

    @Test func sealedRoundTripAndWrongPassphrase() throws {
        let keys = IdentityKeys.generate()
        let file = try KeyFile.encodeSecrets(keys, passphrase: SecureBytes(Array("correct horse".utf8)), parameters: fast)
        #expect(try KeyFile.isSealed(file, name: "k"))
        // The sealed file holds no key bytes in the clear.
        let text = String(decoding: file.bytes, as: UTF8.self)
        #expect(!text.contains(Base64.urlEncode(keys.ed25519.seed.bytes)))
        let back = try KeyFile.decodeSecrets(file, name: "k") { SecureBytes(Array("correct horse".utf8)) }
        #expect(back.publicIdentity(name: nil) == keys.publicIdentity(name: nil))
        #expect {
            try KeyFile.decodeSecrets(file, name: "k") { SecureBytes(Array("wrong".utf8)) }
        } throws: { ($0 as? CryptoError)?.kind == .wrongPassphrase }
    }

    /// Changing the sealing parameters (e.g. to weaken the KDF) breaks decryption: they are authenticated.
    @Test func sealingParametersAreAuthenticated() throws {
        let keys = IdentityKeys.generate()
        let file = try KeyFile.encodeSecrets(keys, passphrase: SecureBytes(Array("pw".utf8)), parameters: fast)
        let text = String(decoding: file.bytes, as: UTF8.self).replacingOccurrences(of: "\"opslimit\": 1", with: "\"opslimit\": 2")
        #expect(text != String(decoding: file.bytes, as: UTF8.self))
        #expect {
            try KeyFile.decodeSecrets(SecureBytes(Array(text.utf8)), name: "k") { SecureBytes(Array("pw".utf8)) }
        } throws: { ($0 as? CryptoError)?.kind == .wrongPassphrase }
    }

    @Test func truncatedOrForeignFilesNameTheFile() throws {
        let file = try KeyFile.encodeSecrets(IdentityKeys.generate(), passphrase: nil)
        let truncated = SecureBytes(file.bytes.prefix(file.count / 2))
        for bad in [truncated, SecureBytes(Array("-----BEGIN OPENSSH PRIVATE KEY-----".utf8)), SecureBytes(Array("{\"format\":\"other\"}".utf8))] {
            #expect {
                try KeyFile.decodeSecrets(bad, name: "/home/x/secret-keys.json") { nil }
            } throws: { e in
                guard let e = e as? CryptoError else { return false }
                return e.kind == .keyFile && e.message.contains("/home/x/secret-keys.json")
            }
        }
    }

    @Test func identityFileRoundTrip() throws {
        let identity = IdentityKeys.generate().publicIdentity(name: "Ada Lovelace")
        let back = try KeyFile.decodeIdentity(KeyFile.encodeIdentity(identity), name: "identity.json")
        #expect(back == identity)
        #expect(back.fingerprint.count == 16)
    }
}

@Suite struct PrimitiveTests {
    @Test func p256SignVerifyRawAndDER() throws {
        let key = P256.PrivateKey()
        let msg = Array("hello".utf8)
        let sig = try key.signature(for: msg)
        #expect(sig.count == 64)
        #expect(key.publicKey.isValidSignature(sig, for: msg))
        #expect(key.publicKey.isValidSignature(ECDSASignature.der(fromRaw: sig), for: msg))
        #expect(!key.publicKey.isValidSignature(sig, for: Array("hellp".utf8)))
        // The private scalar round-trips.
        let again = try P256.PrivateKey(rawRepresentation: key.rawRepresentation)
        #expect(again.publicKey == key.publicKey)
        #expect(throws: CryptoError.self) { try P256.PrivateKey(rawRepresentation: SecureBytes([UInt8](repeating: 0, count: 32))) }
        #expect(throws: CryptoError.self) { try P256.PrivateKey(rawRepresentation: SecureBytes([UInt8](repeating: 0xFF, count: 32))) }
    }

    @Test func sealedBoxOpensOnlyForTheRecipient() throws {
        let alice = X25519.PrivateKey()
        let eve = X25519.PrivateKey()
        let box = SealedBox.seal(Array("route".utf8), to: alice.publicKey)
        #expect(try SealedBox.open(box, with: alice) == Array("route".utf8))
        #expect(throws: CryptoError.self) { try SealedBox.open(box, with: eve) }
        var altered = box
        altered[altered.count - 1] ^= 1
        #expect(throws: CryptoError.self) { try SealedBox.open(altered, with: alice) }
    }

    @Test func secretsNeverShowInDescriptions() {
        let keys = IdentityKeys.generate()
        let described = "\(keys.p256) \(keys.x25519) \(keys.ed25519) \(keys.ed25519.seed)"
        #expect(!described.contains(Base64.encode(keys.ed25519.seed.bytes)))
        #expect(!described.contains(Base64.encode(keys.x25519.secret.bytes)))
        #expect(!described.contains(Base64.encode(keys.p256.rawRepresentation.bytes)))
    }
}
