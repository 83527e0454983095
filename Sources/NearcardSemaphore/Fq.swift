/// The base field of BN254 (alt_bn128): integers mod
/// p = 21888242871839275222246405745257275088696311157297823662689037894645226208583,
/// in Montgomery form (R = 2^256) for fast multiplication.
public struct Fq: Sendable, Equatable {
    @usableFromInline var l0, l1, l2, l3: UInt64

    @inlinable init(raw l0: UInt64, _ l1: UInt64, _ l2: UInt64, _ l3: UInt64) {
        self.l0 = l0; self.l1 = l1; self.l2 = l2; self.l3 = l3
    }

    public static let modulus = UInt256(0x3c208c16d87cfd47, 0x97816a916871ca8d, 0xb85045b68181585d, 0x30644e72e131a029)
    @usableFromInline static let p0: UInt64 = 0x3c208c16d87cfd47
    @usableFromInline static let p1: UInt64 = 0x97816a916871ca8d
    @usableFromInline static let p2: UInt64 = 0xb85045b68181585d
    @usableFromInline static let p3: UInt64 = 0x30644e72e131a029
    /// −p⁻¹ mod 2^64, computed by Newton's iteration.
    @usableFromInline static let inv: UInt64 = {
        var x: UInt64 = 1
        for _ in 0..<6 { x = x &* (2 &- p0 &* x) }
        return 0 &- x
    }()
    /// R² mod p, computed by doubling 1 512 times.
    static let r2: Fq = {
        var x = Fq(raw: 1, 0, 0, 0)
        for _ in 0..<512 { x = x + x }
        return x
    }()

    public static let zero = Fq(raw: 0, 0, 0, 0)
    public static let one = Fq(UInt256(1))

    /// From a canonical integer (must be < p).
    public init(_ v: UInt256) {
        precondition(v < Fq.modulus, "a field element must be below p")
        self = Fq(raw: v.limbs.0, v.limbs.1, v.limbs.2, v.limbs.3) * Fq.r2
    }

    /// Parses a decimal field element; nil when it is not a number below p.
    public init?(decimal: String) {
        guard let v = UInt256(decimal: decimal), v < Fq.modulus else { return nil }
        self.init(v)
    }

    /// The canonical integer.
    public var value: UInt256 {
        let x = self * Fq(raw: 1, 0, 0, 0)
        return UInt256(x.l0, x.l1, x.l2, x.l3)
    }

    public var isZero: Bool { l0 | l1 | l2 | l3 == 0 }

    @inlinable @inline(__always)
    static func reduceOnce(_ a0: UInt64, _ a1: UInt64, _ a2: UInt64, _ a3: UInt64) -> Fq {
        // Subtract p when a ≥ p.
        let (s0, b0) = a0.subtractingReportingOverflow(p0)
        let (t1, c1) = a1.subtractingReportingOverflow(p1)
        let (s1, d1) = t1.subtractingReportingOverflow(b0 ? 1 : 0)
        let (t2, c2) = a2.subtractingReportingOverflow(p2)
        let (s2, d2) = t2.subtractingReportingOverflow((c1 || d1) ? 1 : 0)
        let (t3, c3) = a3.subtractingReportingOverflow(p3)
        let (s3, d3) = t3.subtractingReportingOverflow((c2 || d2) ? 1 : 0)
        if c3 || d3 { return Fq(raw: a0, a1, a2, a3) }
        return Fq(raw: s0, s1, s2, s3)
    }

    @inlinable @inline(__always)
    public static func + (a: Fq, b: Fq) -> Fq {
        // p < 2^254, so the sum of two reduced elements never overflows 256 bits.
        let (s0, c0) = a.l0.addingReportingOverflow(b.l0)
        let (t1, c1) = a.l1.addingReportingOverflow(b.l1)
        let (s1, d1) = t1.addingReportingOverflow(c0 ? 1 : 0)
        let (t2, c2) = a.l2.addingReportingOverflow(b.l2)
        let (s2, d2) = t2.addingReportingOverflow((c1 || d1) ? 1 : 0)
        let s3 = a.l3 &+ b.l3 &+ ((c2 || d2) ? 1 : 0)
        return reduceOnce(s0, s1, s2, s3)
    }

    @inlinable @inline(__always)
    public static func - (a: Fq, b: Fq) -> Fq {
        let (s0, b0) = a.l0.subtractingReportingOverflow(b.l0)
        let (t1, c1) = a.l1.subtractingReportingOverflow(b.l1)
        let (s1, d1) = t1.subtractingReportingOverflow(b0 ? 1 : 0)
        let (t2, c2) = a.l2.subtractingReportingOverflow(b.l2)
        let (s2, d2) = t2.subtractingReportingOverflow((c1 || d1) ? 1 : 0)
        let (t3, c3) = a.l3.subtractingReportingOverflow(b.l3)
        let (s3, d3) = t3.subtractingReportingOverflow((c2 || d2) ? 1 : 0)
        guard c3 || d3 else { return Fq(raw: s0, s1, s2, s3) }
        // Borrowed: add p back.
        let (u0, e0) = s0.addingReportingOverflow(p0)
        let (v1, e1) = s1.addingReportingOverflow(p1)
        let (u1, f1) = v1.addingReportingOverflow(e0 ? 1 : 0)
        let (v2, e2) = s2.addingReportingOverflow(p2)
        let (u2, f2) = v2.addingReportingOverflow((e1 || f1) ? 1 : 0)
        let u3 = s3 &+ p3 &+ ((e2 || f2) ? 1 : 0)
        return Fq(raw: u0, u1, u2, u3)
    }

    @inlinable @inline(__always)
    public static prefix func - (a: Fq) -> Fq { Fq.zero - a }

    @inlinable @inline(__always)
    public var doubled: Fq { self + self }

    /// t + a·b + carry, as (high, low).
    @inlinable @inline(__always)
    static func mac(_ t: UInt64, _ a: UInt64, _ b: UInt64, _ carry: UInt64) -> (UInt64, UInt64) {
        let (hi, lo) = a.multipliedFullWidth(by: b)
        let (l1, o1) = lo.addingReportingOverflow(t)
        let (l2, o2) = l1.addingReportingOverflow(carry)
        return (hi &+ (o1 ? 1 : 0) &+ (o2 ? 1 : 0), l2)
    }

    /// Montgomery multiplication (CIOS).
    @inlinable
    public static func * (a: Fq, b: Fq) -> Fq {
        var t0: UInt64 = 0, t1: UInt64 = 0, t2: UInt64 = 0, t3: UInt64 = 0, t4: UInt64 = 0
        @inline(__always) func round(_ bi: UInt64) {
            var c: UInt64
            (c, t0) = mac(t0, a.l0, bi, 0)
            (c, t1) = mac(t1, a.l1, bi, c)
            (c, t2) = mac(t2, a.l2, bi, c)
            (c, t3) = mac(t3, a.l3, bi, c)
            let (s4, o4) = t4.addingReportingOverflow(c)
            t4 = s4
            let t5: UInt64 = o4 ? 1 : 0
            let m = t0 &* inv
            var d: UInt64
            (d, _) = mac(t0, m, p0, 0)
            (d, t0) = mac(t1, m, p1, d)
            (d, t1) = mac(t2, m, p2, d)
            (d, t2) = mac(t3, m, p3, d)
            let (s3, o3) = t4.addingReportingOverflow(d)
            t3 = s3
            t4 = t5 &+ (o3 ? 1 : 0)
        }
        round(b.l0)
        round(b.l1)
        round(b.l2)
        round(b.l3)
        return reduceOnce(t0, t1, t2, t3)
    }

    @inlinable @inline(__always)
    public var squared: Fq { self * self }

    /// self^e.
    public func power(_ e: UInt256) -> Fq {
        var result = Fq.one
        for i in (0..<e.bitWidth).reversed() {
            result = result.squared
            if e.bit(i) { result = result * self }
        }
        return result
    }

    /// The inverse (Fermat); the inverse of zero is zero.
    public var inverse: Fq { power(Fq.modulus.subtracting(UInt256(2)).0) }
}
