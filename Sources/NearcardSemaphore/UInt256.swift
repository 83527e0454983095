/// A 256-bit unsigned integer (four 64-bit limbs, least significant first): enough arithmetic to
/// parse decimal field elements, compare them with moduli, and drive exponentiations.
public struct UInt256: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var limbs: (UInt64, UInt64, UInt64, UInt64)

    public init(_ l0: UInt64, _ l1: UInt64, _ l2: UInt64, _ l3: UInt64) { limbs = (l0, l1, l2, l3) }
    public init(_ v: UInt64) { self.init(v, 0, 0, 0) }
    public static let zero = UInt256(0)

    public var array: [UInt64] { [limbs.0, limbs.1, limbs.2, limbs.3] }
    init(array a: [UInt64]) { self.init(a[0], a[1], a[2], a[3]) }

    // Comparisons, bits and limbs read the tuple directly: exponentiations ask for every bit, and
    // building an array for each would put a heap allocation in their inner loop.
    public static func == (a: UInt256, b: UInt256) -> Bool {
        a.limbs.0 == b.limbs.0 && a.limbs.1 == b.limbs.1 && a.limbs.2 == b.limbs.2 && a.limbs.3 == b.limbs.3
    }
    public func hash(into h: inout Hasher) {
        h.combine(limbs.0)
        h.combine(limbs.1)
        h.combine(limbs.2)
        h.combine(limbs.3)
    }
    public static func < (a: UInt256, b: UInt256) -> Bool {
        for i in (0..<4).reversed() where a.limb(i) != b.limb(i) { return a.limb(i) < b.limb(i) }
        return false
    }

    public var isZero: Bool { limbs.0 | limbs.1 | limbs.2 | limbs.3 == 0 }

    /// Limb `i` (0 = least significant).
    @inline(__always) func limb(_ i: Int) -> UInt64 {
        switch i {
        case 0: limbs.0
        case 1: limbs.1
        case 2: limbs.2
        default: limbs.3
        }
    }

    /// Bit `i` (0 = least significant).
    public func bit(_ i: Int) -> Bool { (limb(i / 64) >> UInt64(i % 64)) & 1 == 1 }

    public var bitWidth: Int {
        for i in (0..<4).reversed() where limb(i) != 0 { return i * 64 + (64 - limb(i).leadingZeroBitCount) }
        return 0
    }

    /// Parses a non-negative decimal integer; nil if it is empty, has other characters, or is ≥ 2^256.
    public init?(decimal text: String) {
        guard !text.isEmpty, text.utf8.count <= 78, text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
        var a: [UInt64] = [0, 0, 0, 0]
        for d in text.utf8 {
            var carry = UInt64(d - 48)
            for i in 0..<4 {
                let (hi, lo) = a[i].multipliedFullWidth(by: 10)
                let (sum, o) = lo.addingReportingOverflow(carry)
                a[i] = sum
                carry = hi + (o ? 1 : 0)
            }
            guard carry == 0 else { return nil }
        }
        self.init(array: a)
    }

    /// From 32 big-endian bytes.
    public init(bigEndian bytes: [UInt8]) {
        precondition(bytes.count == 32)
        var a: [UInt64] = [0, 0, 0, 0]
        for i in 0..<32 { a[3 - i / 8] = a[3 - i / 8] << 8 | UInt64(bytes[i]) }
        self.init(array: a)
    }

    public var bigEndianBytes: [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        let a = array
        for i in 0..<32 { out[i] = UInt8(truncatingIfNeeded: a[3 - i / 8] >> UInt64(8 * (7 - i % 8))) }
        return out
    }

    /// Shifted right by `n` bits (n < 64).
    public func shiftedRight(_ n: Int) -> UInt256 {
        guard n > 0 else { return self }
        let a = array
        var out = [UInt64](repeating: 0, count: 4)
        for i in 0..<4 { out[i] = a[i] >> UInt64(n) | (i < 3 ? a[i + 1] << UInt64(64 - n) : 0) }
        return UInt256(array: out)
    }

    public func subtracting(_ b: UInt256) -> (UInt256, borrow: Bool) {
        let x = array
        let y = b.array
        var out = [UInt64](repeating: 0, count: 4)
        var borrow: UInt64 = 0
        for i in 0..<4 {
            let (d1, o1) = x[i].subtractingReportingOverflow(y[i])
            let (d2, o2) = d1.subtractingReportingOverflow(borrow)
            out[i] = d2
            borrow = (o1 || o2) ? 1 : 0
        }
        return (UInt256(array: out), borrow == 1)
    }

    /// Divided by a small number (for exponents such as (p − 1)/6).
    public func divided(by d: UInt64) -> (quotient: UInt256, remainder: UInt64) {
        var out = [UInt64](repeating: 0, count: 4)
        var rem: UInt64 = 0
        let a = array
        for i in (0..<4).reversed() {
            let (q, r) = d.dividingFullWidth((rem, a[i]))
            out[i] = q
            rem = r
        }
        return (UInt256(array: out), rem)
    }

    public var description: String {
        if isZero { return "0" }
        var digits: [Character] = []
        var v = self
        while !v.isZero {
            let (q, r) = v.divided(by: 10)
            digits.append(Character(String(r)))
            v = q
        }
        return String(digits.reversed())
    }
}
