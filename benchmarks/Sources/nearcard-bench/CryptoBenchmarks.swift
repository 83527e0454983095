import CBaseline
import Foundation
import NearcardCrypto

/// Issue 2: each wrapper against the same primitive called straight through its C library.
func cryptoBenchmarks() throws -> [Comparison] {
    precondition(cb_init() == 0)
    var rows: [Comparison] = []
    let message = [UInt8](repeating: 0x5A, count: 256)

    // ECDSA P-256 (OpenSSL). The same key on both sides.
    let p256 = P256.PrivateKey()
    let scalar = p256.rawRepresentation.bytes
    let cKey = cb_p256_key_from_scalar(scalar)
    var der = [UInt8](repeating: 0, count: 80)
    rows.append(
        compare("ECDSA P-256 sign", ours: "P256.PrivateKey.signature(for:)", floor: "EVP_DigestSign") {
            blackHole(try! p256.signature(for: message))
        } floor: {
            var len = 80
            _ = cb_p256_sign(cKey, message, message.count, &der, &len)
        })
    let rawSig = try p256.signature(for: message)
    let derSig = ECDSASignature.der(fromRaw: rawSig)
    rows.append(
        compare("ECDSA P-256 verify", ours: "ECPublicKey.isValidRawSignature", floor: "EVP_DigestVerify") {
            precondition(p256.publicKey.isValidRawSignature(rawSig, for: message))
        } floor: {
            precondition(cb_p256_verify(cKey, message, message.count, derSig, derSig.count) == 0)
        })

    // Ed25519 (libsodium).
    let ed = Ed25519.PrivateKey()
    let edSK = ed.seed.bytes + ed.publicKey.rawRepresentation
    var sig = [UInt8](repeating: 0, count: 64)
    rows.append(
        compare("Ed25519 sign", ours: "Ed25519.PrivateKey.signature(for:)", floor: "crypto_sign_detached") {
            blackHole(ed.signature(for: message))
        } floor: {
            _ = cb_ed25519_sign(edSK, message, message.count, &sig)
        })
    let edSig = ed.signature(for: message)
    rows.append(
        compare("Ed25519 verify", ours: "Ed25519.PublicKey.isValidSignature", floor: "crypto_sign_verify_detached") {
            precondition(ed.publicKey.isValidSignature(edSig, for: message))
        } floor: {
            precondition(cb_ed25519_verify(ed.publicKey.rawRepresentation, message, message.count, edSig) == 0)
        })

    // X25519 (libsodium).
    let a = X25519.PrivateKey()
    let b = X25519.PrivateKey()
    let aSecret = a.secret.bytes
    var shared = [UInt8](repeating: 0, count: 32)
    rows.append(
        compare("X25519 shared secret", ours: "X25519.PrivateKey.sharedSecret(with:)", floor: "crypto_scalarmult") {
            blackHole(try! a.sharedSecret(with: b.publicKey))
        } floor: {
            _ = cb_x25519(aSecret, b.publicKey.rawRepresentation, &shared)
        })

    // Sealed box (libsodium), a 200-byte route-sized message.
    let route = [UInt8](repeating: 7, count: 200)
    var sealedOut = [UInt8](repeating: 0, count: route.count + SealedBox.overhead)
    rows.append(
        compare("sealed box seal (200 B)", ours: "SealedBox.seal", floor: "crypto_box_seal") {
            blackHole(SealedBox.seal(route, to: b.publicKey))
        } floor: {
            _ = cb_seal(route, route.count, b.publicKey.rawRepresentation, &sealedOut)
        })
    let sealed = SealedBox.seal(route, to: b.publicKey)
    let bSecret = b.secret.bytes
    var opened = [UInt8](repeating: 0, count: route.count)
    rows.append(
        compare("sealed box open (200 B)", ours: "SealedBox.open", floor: "crypto_box_seal_open") {
            blackHole(try! SealedBox.open(sealed, with: b))
        } floor: {
            precondition(cb_seal_open(sealed, sealed.count, b.publicKey.rawRepresentation, bSecret, &opened) == 0)
        })

    // JCS: no C library does RFC 8785, so the floor is Foundation's JSONSerialization
    // (parse + serialise with sorted keys) on the same ~1 KB card-payload-shaped document.
    let document = Array(sampleDocument.utf8)
    let data = Data(document)
    rows.append(
        compare("JCS canonicalise (1 KB)", ours: "JCS.canonicalize(jsonText:)", floor: "JSONSerialization .sortedKeys") {
            blackHole(try! JCS.canonicalize(jsonText: document))
        } floor: {
            let o = try! JSONSerialization.jsonObject(with: data)
            blackHole(try! JSONSerialization.data(withJSONObject: o, options: [.sortedKeys, .withoutEscapingSlashes]))
        })
    return rows
}

let sampleDocument = """
    {"senderDID":"did:key:zDnaerDaTF5BXEavCrfRZEk316dpbLsfPDZ3WJ5hRTPFU2169","timestamp":1795000000,
     "cardFields":{"name":"Ada Lovelace","company":"Analytical Engines Ltd","title":"Programmer",
       "email":"ada@example.org","phone":"+44 20 7946 0000",
       "socialNetworks":[{"platform":"mastodon","username":"ada","url":"https://example.social/@ada"}],
       "skills":[{"name":"Mathematics","category":"science","proficiency":"expert"},{"name":"Poetry","category":"arts","proficiency":"advanced"}]},
     "receiver":"did:key:zDnaeTiq1PdzvZXUaMdezchcMJQpBdH2VN4pgrrEhMCCbmwSb","nonce":"q0vJ2aYx1mN8bC3dE4fG5h",
     "pubKey":"WIxijcvM77y1c+/uhZvDmaEbc9AVN18qEXmQ/dZFjV0=","signPubKey":"dXLHLctc0QeGNsexLY4C4cUxlGVDaKaqPJlWt4F8I+g=",
     "sdProof":{"digests":["X9yH0Ajrdm1Oij4tWso9UzzKJvPoDxwmuEcO3XAdRC0","bYq3nbM1dOc0aR0M0xZ3iQ5pYk2TqQy7l0X1c8d9e0f",
       "c1d2e3f4g5h6i7j8k9l0m1n2o3p4q5r6s7t8u9v0w1x","Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0Pp9Oo8Nn7Mm6L"],"alg":"sha-256"},
     "binding":"3f1c9a0d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c3b2a1f","ephemeralMessageHash":"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"}
    """
