import NearcardCrypto

/// Groth16 verification over BN254: e(A, B) = e(α, β) · e(vk_x, γ) · e(C, δ),
/// vk_x = IC₀ + Σ sᵢ·ICᵢ₊₁, checked as one product of four pairings equal to 1.
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

        public init(alpha: G1Point, beta: G2Point, gamma: G2Point, delta: G2Point, ic: [G1Point]) {
            self.alpha = alpha
            self.beta = beta
            self.gamma = gamma
            self.delta = delta
            self.ic = ic
            preparedBeta = Pairing.Prepared(beta)
            preparedGamma = Pairing.Prepared(gamma)
            preparedDelta = Pairing.Prepared(delta)
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
        var acc = G1Jacobian(key.ic[0])
        for (s, point) in zip(publicSignals, key.ic.dropFirst()) {
            acc = acc + G1Jacobian(point.multiplied(by: s))
        }
        let vkx = acc.affine
        return Pairing.productIsOne([
            (proof.a.negated, Pairing.Prepared(proof.b)),
            (key.alpha, key.preparedBeta),
            (vkx, key.preparedGamma),
            (proof.c, key.preparedDelta),
        ])
    }
}
