/// Fq2 = Fq[u]/(u² + 1).
public struct Fq2: Sendable, Equatable {
    public var c0: Fq, c1: Fq

    @inlinable public init(_ c0: Fq, _ c1: Fq) {
        self.c0 = c0
        self.c1 = c1
    }
    public static let zero = Fq2(.zero, .zero)
    public static let one = Fq2(.one, .zero)
    public var isZero: Bool { c0.isZero && c1.isZero }

    @inlinable @inline(__always) public static func + (a: Fq2, b: Fq2) -> Fq2 { Fq2(a.c0 + b.c0, a.c1 + b.c1) }
    @inlinable @inline(__always) public static func - (a: Fq2, b: Fq2) -> Fq2 { Fq2(a.c0 - b.c0, a.c1 - b.c1) }
    @inlinable @inline(__always) public static prefix func - (a: Fq2) -> Fq2 { Fq2(-a.c0, -a.c1) }
    @inlinable @inline(__always) public var doubled: Fq2 { Fq2(c0.doubled, c1.doubled) }

    @inlinable @inline(__always)
    public static func * (a: Fq2, b: Fq2) -> Fq2 {
        // Karatsuba: (a0 + a1u)(b0 + b1u) = a0b0 − a1b1 + ((a0 + a1)(b0 + b1) − a0b0 − a1b1)u
        let v0 = a.c0 * b.c0
        let v1 = a.c1 * b.c1
        return Fq2(v0 - v1, (a.c0 + a.c1) * (b.c0 + b.c1) - v0 - v1)
    }

    @inlinable @inline(__always)
    public var squared: Fq2 {
        // (a + bu)² = (a + b)(a − b) + 2ab·u
        let ab = c0 * c1
        return Fq2((c0 + c1) * (c0 - c1), ab.doubled)
    }

    @inlinable @inline(__always) public func scaled(_ k: Fq) -> Fq2 { Fq2(c0 * k, c1 * k) }

    /// The conjugate, which is the Frobenius map x ↦ x^p.
    @inlinable @inline(__always) public var conjugate: Fq2 { Fq2(c0, -c1) }

    /// × ξ where ξ = 9 + u.
    @inlinable @inline(__always)
    public var timesXi: Fq2 {
        let e = c0.doubled.doubled.doubled
        let f = c1.doubled.doubled.doubled
        return Fq2(e + c0 - c1, f + c1 + c0)
    }

    public var inverse: Fq2 {
        let t = (c0.squared + c1.squared).inverse
        return Fq2(c0 * t, -(c1 * t))
    }

    public func power(_ e: UInt256) -> Fq2 {
        var r = Fq2.one
        for i in (0..<e.bitWidth).reversed() {
            r = r.squared
            if e.bit(i) { r = r * self }
        }
        return r
    }

    public static let xi = Fq2(Fq(UInt256(9)), .one)
}

/// Fq6 = Fq2[v]/(v³ − ξ).
public struct Fq6: Sendable, Equatable {
    public var c0: Fq2, c1: Fq2, c2: Fq2

    @inlinable public init(_ c0: Fq2, _ c1: Fq2, _ c2: Fq2) {
        self.c0 = c0
        self.c1 = c1
        self.c2 = c2
    }
    public static let zero = Fq6(.zero, .zero, .zero)
    public static let one = Fq6(.one, .zero, .zero)

    @inlinable @inline(__always) public static func + (a: Fq6, b: Fq6) -> Fq6 { Fq6(a.c0 + b.c0, a.c1 + b.c1, a.c2 + b.c2) }
    @inlinable @inline(__always) public static func - (a: Fq6, b: Fq6) -> Fq6 { Fq6(a.c0 - b.c0, a.c1 - b.c1, a.c2 - b.c2) }
    @inlinable @inline(__always) public static prefix func - (a: Fq6) -> Fq6 { Fq6(-a.c0, -a.c1, -a.c2) }

    @inlinable
    public static func * (a: Fq6, b: Fq6) -> Fq6 {
        let v0 = a.c0 * b.c0
        let v1 = a.c1 * b.c1
        let v2 = a.c2 * b.c2
        let c0 = ((a.c1 + a.c2) * (b.c1 + b.c2) - v1 - v2).timesXi + v0
        let c1 = (a.c0 + a.c1) * (b.c0 + b.c1) - v0 - v1 + v2.timesXi
        let c2 = (a.c0 + a.c2) * (b.c0 + b.c2) - v0 + v1 - v2
        return Fq6(c0, c1, c2)
    }

    @inlinable public var squared: Fq6 { self * self }

    /// × v: (c0, c1, c2) ↦ (ξ·c2, c0, c1).
    @inlinable @inline(__always) public var timesV: Fq6 { Fq6(c2.timesXi, c0, c1) }

    /// × (b0 + b1·v).
    @inlinable
    public func times01(_ b0: Fq2, _ b1: Fq2) -> Fq6 {
        let v0 = c0 * b0
        let v1 = c1 * b1
        let t0 = ((c1 + c2) * b1 - v1).timesXi + v0
        let t1 = (c0 + c1) * (b0 + b1) - v0 - v1
        let t2 = (c0 + c2) * b0 - v0 + v1
        return Fq6(t0, t1, t2)
    }

    public var inverse: Fq6 {
        let t0 = c0.squared - (c1 * c2).timesXi
        let t1 = c2.squared.timesXi - c0 * c1
        let t2 = c1.squared - c0 * c2
        let d = (c0 * t0 + (c2 * t1).timesXi + (c1 * t2).timesXi).inverse
        return Fq6(t0 * d, t1 * d, t2 * d)
    }

    func frobenius(_ power: Int) -> Fq6 {
        let k = power % 6
        let f = power % 2 == 1
        return Fq6(f ? c0.conjugate : c0, (f ? c1.conjugate : c1) * Frobenius.fq6C1[k], (f ? c2.conjugate : c2) * Frobenius.fq6C2[k])
    }
}

/// Fq12 = Fq6[w]/(w² − v): where pairings take their values.
public struct Fq12: Sendable, Equatable {
    public var c0: Fq6, c1: Fq6

    @inlinable public init(_ c0: Fq6, _ c1: Fq6) {
        self.c0 = c0
        self.c1 = c1
    }
    public static let one = Fq12(.one, .zero)

    @inlinable
    public static func * (a: Fq12, b: Fq12) -> Fq12 {
        let v0 = a.c0 * b.c0
        let v1 = a.c1 * b.c1
        return Fq12(v0 + v1.timesV, (a.c0 + a.c1) * (b.c0 + b.c1) - v0 - v1)
    }

    @inlinable
    public var squared: Fq12 {
        let ab = c0 * c1
        let t = (c0 + c1) * (c0 + c1.timesV)
        return Fq12(t - ab - ab.timesV, ab + ab)
    }

    /// × (d0 + d3·w + d4·v·w): a line of a D-type twist.
    @inlinable
    public func times034(_ d0: Fq2, _ d3: Fq2, _ d4: Fq2) -> Fq12 {
        let a = Fq6(c0.c0 * d0, c0.c1 * d0, c0.c2 * d0)
        let b = c1.times01(d3, d4)
        let e = (c0 + c1).times01(d0 + d3, d4)
        return Fq12(b.timesV + a, e - a - b)
    }

    public var conjugate: Fq12 { Fq12(c0, -c1) }

    /// The square of an element of the cyclotomic subgroup (norm 1 over Fq6, which the final
    /// exponentiation's easy part lands in), after Granger and Scott (PKC 2010, eprint 2009/565): seen as three
    /// elements of Fq4 = Fq2[s]/(s² − ξ), (c0.c0, c1.c1), (c1.c0, c0.c2), (c0.c1, c1.c2), it takes three
    /// Fq4 squarings, half the cost of `squared`. Wrong for elements outside that subgroup.
    @inlinable
    public var cyclotomicSquared: Fq12 {
        /// (a + b·s)² = (a² + ξb²) + 2ab·s, with a² + ξb² = (a + b)(a + ξb) − ab − ξab.
        @inline(__always) func fq4Squared(_ a: Fq2, _ b: Fq2) -> (Fq2, Fq2) {
            let ab = a * b
            return ((a + b) * (a + b.timesXi) - ab - ab.timesXi, ab.doubled)
        }
        let (t0, t1) = fq4Squared(c0.c0, c1.c1)
        let (t2, t3) = fq4Squared(c1.c0, c0.c2)
        let (t4, t5) = fq4Squared(c0.c1, c1.c2)
        // From the norm-1 identity: c0's coefficients become 3t − 2z, c1's become 3t + 2z.
        @inline(__always) func minus(_ t: Fq2, _ z: Fq2) -> Fq2 { (t - z).doubled + t }
        @inline(__always) func plus(_ t: Fq2, _ z: Fq2) -> Fq2 { (t + z).doubled + t }
        return Fq12(
            Fq6(minus(t0, c0.c0), minus(t2, c0.c1), minus(t4, c0.c2)),
            Fq6(plus(t5.timesXi, c1.c0), plus(t1, c1.c1), plus(t3, c1.c2)))
    }

    public var inverse: Fq12 {
        let t = (c0.squared - c1.squared.timesV).inverse
        return Fq12(c0 * t, -(c1 * t))
    }

    public func frobenius(_ power: Int) -> Fq12 {
        let a = c0.frobenius(power)
        let b = c1.frobenius(power)
        let g = Frobenius.fq12C1[power % 12]
        return Fq12(a, Fq6(b.c0 * g, b.c1 * g, b.c2 * g))
    }

    /// self^e, by square-and-multiply.
    public func power(_ e: UInt256) -> Fq12 {
        var r = Fq12.one
        for i in (0..<e.bitWidth).reversed() {
            r = r.squared
            if e.bit(i) { r = r * self }
        }
        return r
    }
}

/// The Frobenius constants, derived from γ = ξ^((p−1)/6) at start-up rather than pasted in:
/// ξ^((p^i − 1)/6) = conj(ξ^((p^(i−1) − 1)/6)) · γ, since x^p is the conjugate in Fq2.
enum Frobenius {
    static let gamma: Fq2 = Fq2.xi.power(Fq.modulus.subtracting(UInt256(1)).0.divided(by: 6).quotient)

    /// ξ^((p^i − 1)/6) for i = 0…11.
    static let sixth: [Fq2] = {
        var out = [Fq2.one]
        for _ in 1..<12 { out.append(out.last!.conjugate * gamma) }
        return out
    }()

    /// ξ^((p^i − 1)/3) and ξ^(2(p^i − 1)/3).
    static let fq6C1: [Fq2] = (0..<6).map { sixth[$0].squared }
    static let fq6C2: [Fq2] = (0..<6).map { sixth[$0].squared.squared }
    static let fq12C1: [Fq2] = sixth

    /// For the twist's Frobenius: ξ^((p−1)/3) and ξ^((p−1)/2).
    static let twistX: Fq2 = gamma.squared
    static let twistY: Fq2 = gamma.squared * gamma
}
