internal import CSodium

/// libsodium's process-wide set-up and its small helpers.
public enum Sodium {
    private static let initialised: Bool = sodium_init() >= 0

    /// Calls `sodium_init` once; every wrapper calls this before its first libsodium call.
    @inline(__always)
    public static func ensureInitialized() {
        precondition(initialised, "libsodium could not be initialised (sodium_init failed)")
    }

    /// `count` random bytes (not for secrets that must be wiped: use `SecureBytes.random`).
    public static func randomBytes(_ count: Int) -> [UInt8] {
        ensureInitialized()
        var out = [UInt8](repeating: 0, count: count)
        out.withUnsafeMutableBytes { if let base = $0.baseAddress { randombytes_buf(base, $0.count) } }
        return out
    }

    /// A random (version 4) UUID in its usual upper-case text form, from libsodium's generator
    /// (Foundation's `UUID()` opens and reads /dev/urandom on each call on Linux).
    public static func randomUUIDString() -> String {
        var b = randomBytes(16)
        b[6] = (b[6] & 0x0F) | 0x40
        b[8] = (b[8] & 0x3F) | 0x80
        let hex = Hex.encode(b).uppercased()
        let u = Array(hex.utf8)
        func part(_ r: Range<Int>) -> String { String(decoding: u[r], as: UTF8.self) }
        return [part(0..<8), part(8..<12), part(12..<16), part(16..<20), part(20..<32)].joined(separator: "-")
    }

    /// Constant-time equality of two byte strings of equal length (`sodium_memcmp`); false when the lengths differ.
    public static func constantTimeEquals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        if a.isEmpty { return true }
        return a.withUnsafeBytes { pa in b.withUnsafeBytes { pb in sodium_memcmp(pa.baseAddress, pb.baseAddress, a.count) == 0 } }
    }
}
