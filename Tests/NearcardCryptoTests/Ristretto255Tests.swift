import Foundation
import NearcardCrypto
import Testing

/// The libsodium ristretto255 wrapper against RFC 9496 Appendix A (copied into
/// Tests/Vectors/psi/psi-v2.json under "rfc9496").
@Suite struct Ristretto255Tests {
    static var rfc: [String: Any] { (try! Vectors.json("psi/psi-v2.json") as! [String: Any])["rfc9496"] as! [String: Any] }

    static func scalar(_ k: UInt8) throws -> Ristretto255.Scalar {
        var bytes = [UInt8](repeating: 0, count: 32)
        bytes[0] = k
        return try Ristretto255.Scalar(secret: SecureBytes(bytes))
    }

    /// A.1: the encodings of [k]B decode, and k times the generator gives them (k = 1…15).
    @Test func multiplesOfTheGeneratorMatchRFC9496() throws {
        let multiples = (Self.rfc["multiples"] as! [String]).map { hex($0) }
        let generator = try Ristretto255.Point(rawRepresentation: multiples[1])
        for k in 1..<multiples.count {
            let expected = try Ristretto255.Point(rawRepresentation: multiples[k])
            #expect(try Self.scalar(UInt8(k)).multiply(generator) == expected, "[\(k)]B")
        }
    }

    /// A.2: every invalid encoding is refused, and so is the identity (A.1's [0]B) and a wrong length.
    @Test func invalidEncodingsAndTheIdentityAreRefused() throws {
        for bad in Self.rfc["invalid"] as! [String] {
            #expect(throws: CryptoError.self, "\(bad)") { try Ristretto255.Point(rawRepresentation: hex(bad)) }
        }
        let identity = hex((Self.rfc["multiples"] as! [String])[0])
        #expect(identity == [UInt8](repeating: 0, count: 32))
        #expect(throws: CryptoError.self) { try Ristretto255.Point(rawRepresentation: identity) }
        #expect(throws: CryptoError.self) { try Ristretto255.Point(rawRepresentation: [UInt8](repeating: 0, count: 31)) }
        #expect(throws: CryptoError.self) { try Ristretto255.Point(rawRepresentation: hex((Self.rfc["multiples"] as! [String])[1]) + [0]) }
    }

    /// A.3: hash-to-group of SHA-512(label).
    @Test func hashToGroupMatchesRFC9496() throws {
        for v in Self.rfc["hashToGroup"] as! [[String: String]] {
            let input = hex(v["input"])
            #expect(input == SHA512.hash(Array(v["label"]!.utf8)))
            #expect(try Ristretto255.Point(fromHash: input).rawRepresentation == hex(v["output"]))
        }
        #expect(throws: CryptoError.self) { try Ristretto255.Point(fromHash: [UInt8](repeating: 1, count: 32)) }
    }

    /// SHA-512 itself (FIPS 180-2 "abc"), since hash-to-group's input comes from it.
    @Test func sha512OfABC() {
        #expect(
            Hex.encode(SHA512.hash(Array("abc".utf8)))
                == "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f")
    }

    /// Scalars: zero, the group order ℓ and anything above are refused; wrong lengths too; a random
    /// one is usable, and no description shows a scalar's bytes.
    @Test func scalarsAreCanonicalNonZeroAndRedacted() throws {
        #expect(throws: CryptoError.self) { try Ristretto255.Scalar(secret: SecureBytes([UInt8](repeating: 0, count: 32))) }
        // ℓ = 2^252 + 27742317777372353535851937790883648493, little-endian.
        let order = hex("edd3f55c1a631258d69cf7a2def9de1400000000000000000000000000000010")
        #expect(throws: CryptoError.self) { try Ristretto255.Scalar(secret: SecureBytes(order)) }
        var belowOrder = order
        belowOrder[0] -= 1
        _ = try Ristretto255.Scalar(secret: SecureBytes(belowOrder))
        #expect(throws: CryptoError.self) { try Ristretto255.Scalar(secret: SecureBytes([UInt8](repeating: 0xff, count: 32))) }
        #expect(throws: CryptoError.self) { try Ristretto255.Scalar(secret: SecureBytes([1])) }

        let s = Ristretto255.Scalar.random()
        let p = Ristretto255.Point.random()
        let product = try s.multiply(p)
        #expect(product != p)
        #expect("\(s)" == "Ristretto255.Scalar(redacted)")
        // Multiplication commutes: (P·a)·b = (P·b)·a, the property PSI rests on.
        let t = Ristretto255.Scalar.random()
        #expect(try t.multiply(s.multiply(p)) == s.multiply(t.multiply(p)))
    }

    /// Random elements are valid, distinct, never the identity.
    @Test func randomElementsAreValidAndDistinct() throws {
        var seen = Set<Ristretto255.Point>()
        for _ in 0..<64 {
            let p = Ristretto255.Point.random()
            #expect(try Ristretto255.Point(rawRepresentation: p.rawRepresentation) == p)
            seen.insert(p)
        }
        #expect(seen.count == 64)
    }
}
