import CSodium

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

    /// Constant-time equality of two byte strings of equal length (`sodium_memcmp`); false when the lengths differ.
    public static func constantTimeEquals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        if a.isEmpty { return true }
        return a.withUnsafeBytes { pa in b.withUnsafeBytes { pb in sodium_memcmp(pa.baseAddress, pb.baseAddress, a.count) == 0 } }
    }
}
