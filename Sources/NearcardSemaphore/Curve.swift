/// G1: y² = x³ + 3 over Fq (prime order r, cofactor 1).
public struct G1Point: Sendable, Equatable {
    public var x: Fq, y: Fq
    public var isInfinity: Bool

    public init(x: Fq, y: Fq) { self.x = x; self.y = y; isInfinity = false }
    public static let infinity = G1Point(infinity: ())
    private init(infinity: ()) { x = .zero; y = .zero; isInfinity = true }

    public static let b = Fq(UInt256(3))
    public static let generator = G1Point(x: .one, y: Fq(UInt256(2)))

    public var isOnCurve: Bool { isInfinity || y.squared == x.squared * x + G1Point.b }
    public var negated: G1Point { isInfinity ? self : G1Point(x: x, y: -y) }

    /// k·P, double-and-add in Jacobian coordinates.
    public func multiplied(by k: UInt256) -> G1Point {
        var acc = G1Jacobian.infinity
        let p = G1Jacobian(self)
        for i in (0..<k.bitWidth).reversed() {
            acc = acc.doubled
            if k.bit(i) { acc = acc + p }
        }
        return acc.affine
    }

    public static func + (a: G1Point, b: G1Point) -> G1Point { (G1Jacobian(a) + G1Jacobian(b)).affine }
}

/// Jacobian coordinates: (X, Y, Z) is (X/Z², Y/Z³).
struct G1Jacobian {
    var x: Fq, y: Fq, z: Fq
    static let infinity = G1Jacobian(x: .one, y: .one, z: .zero)

    init(x: Fq, y: Fq, z: Fq) { self.x = x; self.y = y; self.z = z }
    init(_ p: G1Point) { self = p.isInfinity ? .infinity : G1Jacobian(x: p.x, y: p.y, z: .one) }

    var isInfinity: Bool { z.isZero }

    var doubled: G1Jacobian {
        if isInfinity { return self }
        // dbl-2009-l (a = 0)
        let a = x.squared, b = y.squared, c = b.squared
        let d = ((x + b).squared - a - c).doubled
        let e = a.doubled + a
        let f = e.squared
        let x3 = f - d.doubled
        let y3 = e * (d - x3) - c.doubled.doubled.doubled
        return G1Jacobian(x: x3, y: y3, z: (y * z).doubled)
    }

    static func + (p: G1Jacobian, q: G1Jacobian) -> G1Jacobian {
        if p.isInfinity { return q }
        if q.isInfinity { return p }
        // add-2007-bl
        let z1z1 = p.z.squared, z2z2 = q.z.squared
        let u1 = p.x * z2z2, u2 = q.x * z1z1
        let s1 = p.y * q.z * z2z2, s2 = q.y * p.z * z1z1
        if u1 == u2 { return s1 == s2 ? p.doubled : .infinity }
        let h = u2 - u1
        let i = h.doubled.squared
        let j = h * i
        let r = (s2 - s1).doubled
        let v = u1 * i
        let x3 = r.squared - j - v.doubled
        let y3 = r * (v - x3) - (s1 * j).doubled
        let z3 = ((p.z + q.z).squared - z1z1 - z2z2) * h
        return G1Jacobian(x: x3, y: y3, z: z3)
    }

    var affine: G1Point {
        if isInfinity { return .infinity }
        let zi = z.inverse, zi2 = zi.squared
        return G1Point(x: x * zi2, y: y * zi2 * zi)
    }
}

/// G2: y² = x³ + 3/ξ over Fq2 (the D-type sextic twist), restricted to the order-r subgroup.
public struct G2Point: Sendable, Equatable {
    public var x: Fq2, y: Fq2
    public var isInfinity: Bool

    public init(x: Fq2, y: Fq2) { self.x = x; self.y = y; isInfinity = false }
    public static let infinity = G2Point(infinity: ())
    private init(infinity: ()) { x = .zero; y = .zero; isInfinity = true }

    public static let b: Fq2 = Fq2(Fq(UInt256(3)), .zero) * Fq2.xi.inverse

    public static let generator = G2Point(
        x: Fq2(Fq(decimal: "10857046999023057135944570762232829481370756359578518086990519993285655852781")!,
               Fq(decimal: "11559732032986387107991004021392285783925812861821192530917403151452391805634")!),
        y: Fq2(Fq(decimal: "8495653923123431417604973247489272438418190587263600148770280649306958101930")!,
               Fq(decimal: "4082367875863433681332203403145435568316851327593401208105741076214120093531")!))

    public var isOnCurve: Bool { isInfinity || y.squared == x.squared * x + G2Point.b }

    /// Whether r·P = O: the twist has a large cofactor, and a point outside the subgroup would let a
    /// proof escape the pairing equation's meaning.
    public var isInSubgroup: Bool { multiplied(by: Groth16.scalarModulus).isInfinity }

    public func multiplied(by k: UInt256) -> G2Point {
        var acc = G2Jacobian.infinity
        let p = G2Jacobian(self)
        for i in (0..<k.bitWidth).reversed() {
            acc = acc.doubled
            if k.bit(i) { acc = acc + p }
        }
        return acc.affine
    }

    public var negated: G2Point { isInfinity ? self : G2Point(x: x, y: -y) }

    /// The twist's Frobenius: (x^p · ξ^((p−1)/3), y^p · ξ^((p−1)/2)).
    var frobenius: G2Point { G2Point(x: x.conjugate * Frobenius.twistX, y: y.conjugate * Frobenius.twistY) }
}

struct G2Jacobian {
    var x: Fq2, y: Fq2, z: Fq2
    static let infinity = G2Jacobian(x: .one, y: .one, z: .zero)

    init(x: Fq2, y: Fq2, z: Fq2) { self.x = x; self.y = y; self.z = z }
    init(_ p: G2Point) { self = p.isInfinity ? .infinity : G2Jacobian(x: p.x, y: p.y, z: .one) }

    var isInfinity: Bool { z.isZero }

    var doubled: G2Jacobian {
        if isInfinity { return self }
        let a = x.squared, b = y.squared, c = b.squared
        let d = ((x + b).squared - a - c).doubled
        let e = a.doubled + a
        let f = e.squared
        let x3 = f - d.doubled
        let y3 = e * (d - x3) - c.doubled.doubled.doubled
        return G2Jacobian(x: x3, y: y3, z: (y * z).doubled)
    }

    static func + (p: G2Jacobian, q: G2Jacobian) -> G2Jacobian {
        if p.isInfinity { return q }
        if q.isInfinity { return p }
        let z1z1 = p.z.squared, z2z2 = q.z.squared
        let u1 = p.x * z2z2, u2 = q.x * z1z1
        let s1 = p.y * q.z * z2z2, s2 = q.y * p.z * z1z1
        if u1 == u2 { return s1 == s2 ? p.doubled : .infinity }
        let h = u2 - u1
        let i = h.doubled.squared
        let j = h * i
        let r = (s2 - s1).doubled
        let v = u1 * i
        let x3 = r.squared - j - v.doubled
        let y3 = r * (v - x3) - (s1 * j).doubled
        let z3 = ((p.z + q.z).squared - z1z1 - z2z2) * h
        return G2Jacobian(x: x3, y: y3, z: z3)
    }

    var affine: G2Point {
        if isInfinity { return .infinity }
        let zi = z.inverse, zi2 = zi.squared
        return G2Point(x: x * zi2, y: y * zi2 * zi)
    }
}
