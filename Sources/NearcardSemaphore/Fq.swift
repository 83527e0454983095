/// The base field of BN254 (alt_bn128): integers mod
/// p = 21888242871839275222246405745257275088696311157297823662689037894645226208583,
/// in Montgomery form (R = 2^256) for fast multiplication.
public struct Fq: Sendable, Equatable {
    @usableFromInline var l0, l1, l2, l3: UInt64

    @inlinable init(raw l0: UInt64, _ l1: UInt64, _ l2: UInt64, _ l3: UInt64) {
        self.l0 = l0
        self.l1 = l1
        self.l2 = l2
        self.l3 = l3
    }

    public static let modulus = UInt256(0x3c20_8c16_d87c_fd47, 0x9781_6a91_6871_ca8d, 0xb850_45b6_8181_585d, 0x3064_4e72_e131_a029)
    @usableFromInline static let p0: UInt64 = 0x3c20_8c16_d87c_fd47
    @usableFromInline static let p1: UInt64 = 0x9781_6a91_6871_ca8d
    @usableFromInline static let p2: UInt64 = 0xb850_45b6_8181_585d
    @usableFromInline static let p3: UInt64 = 0x3064_4e72_e131_a029
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

    /// a + b + carry (carry 0 or 1), as (sum, carry out). Through UInt128 so that a chain of these
    /// compiles to add/adc with no branch.
    @inlinable @inline(__always)
    static func adc(_ a: UInt64, _ b: UInt64, _ carry: UInt64) -> (UInt64, UInt64) {
        let s = UInt128(a) &+ UInt128(b) &+ UInt128(carry)
        return (UInt64(truncatingIfNeeded: s), UInt64(truncatingIfNeeded: s >> 64))
    }

    /// a − b − borrow (borrow 0 or 1), as (difference, borrow out).
    @inlinable @inline(__always)
    static func sbb(_ a: UInt64, _ b: UInt64, _ borrow: UInt64) -> (UInt64, UInt64) {
        let d = UInt128(a) &- UInt128(b) &- UInt128(borrow)
        return (UInt64(truncatingIfNeeded: d), UInt64(truncatingIfNeeded: d >> 64) & 1)
    }

    // The reductions select with masks rather than branch: whether a sum or product lands above p
    // is data-dependent, and a mispredicted branch costs more than the selection.

    /// a mod p for a < 2p.
    @inlinable @inline(__always)
    static func reduceOnce(_ a0: UInt64, _ a1: UInt64, _ a2: UInt64, _ a3: UInt64) -> Fq {
        let (s0, b0) = sbb(a0, p0, 0)
        let (s1, b1) = sbb(a1, p1, b0)
        let (s2, b2) = sbb(a2, p2, b1)
        let (s3, b3) = sbb(a3, p3, b2)
        let keep = 0 &- b3 // all ones when a < p
        return Fq(
            raw: (a0 & keep) | (s0 & ~keep), (a1 & keep) | (s1 & ~keep),
            (a2 & keep) | (s2 & ~keep), (a3 & keep) | (s3 & ~keep))
    }

    @inlinable @inline(__always)
    public static func + (a: Fq, b: Fq) -> Fq {
        // p < 2^254, so the sum of two reduced elements never overflows 256 bits.
        let (s0, c0) = adc(a.l0, b.l0, 0)
        let (s1, c1) = adc(a.l1, b.l1, c0)
        let (s2, c2) = adc(a.l2, b.l2, c1)
        let s3 = a.l3 &+ b.l3 &+ c2
        return reduceOnce(s0, s1, s2, s3)
    }

    @inlinable @inline(__always)
    public static func - (a: Fq, b: Fq) -> Fq {
        let (s0, b0) = sbb(a.l0, b.l0, 0)
        let (s1, b1) = sbb(a.l1, b.l1, b0)
        let (s2, b2) = sbb(a.l2, b.l2, b1)
        let (s3, b3) = sbb(a.l3, b.l3, b2)
        // Borrowed: add p back (p masked to zero otherwise).
        let m = 0 &- b3
        let (u0, c0) = adc(s0, p0 & m, 0)
        let (u1, c1) = adc(s1, p1 & m, c0)
        let (u2, c2) = adc(s2, p2 & m, c1)
        let u3 = s3 &+ (p3 & m) &+ c2
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

    /// Montgomery multiplication: CIOS with the "no-carry" shortcut (as in gnark-crypto), which holds
    /// because p's top limb is below (2^64 − 1)/2 − 1: the running total then fits four limbs, with no
    /// fifth limb or carry flag to track between rounds.
    @inlinable
    public static func * (a: Fq, b: Fq) -> Fq {
        var t0: UInt64 = 0
        var t1: UInt64 = 0
        var t2: UInt64 = 0
        var t3: UInt64 = 0
        @inline(__always) func round(_ bi: UInt64) {
            var x: UInt64
            var y: UInt64
            (x, t0) = mac(t0, a.l0, bi, 0)
            let m = t0 &* inv
            (y, _) = mac(t0, m, p0, 0)
            (x, t1) = mac(t1, a.l1, bi, x)
            (y, t0) = mac(t1, m, p1, y)
            (x, t2) = mac(t2, a.l2, bi, x)
            (y, t1) = mac(t2, m, p2, y)
            (x, t3) = mac(t3, a.l3, bi, x)
            (y, t2) = mac(t3, m, p3, y)
            t3 = x &+ y
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
