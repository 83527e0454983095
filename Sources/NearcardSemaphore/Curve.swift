/// G1: y² = x³ + 3 over Fq (prime order r, cofactor 1).
public struct G1Point: Sendable, Equatable {
    public var x: Fq, y: Fq
    public var isInfinity: Bool

    public init(x: Fq, y: Fq) {
        self.x = x
        self.y = y
        isInfinity = false
    }
    public static let infinity = G1Point(infinity: ())
    private init(infinity: ()) {
        x = .zero
        y = .zero
        isInfinity = true
    }

    public static let b = Fq(UInt256(3))
    public static let generator = G1Point(x: .one, y: Fq(UInt256(2)))

    public var isOnCurve: Bool { isInfinity || y.squared == x.squared * x + G1Point.b }
    public var negated: G1Point { isInfinity ? self : G1Point(x: x, y: -y) }

    /// k·P, double-and-add in Jacobian coordinates.
    public func multiplied(by k: UInt256) -> G1Point { scalarMultiple(k) }

    public static func + (a: G1Point, b: G1Point) -> G1Point { (G1Jacobian(a) + G1Jacobian(b)).affine }
}

/// G2: y² = x³ + 3/ξ over Fq2 (the D-type sextic twist), restricted to the order-r subgroup.
public struct G2Point: Sendable, Equatable {
    public var x: Fq2, y: Fq2
    public var isInfinity: Bool

    public init(x: Fq2, y: Fq2) {
        self.x = x
        self.y = y
        isInfinity = false
    }
    public static let infinity = G2Point(infinity: ())
    private init(infinity: ()) {
        x = .zero
        y = .zero
        isInfinity = true
    }

    public static let b: Fq2 = Fq2(Fq(UInt256(3)), .zero) * Fq2.xi.inverse

    public static let generator = G2Point(
        x: Fq2(
            Fq(decimal: "10857046999023057135944570762232829481370756359578518086990519993285655852781")!,
            Fq(decimal: "11559732032986387107991004021392285783925812861821192530917403151452391805634")!),
        y: Fq2(
            Fq(decimal: "8495653923123431417604973247489272438418190587263600148770280649306958101930")!,
            Fq(decimal: "4082367875863433681332203403145435568316851327593401208105741076214120093531")!))

    public var isOnCurve: Bool { isInfinity || y.squared == x.squared * x + G2Point.b }

    /// Whether P is in the order-r subgroup: the twist has a large cofactor, and a point outside the
    /// subgroup would let a proof escape the pairing equation's meaning.
    ///
    /// Checked as ψ(P) = [6x²]P, where ψ is `frobenius` (the twist's p-power endomorphism): on G2 it
    /// acts as multiplication by p ≡ t − 1 = 6x² (mod r), and El Housni, Guillevic and Piellard
    /// (eprint 2022/352 §4.3) prove that for BN curves no point outside G2 satisfies it (ark-bn254 checks
    /// the same). A 127-bit multiple instead of r·P (254 bits); `isInSubgroupByOrder` is the plain
    /// test, which the tests compare it with.
    public var isInSubgroup: Bool {
        isInfinity || multiplied(bySignedDigits: G2Point.sixXSquaredNAF).equals(frobenius)
    }

    /// Whether r·P = O (the definition, by plain double-and-add).
    public var isInSubgroupByOrder: Bool { multiplied(by: Groth16.scalarModulus).isInfinity }

    /// The NAF digits of 6x², most significant first.
    static let sixXSquaredNAF: [Int8] = Pairing.naf(6 * UInt128(Pairing.x) * UInt128(Pairing.x)).reversed()

    public func multiplied(by k: UInt256) -> G2Point { scalarMultiple(k) }

    public var negated: G2Point { isInfinity ? self : G2Point(x: x, y: -y) }

    /// The twist's Frobenius: (x^p · ξ^((p−1)/3), y^p · ξ^((p−1)/2)).
    var frobenius: G2Point { G2Point(x: x.conjugate * Frobenius.twistX, y: y.conjugate * Frobenius.twistY) }
}

extension G1Point: AffinePoint {}
extension G2Point: AffinePoint {}
typealias G1Jacobian = Jacobian<G1Point>
typealias G2Jacobian = Jacobian<G2Point>

/// The field arithmetic the curve formulas need: Fq for G1, Fq2 for G2.
protocol CurveField: Equatable {
    static var zero: Self { get }
    static var one: Self { get }
    var isZero: Bool { get }
    var doubled: Self { get }
    var squared: Self { get }
    var inverse: Self { get }
    static func + (a: Self, b: Self) -> Self
    static func - (a: Self, b: Self) -> Self
    static func * (a: Self, b: Self) -> Self
}

extension Fq: CurveField {}
extension Fq2: CurveField {}

/// An affine point of y² = x³ + b (a = 0) over a CurveField; `isInfinity` marks the point at infinity.
protocol AffinePoint {
    associatedtype Field: CurveField
    var x: Field { get }
    var y: Field { get }
    var isInfinity: Bool { get }
    init(x: Field, y: Field)
    static var infinity: Self { get }
}

extension AffinePoint {
    /// k·P, double-and-add in Jacobian coordinates.
    func scalarMultiple(_ k: UInt256) -> Self {
        var acc = Jacobian<Self>.infinity
        let p = Jacobian(self)
        for i in (0..<k.bitWidth).reversed() {
            acc = acc.doubled
            if k.bit(i) { acc = acc + p }
        }
        return acc.affine
    }
}

extension AffinePoint {
    /// k·P in Jacobian coordinates, for k given by signed binary digits (each −1, 0 or 1, most
    /// significant first, the first one 1, such as a NAF): a −1 digit adds −P, which costs nothing.
    func multiplied(bySignedDigits digits: [Int8]) -> Jacobian<Self> {
        if isInfinity { return .infinity }
        let minus = Self(x: x, y: .zero - y)
        var acc = Jacobian(self)
        for d in digits.dropFirst() {
            acc = acc.doubled
            if d == 1 { acc = acc.adding(self) } else if d == -1 { acc = acc.adding(minus) }
        }
        return acc
    }
}

/// Jacobian coordinates: (X, Y, Z) is (X/Z², Y/Z³).
struct Jacobian<Point: AffinePoint> {
    typealias F = Point.Field
    var x: F, y: F, z: F
    static var infinity: Jacobian { Jacobian(x: .one, y: .one, z: .zero) }

    init(x: F, y: F, z: F) {
        self.x = x
        self.y = y
        self.z = z
    }
    init(_ p: Point) { self = p.isInfinity ? .infinity : Jacobian(x: p.x, y: p.y, z: .one) }

    var isInfinity: Bool { z.isZero }

    var doubled: Jacobian {
        if isInfinity { return self }
        // dbl-2009-l (a = 0)
        let a = x.squared
        let b = y.squared
        let c = b.squared
        let d = ((x + b).squared - a - c).doubled
        let e = a.doubled + a
        let f = e.squared
        let x3 = f - d.doubled
        let y3 = e * (d - x3) - c.doubled.doubled.doubled
        return Jacobian(x: x3, y: y3, z: (y * z).doubled)
    }

    static func + (p: Jacobian, q: Jacobian) -> Jacobian {
        if p.isInfinity { return q }
        if q.isInfinity { return p }
        // add-2007-bl
        let z1z1 = p.z.squared
        let z2z2 = q.z.squared
        let u1 = p.x * z2z2
        let u2 = q.x * z1z1
        let s1 = p.y * q.z * z2z2
        let s2 = q.y * p.z * z1z1
        if u1 == u2 { return s1 == s2 ? p.doubled : .infinity }
        let h = u2 - u1
        let i = h.doubled.squared
        let j = h * i
        let r = (s2 - s1).doubled
        let v = u1 * i
        let x3 = r.squared - j - v.doubled
        let y3 = r * (v - x3) - (s1 * j).doubled
        let z3 = ((p.z + q.z).squared - z1z1 - z2z2) * h
        return Jacobian(x: x3, y: y3, z: z3)
    }

    /// self + q for an affine q (madd-2007-bl: Z2 = 1 saves a third of the general addition).
    func adding(_ q: Point) -> Jacobian {
        if q.isInfinity { return self }
        if isInfinity { return Jacobian(q) }
        let z1z1 = z.squared
        let u2 = q.x * z1z1
        let s2 = q.y * z * z1z1
        if u2 == x { return s2 == y ? doubled : .infinity }
        let h = u2 - x
        let hh = h.squared
        let i = hh.doubled.doubled
        let j = h * i
        let r = (s2 - y).doubled
        let v = x * i
        let x3 = r.squared - j - v.doubled
        let y3 = r * (v - x3) - (y * j).doubled
        let z3 = (z + h).squared - z1z1 - hh
        return Jacobian(x: x3, y: y3, z: z3)
    }

    /// Whether this is the affine point q (no inversion: X = x·Z², Y = y·Z³).
    func equals(_ q: Point) -> Bool {
        if isInfinity || q.isInfinity { return isInfinity && q.isInfinity }
        let zz = z.squared
        return x == q.x * zz && y == q.y * zz * z
    }

    var affine: Point {
        if isInfinity { return .infinity }
        let zi = z.inverse
        let zi2 = zi.squared
        return Point(x: x * zi2, y: y * zi2 * zi)
    }
}
