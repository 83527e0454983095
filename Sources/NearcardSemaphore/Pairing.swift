/// The optimal ate pairing on BN254: e: G1 × G2 → Fq12*.
///
/// Miller loop over the NAF of 6x + 2 (x = 4965661367192848881) with line functions in homogeneous
/// projective coordinates on the D-type twist, then the two Frobenius steps with π(Q) and −π²(Q);
/// products of pairings share one loop and one final exponentiation.
public enum Pairing {
    static let x: UInt64 = 4_965_661_367_192_848_881

    /// The NAF digits of 6x + 2, least significant first.
    static let ateLoopNAF: [Int8] = naf(UInt128(x) * 6 + 2)

    /// The NAF digits of x, most significant first (for the final exponentiation's a^x).
    static let xNAF: [Int8] = naf(UInt128(x)).reversed()

    /// The non-adjacent form of v (digits −1, 0, 1, no two adjacent non-zero), least significant first.
    static func naf(_ value: UInt128) -> [Int8] {
        var v = value
        var out: [Int8] = []
        while v > 0 {
            if v & 1 == 1 {
                let d: Int8 = (v & 3) == 3 ? -1 : 1
                out.append(d)
                v = d == 1 ? v - 1 : v + 1
            } else {
                out.append(0)
            }
            v >>= 1
        }
        return out
    }

    static let twoInverse = Fq(UInt256(2)).inverse

    /// A line's coefficients (for `Fq12.times034`).
    typealias Line = (Fq2, Fq2, Fq2)

    struct Projective { var x: Fq2, y: Fq2, z: Fq2 }

    static func doublingStep(_ r: inout Projective) -> Line {
        var a = r.x * r.y
        a = a.scaled(twoInverse)
        let b = r.y.squared
        let c = r.z.squared
        let e = G2Point.b * (c.doubled + c)
        let f = e.doubled + e
        let g = (b + f).scaled(twoInverse)
        let h = (r.y + r.z).squared - (b + c)
        let i = e - b
        let j = r.x.squared
        let eSquared = e.squared
        r.x = a * (b - f)
        r.y = g.squared - (eSquared.doubled + eSquared)
        r.z = b * h
        return (-h, j.doubled + j, i)
    }

    static func additionStep(_ r: inout Projective, _ q: G2Point) -> Line {
        let theta = r.y - q.y * r.z
        let lambda = r.x - q.x * r.z
        let c = theta.squared
        let d = lambda.squared
        let e = lambda * d
        let f = r.z * c
        let g = r.x * d
        let h = e + f - g.doubled
        r.x = lambda * h
        r.y = theta * (g - h) - e * r.y
        r.z = r.z * e
        let j = theta * q.x - lambda * q.y
        return (lambda, -theta, j)
    }

    /// The line coefficients of a G2 point, in Miller-loop order (reusable for every pairing with it).
    public struct Prepared: Sendable {
        let lines: [Line]
        let isInfinity: Bool

        public init(_ q: G2Point) {
            isInfinity = q.isInfinity
            guard !q.isInfinity else {
                lines = []
                return
            }
            var r = Projective(x: q.x, y: q.y, z: .one)
            var lines: [Line] = []
            lines.reserveCapacity(100)
            let neg = q.negated
            for i in (0..<(Pairing.ateLoopNAF.count - 1)).reversed() {
                lines.append(Pairing.doublingStep(&r))
                switch Pairing.ateLoopNAF[i] {
                case 1: lines.append(Pairing.additionStep(&r, q))
                case -1: lines.append(Pairing.additionStep(&r, neg))
                default: break
                }
            }
            let q1 = q.frobenius
            var q2 = q1.frobenius
            q2.y = -q2.y
            lines.append(Pairing.additionStep(&r, q1))
            lines.append(Pairing.additionStep(&r, q2))
            self.lines = lines
        }
    }

    /// ∏ f_{Q_i}(P_i), before the final exponentiation.
    static func millerLoop(_ pairs: [(G1Point, Prepared)]) -> Fq12 {
        let live = pairs.filter { !$0.0.isInfinity && !$0.1.isInfinity }
        var f = Fq12.one
        var index = 0
        @inline(__always) func ell(_ f: inout Fq12, _ line: Line, _ p: G1Point) {
            f = f.times034(line.0.scaled(p.y), line.1.scaled(p.x), line.2)
        }
        for i in (0..<(ateLoopNAF.count - 1)).reversed() {
            if i != ateLoopNAF.count - 2 { f = f.squared }
            for (p, q) in live { ell(&f, q.lines[index], p) }
            index += 1
            if ateLoopNAF[i] != 0 {
                for (p, q) in live { ell(&f, q.lines[index], p) }
                index += 1
            }
        }
        for (p, q) in live { ell(&f, q.lines[index], p) }
        index += 1
        for (p, q) in live { ell(&f, q.lines[index], p) }
        return f
    }

    /// f^((p¹² − 1)/r): the easy part (p⁶ − 1)(p² + 1), then the hard part (p⁴ − p² + 1)/r with the
    /// addition chain of Scott et al., eprint 2008/490 §3 (as arkworks computes it). After the easy part
    /// f is in the cyclotomic subgroup, where the inverse is the conjugate.
    static func finalExponentiation(_ f: Fq12) -> Fq12 {
        var r = f.conjugate * f.inverse
        r = r.frobenius(2) * r
        /// a^(−x) (x is positive for BN254), over the NAF of x: in the cyclotomic subgroup a⁻¹ is the
        /// conjugate and squaring has its cheaper form, so a digit −1 costs what a digit 1 does.
        func expByNegX(_ a: Fq12) -> Fq12 {
            let aInverse = a.conjugate
            var out = a // the leading digit is 1
            for d in xNAF.dropFirst() {
                out = out.cyclotomicSquared
                if d == 1 { out = out * a } else if d == -1 { out = out * aInverse }
            }
            return out.conjugate
        }
        let y0 = expByNegX(r)
        let y1 = y0.cyclotomicSquared
        let y2 = y1.cyclotomicSquared
        var y3 = y2 * y1
        let y4 = expByNegX(y3)
        let y5 = y4.cyclotomicSquared
        var y6 = expByNegX(y5)
        y3 = y3.conjugate
        y6 = y6.conjugate
        let y7 = y6 * y4
        var y8 = y7 * y3
        let y9 = y8 * y1
        let y10 = y8 * y4
        let y11 = y10 * r
        let y12 = y9.frobenius(1)
        let y13 = y12 * y11
        y8 = y8.frobenius(2)
        let y14 = y8 * y13
        let y15 = (r.conjugate * y9).frobenius(3)
        return y15 * y14
    }

    /// e(P, Q).
    public static func pairing(_ p: G1Point, _ q: G2Point) -> Fq12 {
        finalExponentiation(millerLoop([(p, Prepared(q))]))
    }

    /// Whether ∏ e(P_i, Q_i) = 1, with one Miller loop and one final exponentiation.
    public static func productIsOne(_ pairs: [(G1Point, Prepared)]) -> Bool {
        finalExponentiation(millerLoop(pairs)) == .one
    }

    /// Whether m · ∏ e(P_i, Q_i) = 1, where m is the Miller-loop value of pairs fixed in advance (as
    /// `millerLoop` returned it): their lines are then not walked again.
    static func productIsOne(_ pairs: [(G1Point, Prepared)], times m: Fq12) -> Bool {
        finalExponentiation(millerLoop(pairs) * m) == .one
    }
}
