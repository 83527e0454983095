import NearcardCrypto
import Testing

/// SHA-256 hashes short inputs with libsodium and long ones with libcrypto: both give FIPS 180-4's
/// digests, and the same digest at every length across the switch.
@Suite struct SHA256Tests {
    @Test func fipsVectorsOnBothSidesOfTheSwitch() {
        let vectors: [([UInt8], String)] = [
            ([], "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
            (Array("abc".utf8), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
            (Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8), "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
            // One million 'a' (libcrypto's side of the switch).
            ([UInt8](repeating: 0x61, count: 1_000_000), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"),
        ]
        for (input, digest) in vectors {
            #expect(Hex.encode(SHA256.hash(input)) == digest, "\(input.count) bytes")
        }
    }

    @Test func everyLengthAgreesWithLibsodiumIncrementally() {
        // The incremental hasher is always libsodium's: compare across the threshold and a few blocks past it.
        for length in 0...700 {
            let input = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
            var hasher = SHA256.Hasher()
            hasher.update(input)
            #expect(SHA256.hash(input) == hasher.finalize(), "\(length) bytes")
        }
    }
}
