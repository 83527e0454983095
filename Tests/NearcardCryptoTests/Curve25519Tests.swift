import NearcardCrypto
import Testing

@Suite struct Curve25519Tests {
    /// A box sealed with a key pair made ahead is `crypto_box_seal`'s format: libsodium's own
    /// `crypto_box_seal_open` opens it, it begins with that key pair's public key, and it is the same
    /// bytes for the same key pair (nothing else random in it).
    @Test func sealingWithAKeyMadeAheadIsCryptoBoxSeal() throws {
        let recipient = X25519.PrivateKey()
        let ephemeral = X25519.PrivateKey()
        let message = Array("a sealed route, 200 bytes or so".utf8)
        let box = SealedBox.seal(message, to: recipient.publicKey, ephemeral: ephemeral)
        #expect(box.count == message.count + SealedBox.overhead)
        #expect(Array(box.prefix(32)) == ephemeral.publicKey.rawRepresentation)
        #expect(try SealedBox.open(box, with: recipient) == message)
        #expect(SealedBox.seal(message, to: recipient.publicKey, ephemeral: ephemeral) == box)
        // Anyone else's key does not open it, and a flipped bit is refused.
        #expect(throws: CryptoError.self) { try SealedBox.open(box, with: X25519.PrivateKey()) }
        var altered = box
        altered[40] ^= 1
        #expect(throws: CryptoError.self) { try SealedBox.open(altered, with: recipient) }
    }

    @Test func eachEphemeralKeyGivesAnotherBox() throws {
        let recipient = X25519.PrivateKey()
        let a = SealedBox.seal([1, 2, 3], to: recipient.publicKey, ephemeral: X25519.PrivateKey())
        let b = SealedBox.seal([1, 2, 3], to: recipient.publicKey, ephemeral: X25519.PrivateKey())
        #expect(a != b)
        #expect(try SealedBox.open(a, with: recipient) == [1, 2, 3])
        #expect(try SealedBox.open(b, with: recipient) == [1, 2, 3])
    }
}
