import Foundation
import NearcardCrypto
import Testing

@testable import NearcardSemaphore

let vectorURL = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Vectors/semaphore/v4-depth10-proof.json")

func vectorProof() throws -> (text: String, json: JSONObject) {
    let v = try JSONParser.parse(String(contentsOf: vectorURL, encoding: .utf8))
    let p = v["semaphore_proof"]!
    return (p.canonicalText, p.objectValue!)
}

func failure(_ r: Result<Void, SemaphoreFailure>) -> SemaphoreFailure? {
    if case .failure(let f) = r { return f }
    return nil
}

@Suite struct SemaphoreTests {
    @Test func realDepth10ProofVerifies() throws {
        let (text, _) = try vectorProof()
        let proof = try SemaphoreProof(json: text)
        #expect(proof.depth == 10)
        // The public signals match the vector's (including the Keccak hashes of message and scope).
        let v = try JSONParser.parse(String(contentsOf: vectorURL, encoding: .utf8))
        #expect(proof.publicSignals.map(\.description) == v["publicSignals"]!.arrayValue!.map { $0.stringValue! })
        #expect(throws: Never.self) { try SemaphoreVerifier.verify(proof).get() }
    }

    /// Changing any public input makes the proof fail.
    @Test(arguments: ["merkle_tree_root", "nullifier", "message", "scope"])
    func changedPublicInputFails(member: String) throws {
        var (_, o) = try vectorProof()
        let old = UInt256(decimal: o[member]!.stringValue!)!
        o[member] = .string(old.subtracting(UInt256(1)).0.description)
        let proof = try SemaphoreProof(json: JSONValue.object(o).canonicalText)
        #expect(failure(SemaphoreVerifier.verify(proof)) == .invalid)
    }

    /// Changing any proof point: refused (off the curve) or fails verification; never accepted.
    @Test(arguments: 0..<8)
    func changedPointFails(index: Int) throws {
        var (_, o) = try vectorProof()
        var pts = o["points"]!.arrayValue!
        pts[index] = .string((UInt256(decimal: pts[index].stringValue!)!.subtracting(UInt256(1)).0).description)
        o["points"] = .array(pts)
        let result: Result<Void, SemaphoreFailure> = Result { () throws(SemaphoreFailure) in
            try SemaphoreVerifier.verify(try SemaphoreProof(json: JSONValue.object(o).canonicalText)).get()
        }
        guard case .failure(let f) = result else {
            Issue.record("point \(index) changed and still accepted")
            return
        }
        #expect(f == .invalid || { if case .notOnCurve = f { true } else { false } }())
    }

    /// A valid point swapped in (C := A, another curve point): passes the curve checks, fails the equation.
    @Test func validButWrongPointFails() throws {
        var (_, o) = try vectorProof()
        var pts = o["points"]!.arrayValue!
        pts[6] = pts[0]
        pts[7] = pts[1]
        o["points"] = .array(pts)
        let proof = try SemaphoreProof(json: JSONValue.object(o).canonicalText)
        #expect(failure(SemaphoreVerifier.verify(proof)) == .invalid)
    }

    @Test func malformedAndOutOfRangeInputsAreRefusedWithAReason() throws {
        let (_, o) = try vectorProof()
        func refusal(_ change: (inout JSONObject) -> Void) -> SemaphoreFailure? {
            var x = o
            change(&x)
            do {
                _ = try SemaphoreProof(json: JSONValue.object(x).canonicalText)
                return nil
            } catch { return error }
        }
        #expect(refusal { $0["points"] = ["1", "2"] } == .malformed("\"points\" must hold 8 numbers"))
        #expect(refusal { $0["nullifier"] = nil } == .malformed("no \"nullifier\""))
        #expect(refusal { $0["merkle_tree_depth"] = 33 } == .unsupportedDepth(33))
        #expect(refusal { $0["merkle_tree_root"] = .string(Groth16.scalarModulus.description) } == .outOfRange("merkle_tree_root is not below r"))
        #expect(refusal { $0["message"] = "12x" } == .outOfRange("\"message\" is not a decimal number below 2^256"))
        #expect(refusal { $0["message"] = .string(String(repeating: "9", count: 80)) } != nil)
        var pts = o["points"]!.arrayValue!
        pts[0] = .string(Fq.modulus.description)
        #expect(refusal { $0["points"] = .array(pts) } == .outOfRange("points[0] is not below the field modulus p"))
        pts = o["points"]!.arrayValue!
        pts[1] = "5"
        #expect(refusal { $0["points"] = .array(pts) } == .notOnCurve("A is not on G1"))
        #expect(throws: SemaphoreFailure.self) { try SemaphoreProof(json: "not json") }
        #expect(throws: SemaphoreFailure.self) { try SemaphoreProof(json: "[1,2]") }
    }

    /// A point on the twist with a small x; with a cofactor this large it is almost surely outside the subgroup.
    func twistPointOutsideTheSubgroup() -> G2Point? {
        var x = Fq2(Fq(UInt256(1)), .one)
        for _ in 0..<200 {
            let rhs = x.squared * x + G2Point.b
            if let y = sqrt(rhs) { return G2Point(x: x, y: y) }
            x = x + .one
        }
        return nil
    }

    /// A point on the twist but outside G2's prime-order subgroup is refused.
    @Test func twistPointOutsideTheSubgroupIsRefused() {
        guard let p = twistPointOutsideTheSubgroup() else {
            Issue.record("no twist point found")
            return
        }
        #expect(p.isOnCurve)
        #expect(!p.isInSubgroup)
        #expect(G2Point.generator.isInSubgroup)
    }

    /// The vector proof with some of its `points` replaced (index → decimal value).
    func vectorText(points changes: [Int: UInt256]) throws -> String {
        var (_, o) = try vectorProof()
        var pts = o["points"]!.arrayValue!
        for (i, v) in changes { pts[i] = .string(v.description) }
        o["points"] = .array(pts)
        return JSONValue.object(o).canonicalText
    }

    /// Why a proof text is refused, reading then verifying it as a card's proof is (nil: it verifies).
    func refusal(_ text: String) -> SemaphoreFailure? {
        do { return failure(SemaphoreVerifier.verify(try SemaphoreProof(json: text))) } catch { return error }
    }

    /// The verdict a card carrying this proof gets (the holder and trust do not matter: it fails before them).
    func verdict(_ text: String) -> SemaphoreBinding.Verdict {
        SemaphoreBinding.check(text, holderDID: "did:key:zDnaeZbzLstTujAWhG3v6FXZc6tcvTKeXFTc3VckdXq3qzNvj") { _ in .init(name: "G", depth: nil) }
    }

    /// §18: a verifier MUST refuse A or C not on y² = x³ + 3 (the vector proof with C, then A, := (1, 3)).
    @Test func cNotOnTheCurveIsRefused() throws {
        let offCurve = G1Point(x: Fq(UInt256(1)), y: Fq(UInt256(3)))
        #expect(!offCurve.isOnCurve, "3² ≠ 1³ + 3")
        #expect(refusal(try vectorText(points: [:])) == nil, "the vector itself verifies")

        let c = try vectorText(points: [6: UInt256(1), 7: UInt256(3)])
        #expect(refusal(c) == .notOnCurve("C is not on G1"))
        #expect(verdict(c) == .failed(SemaphoreFailure.notOnCurve("C is not on G1").description))
        #expect(verdict(c).description.contains("C is not on G1"))
        // C's y changed by 1: off the curve too, refused by name (not merely failing the pairing).
        let (_, o) = try vectorProof()
        let cy = UInt256(decimal: o["points"]!.arrayValue![7].stringValue!)!
        #expect(refusal(try vectorText(points: [7: cy.subtracting(UInt256(1)).0])) == .notOnCurve("C is not on G1"))

        let a = try vectorText(points: [0: UInt256(1), 1: UInt256(3)])
        #expect(refusal(a) == .notOnCurve("A is not on G1"))
        #expect(verdict(a) == .failed(SemaphoreFailure.notOnCurve("A is not on G1").description))
    }

    /// §18: a verifier MUST refuse B on the twist y² = x³ + 3/(9+u) but outside its order-r subgroup.
    @Test func bOutsideTheSubgroupIsRefused() throws {
        guard let b = twistPointOutsideTheSubgroup() else {
            Issue.record("no twist point found")
            return
        }
        #expect(b.isOnCurve && !b.isInSubgroup)
        // points[2...5] are B.x.c1, B.x.c0, B.y.c1, B.y.c0.
        let text = try vectorText(points: [2: b.x.c1.value, 3: b.x.c0.value, 4: b.y.c1.value, 5: b.y.c0.value])
        #expect(refusal(text) == .notOnCurve("B is not in G2's prime-order subgroup"))
        #expect(verdict(text) == .failed(SemaphoreFailure.notOnCurve("B is not in G2's prime-order subgroup").description))
        #expect(verdict(text).description.contains("subgroup"))
    }

    /// §18: a verifier MUST refuse B not on the twist (each of the vector's four B coordinates changed by 1).
    @Test(arguments: 2...5)
    func bOffTheTwistIsRefused(index: Int) throws {
        let (_, o) = try vectorProof()
        let v = UInt256(decimal: o["points"]!.arrayValue![index].stringValue!)!
        let changed = v == .zero ? UInt256(1) : v.subtracting(UInt256(1)).0
        let text = try vectorText(points: [index: changed])
        #expect(refusal(text) == .notOnCurve("B is not on the G2 twist"))
        #expect(verdict(text) == .failed(SemaphoreFailure.notOnCurve("B is not on the G2 twist").description))
    }

    /// sqrt in Fq2 for the test above (p ≡ 3 mod 4): a = (x + y·u)², solved through the norm.
    func sqrt(_ a: Fq2) -> Fq2? {
        let e = Fq.modulus.subtracting(UInt256(3)).0.divided(by: 4).quotient // (p − 3)/4
        func fqSqrt(_ v: Fq) -> Fq? {
            let r = v.power(e) * v
            return r.squared == v ? r : nil
        }
        guard let n = fqSqrt(a.c0.squared + a.c1.squared) else { return nil }
        let half = Fq(UInt256(2)).inverse
        for t in [(a.c0 + n) * half, (a.c0 - n) * half] {
            if let x0 = fqSqrt(t), !x0.isZero {
                let x1 = a.c1 * (x0.doubled).inverse
                let cand = Fq2(x0, x1)
                if cand.squared == a { return cand }
            }
        }
        return nil
    }
}

@Suite struct PairingTests {
    func random() -> UInt256 { UInt256(bigEndian: [0] + Sodium.randomBytes(31)) }

    /// e(aP, bQ) = e(P, Q)^(ab), e(aP, Q) = e(P, aQ), and e(P, Q) ≠ 1.
    @Test func bilinearityOnRandomPoints() {
        let a = random()
        let b = random()
        let p = G1Point.generator.multiplied(by: random())
        let q = G2Point.generator.multiplied(by: random())
        let e = Pairing.pairing(p, q)
        let nonDegenerate = e != .one
        #expect(nonDegenerate)
        let bilinear = Pairing.pairing(p.multiplied(by: a), q.multiplied(by: b)) == e.power(a).power(b)
        #expect(bilinear)
        let symmetric = Pairing.pairing(p.multiplied(by: a), q) == Pairing.pairing(p, q.multiplied(by: a))
        #expect(symmetric)
        // And through the product check: e(aP, Q) · e(−P, aQ) = 1, but not e(aP, Q) · e(−P, bQ).
        let productOne = Pairing.productIsOne([(p.multiplied(by: a), Pairing.Prepared(q)), (p.negated, Pairing.Prepared(q.multiplied(by: a)))])
        #expect(productOne)
        let productNotOne = Pairing.productIsOne([(p.multiplied(by: a), Pairing.Prepared(q)), (p.negated, Pairing.Prepared(q.multiplied(by: b)))])
        #expect(!productNotOne)
    }

    /// The final exponentiation lands in the order-r subgroup of Fq12* (for any input).
    @Test func finalExponentiationHasOrderR() {
        func rfq() -> Fq { Fq(UInt256(bigEndian: [0, 0] + Sodium.randomBytes(30))) }
        func rfq6() -> Fq6 { Fq6(Fq2(rfq(), rfq()), Fq2(rfq(), rfq()), Fq2(rfq(), rfq())) }
        let out = Pairing.finalExponentiation(Fq12(rfq6(), rfq6()))
        #expect(out.power(Groth16.scalarModulus) == .one)
        #expect(out != .one)
    }

    /// The Granger–Scott square agrees with the general one on the cyclotomic subgroup (where the final
    /// exponentiation uses it): after the easy part, and on pairing values.
    @Test func cyclotomicSquaringAgreesWithSquaring() {
        func rfq() -> Fq { Fq(UInt256(bigEndian: [0, 0] + Sodium.randomBytes(30))) }
        func rfq6() -> Fq6 { Fq6(Fq2(rfq(), rfq()), Fq2(rfq(), rfq()), Fq2(rfq(), rfq())) }
        let f = Fq12(rfq6(), rfq6())
        var easy = f.conjugate * f.inverse
        easy = easy.frobenius(2) * easy
        let e = Pairing.pairing(G1Point.generator.multiplied(by: random()), G2Point.generator)
        for x in [easy, e, Fq12.one] {
            #expect(x.cyclotomicSquared == x.squared)
        }
    }

    /// The ψ-based G2 membership test gives the definition's answer (r·P = O) on subgroup points, on
    /// twist points with a cofactor part, and on points of the cofactor part alone (r·P for such P).
    @Test func subgroupTestAgreesWithTheOrder() {
        #expect(G2Point.infinity.isInSubgroup)
        for _ in 0..<3 {
            let q = G2Point.generator.multiplied(by: random())
            #expect(q.isInSubgroup && q.isInSubgroupByOrder)
        }
        var x = Fq2(rfqSmall(), .one)
        var found = 0
        while found < 4 {
            x = x + .one
            guard let y = SemaphoreTests().sqrt(x.squared * x + G2Point.b) else { continue }
            found += 1
            let p = G2Point(x: x, y: y)
            #expect(p.isOnCurve)
            #expect(p.isInSubgroup == p.isInSubgroupByOrder)
            #expect(!p.isInSubgroup)
            let cofactorPart = p.multiplied(by: Groth16.scalarModulus)
            #expect(!cofactorPart.isInfinity)
            #expect(cofactorPart.isInSubgroup == cofactorPart.isInSubgroupByOrder)
            #expect(!cofactorPart.isInSubgroup)
        }
    }

    func rfqSmall() -> Fq { Fq(UInt256(bigEndian: [0, 0] + Sodium.randomBytes(30))) }

    /// vk_x through the key's wNAF tables equals IC₀ + Σ sᵢ·ICᵢ₊₁ by plain double-and-add, for
    /// random signals and the edges 0, 1 and r − 1.
    @Test func inputPointMatchesPlainScalarMultiplication() {
        let key = SemaphoreVerifier.key(depth: 10)
        let rMinus1 = Groth16.scalarModulus.subtracting(UInt256(1)).0
        let cases: [[UInt256]] = [
            [random(), random(), random(), random()],
            [.zero, UInt256(1), rMinus1, .zero],
            [.zero, .zero, .zero, .zero],
            [rMinus1, rMinus1, UInt256(1), UInt256(0xffff_ffff_ffff_ffff)],
        ]
        for signals in cases {
            var plain = key.ic[0]
            for (s, p) in zip(signals, key.ic.dropFirst()) { plain = plain + p.multiplied(by: s) }
            #expect(Groth16.inputPoint(key: key, publicSignals: signals) == plain)
        }
    }

    /// Additions and subtractions that cross p (the reductions select by mask, not by branch).
    @Test func fieldEdges() {
        let pMinus1 = Fq(Fq.modulus.subtracting(UInt256(1)).0)
        #expect(pMinus1 + .one == .zero)
        #expect(Fq.zero - .one == pMinus1)
        #expect(pMinus1 + pMinus1 == pMinus1 - .one)
        #expect((pMinus1 * pMinus1) == .one)
        #expect(-Fq.zero == .zero)
        #expect((Fq.zero - pMinus1) == .one)
    }

    @Test func groupOrders() {
        #expect(G1Point.generator.multiplied(by: Groth16.scalarModulus).isInfinity)
        #expect(G2Point.generator.multiplied(by: Groth16.scalarModulus).isInfinity)
        #expect(G2Point.generator.isOnCurve && G1Point.generator.isOnCurve)
    }

    @Test func fieldArithmetic() {
        let x = Fq(decimal: "1234567890123456789012345678901234567890")!
        #expect(x * x.inverse == .one)
        #expect(x.value.description == "1234567890123456789012345678901234567890")
        #expect((x - x) == .zero && (-x + x) == .zero)
        #expect(Fq(decimal: Fq.modulus.description) == nil)
        let y = Fq2(x, Fq(UInt256(7)))
        #expect(y * y.inverse == .one)
        #expect(Fq2(.zero, .one).squared == Fq2(-Fq.one, .zero), "u² = −1")
    }

    /// Keccak-256 (not SHA3-256) known answers.
    @Test func keccak256() {
        #expect(Hex.encode(Keccak256.hash([])) == "c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470")
        #expect(Hex.encode(Keccak256.hash(Array("abc".utf8))) == "4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45")
        #expect(Hex.encode(Keccak256.hash([UInt8](repeating: 0x61, count: 200))).count == 64, "multi-block input")
    }
}

/// How a group proof is tied to the card that carries it (docs/PROTOCOL.md §18).
@Suite struct BindingTests {
    let holder = "did:key:zDnaeZbzLstTujAWhG3v6FXZc6tcvTKeXFTc3VckdXq3qzNvj"
    let root = "4990292586352433503726012711155167179034286198473030768981544541070532815155"

    /// The vector proof with its message and scope replaced by the binding for `holder`.
    func bound(to did: String) throws -> String {
        var (_, o) = try vectorProof()
        o["message"] = .string(SemaphoreBinding.message(holderDID: did).description)
        o["scope"] = .string(SemaphoreBinding.scope(holderDID: did).description)
        return JSONValue.object(o).canonicalText
    }

    func pairingAccepts(_: SemaphoreProof) -> Result<Void, SemaphoreFailure> { .success(()) }

    @Test func theVectorProofIsNotBoundToAnyCard() throws {
        let verdict = SemaphoreBinding.check(try vectorProof().text, holderDID: holder) { _ in .init(name: "Attendees", depth: nil) }
        guard case .failed(let why) = verdict else {
            Issue.record("an unbound proof was accepted: \(verdict)")
            return
        }
        #expect(why.contains("not bound to \(holder)"))
    }

    /// The binding values are fixed by the spec: SHA-256 of the label, a zero byte and the DID.
    @Test func bindingValuesFollowTheSpec() {
        let m = SemaphoreBinding.message(holderDID: holder)
        let s = SemaphoreBinding.scope(holderDID: holder)
        #expect(m.bigEndianBytes == SHA256.hash(Array("nearcard/semaphore/message/v1".utf8) + [0] + Array(holder.utf8)))
        #expect(s.bigEndianBytes == SHA256.hash(Array("nearcard/semaphore/scope/v1".utf8) + [0] + Array(holder.utf8)))
        #expect(m != SemaphoreBinding.message(holderDID: holder + "x"))
    }

    /// The trust and binding rules, with the pairing check stubbed to accept (no prover exists offline to
    /// make a real bound proof; the pairing itself is tested with the real vector above).
    @Test func trustAndBindingRules() throws {
        let text = try bound(to: holder)
        let trusted: (String) -> SemaphoreBinding.TrustedGroup? = { $0 == root ? .init(name: "Attendees", depth: nil) : nil }
        let nullifier = UInt256(decimal: "17540473064543782218297133630279824063352907908315494138425986188962403570231")!
        #expect(SemaphoreBinding.check(text, holderDID: holder, trusted: trusted, verify: pairingAccepts) == .trusted(group: "Attendees", nullifier: nullifier))
        // Copied into another holder's card: refused.
        guard case .failed = SemaphoreBinding.check(text, holderDID: holder + "x", trusted: trusted, verify: pairingAccepts) else {
            Issue.record("a proof bound to one DID was accepted for another")
            return
        }
        // A root nobody trusts: valid, not trusted.
        #expect(
            SemaphoreBinding.check(text, holderDID: holder, trusted: { _ in nil }, verify: pairingAccepts)
                == .untrustedGroup(root: UInt256(decimal: root)!))
        // A group pinned to another depth: refused.
        guard case .failed(let why) = SemaphoreBinding.check(text, holderDID: holder, trusted: { _ in .init(name: "A", depth: 16) }, verify: pairingAccepts)
        else {
            Issue.record("a depth-pinned group accepted another depth")
            return
        }
        #expect(why.contains("depth-16"))
        // With the real pairing check, rebinding a proof by editing its message and scope fails: they are public inputs.
        #expect(SemaphoreBinding.check(text, holderDID: holder, trusted: trusted) == .failed(SemaphoreFailure.invalid.description))
    }

    /// The iOS wrapper (the proof as a JSON string inside) and Nearcard's export form both parse to the same proof.
    @Test func iosWrapperAndExportForm() throws {
        let (text, _) = try vectorProof()
        let wrapper: JSONValue = .object([
            "version": 1, "semaphore_proof": .string(text), "group_root": "1", "signal": "x", "scope": "y",
            "member_count": 3, "group_commitments": ["1", "2", "3"],
        ])
        let proof = try SemaphoreProof(json: text)
        #expect(try SemaphoreProof(json: wrapper.canonicalText) == proof)
        #expect(try SemaphoreProof(json: proof.exportJSON) == proof)
        #expect(throws: Never.self) { try SemaphoreVerifier.verify(SemaphoreProof(json: wrapper.canonicalText)).get() }
    }
}
