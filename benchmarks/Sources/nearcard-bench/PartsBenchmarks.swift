import Foundation
import NearcardCrypto
import NearcardModel
import NearcardNode
import NearcardProtocol
import NearcardStore

/// Where one side's time goes in an exchange: each step alone, median of `rounds`.
func exchangePartsBenchmark(rounds: Int = 201) throws -> String {
    let scratch = try Scratch("parts")
    let a = try scratch.service("Ada Parts"), b = try scratch.service("Bob Parts")
    func time(_ body: () throws -> Void) rethrows -> Double {
        var xs: [Double] = []
        for _ in 0..<rounds {
            let t0 = now()
            try body()
            xs.append(Double(now() - t0))
        }
        return median(xs)
    }
    var rows: [(String, Double)] = []
    rows.append(("localParty() (card, policy, proof from SQLite)", try time { blackHole(try a.localParty()) }))
    let party = try a.localParty()
    let t = Int64(Date().timeIntervalSince1970)
    rows.append(("ProximityPayload.make (SD-JWT + signature)", try time {
        blackHole(try ProximityPayload.make(card: party.card, policy: party.policy, keys: party.keys, receiver: b.identity.did,
                                            sessionBinding: [UInt8](repeating: 1, count: 32), ephemeralMessage: "hi", sealedRoute: nil, now: t))
    }))
    let p = try ProximityPayload.make(card: party.card, policy: party.policy, keys: party.keys, receiver: b.identity.did,
                                      sessionBinding: [UInt8](repeating: 1, count: 32), ephemeralMessage: "hi", sealedRoute: nil, now: t)
    let json = p.json
    let bytes = JCS.canonicalize(json)
    rows.append(("JSON parse of the payload (\(bytes.count) B)", try time { blackHole(try JSONParser.parse(bytes)) }))
    rows.append(("JCS canonicalise the payload", time { blackHole(JCS.canonicalize(json)) }))
    let ctx = PayloadVerificationContext(expectedSenderDID: a.identity.did, receiverDID: b.identity.did, sessionBinding: [UInt8](repeating: 1, count: 32),
                                         peerStaticKey: nil, ephemeralMessage: "hi", now: t, maximumSkew: 300, requireDisclosureProof: true)
    rows.append(("ProximityPayload.verify", time { if case .failure(let f) = ProximityPayload.verify(json: json, context: ctx) { fatalError("\(f)") } }))
    let didKey = try DIDKey(parsing: a.identity.did)
    rows.append(("DIDKey(parsing:)", try time { blackHole(try DIDKey(parsing: a.identity.did)) }))
    rows.append(("DIDKey.ecPublicKey() (point decompression → EVP_PKEY)", time { blackHole(didKey.ecPublicKey()) }))
    rows.append(("DIDKey.did (Base58 encode)", time { blackHole(DIDKey(a.keys.p256.publicKey).did) }))
    rows.append(("P-256 sign (raw)", try time { blackHole(try a.keys.p256.signature(for: bytes)) }))
    return "| step (one side) | median |\n|---|---|\n" + rows.map { "| \($0.0) | \(format($0.1)) |" }.joined(separator: "\n") + "\n"
}
