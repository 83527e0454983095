import NearcardCrypto

/// Groth16 verification over BN254: e(A, B) = e(α, β) · e(vk_x, γ) · e(C, δ),
/// vk_x = IC₀ + Σ sᵢ·ICᵢ₊₁, checked as one product of four pairings equal to 1 (three Miller loops
/// sharing one run and one final exponentiation; e(α, β)'s Miller-loop value comes with the key).
public enum Groth16 {
    /// r, the order of G1 and G2 (the SNARK's scalar field).
    public static let scalarModulus = UInt256(decimal: "21888242871839275222246405745257275088548364400416034343698204186575808495617")!

    public struct VerifyingKey: Sendable {
        public let alpha: G1Point
        public let beta: G2Point
        public let gamma: G2Point
        public let delta: G2Point
        public let ic: [G1Point]
        let preparedBeta: Pairing.Prepared
        let preparedGamma: Pairing.Prepared
        let preparedDelta: Pairing.Prepared
        /// The Miller-loop value of (α, β), which no proof changes: verification multiplies it in.
        let alphaBetaMiller: Fq12
        /// For each ICᵢ₊₁, its odd multiples 1·P, 3·P, …, 15·P (affine) for the width-5 wNAF of vk_x.
        let icMultiples: [[G1Point]]

        public init(alpha: G1Point, beta: G2Point, gamma: G2Point, delta: G2Point, ic: [G1Point]) {
            self.alpha = alpha
            self.beta = beta
            self.gamma = gamma
            self.delta = delta
            self.ic = ic
            preparedBeta = Pairing.Prepared(beta)
            preparedGamma = Pairing.Prepared(gamma)
            preparedDelta = Pairing.Prepared(delta)
            alphaBetaMiller = Pairing.millerLoop([(alpha, preparedBeta)])
            icMultiples = ic.dropFirst().map { p in
                let twice = G1Jacobian(p).doubled
                var odd = [G1Jacobian(p)]
                while odd.count < 1 << (Groth16.window - 2) { odd.append(odd.last! + twice) }
                return odd.map(\.affine)
            }
        }
    }

    public struct Proof: Sendable, Equatable {
        public let a: G1Point
        public let b: G2Point
        public let c: G1Point
        public init(a: G1Point, b: G2Point, c: G1Point) {
            self.a = a
            self.b = b
            self.c = c
        }
    }

    /// True when the proof verifies for these public signals. Signals must be below r and the proof's
    /// points valid (`Proof` construction through `SemaphoreProof` checks both).
    public static func verify(_ proof: Proof, key: VerifyingKey, publicSignals: [UInt256]) -> Bool {
        guard publicSignals.count + 1 == key.ic.count, publicSignals.allSatisfy({ $0 < scalarModulus }) else { return false }
        // e(α, β) is the key's: its Miller-loop value is multiplied in rather than recomputed.
        return Pairing.productIsOne(
            [
                (proof.a.negated, Pairing.Prepared(proof.b)),
                (inputPoint(key: key, publicSignals: publicSignals), key.preparedGamma),
                (proof.c, key.preparedDelta),
            ], times: key.alphaBetaMiller)
    }

    /// vk_x = IC₀ + Σ sᵢ·ICᵢ₊₁, with one shared run of doublings for all signals (Straus's method),
    /// each signal adding its wNAF digits from the key's tables.
    static func inputPoint(key: VerifyingKey, publicSignals: [UInt256]) -> G1Point {
        let digits = publicSignals.map { wnaf($0) }
        var acc = G1Jacobian.infinity
        for i in (0..<(digits.map(\.count).max() ?? 0)).reversed() {
            acc = acc.doubled
            for (n, d) in digits.enumerated() where i < d.count && d[i] != 0 {
                let p = key.icMultiples[n][Int(d[i].magnitude) / 2]
                acc = acc.adding(d[i] > 0 ? p : p.negated)
            }
        }
        return acc.adding(key.ic[0]).affine
    }

    /// The wNAF window: digits are odd, |d| < 2^(window − 1).
    static let window = 5

    /// The width-`window` non-adjacent form of k, least significant first.
    static func wnaf(_ k: UInt256) -> [Int8] {
        var v = [k.limbs.0, k.limbs.1, k.limbs.2, k.limbs.3, 0]
        let full: UInt64 = 1 << window
        let half: UInt64 = full >> 1
        var out: [Int8] = []
        out.reserveCapacity(258)
        while v.contains(where: { $0 != 0 }) {
            var d: Int64 = 0
            if v[0] & 1 == 1 {
                let low = v[0] & (full - 1)
                d = low >= half ? Int64(low) - Int64(full) : Int64(low)
                // v −= d: subtract a small positive digit, or add a small negative one's magnitude.
                if d > 0 {
                    var borrow = UInt64(d)
                    for i in 0..<5 where borrow != 0 {
                        let (s, o) = v[i].subtractingReportingOverflow(borrow)
                        v[i] = s
                        borrow = o ? 1 : 0
                    }
                } else {
                    var carry = UInt64(-d)
                    for i in 0..<5 where carry != 0 {
                        let (s, o) = v[i].addingReportingOverflow(carry)
                        v[i] = s
                        carry = o ? 1 : 0
                    }
                }
            }
            out.append(Int8(d))
            for i in 0..<5 { v[i] = v[i] >> 1 | (i < 4 ? v[i + 1] << 63 : 0) }
        }
        return out
    }
}
