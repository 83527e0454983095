import NearcardCrypto

/// The short authentication string, commit-before-reveal (docs/PROTOCOL.md "SAS", docs/SECURITY.md):
///
///     I -> R : hello { sasCommit = SHA-256("nearcard/sas-commit/v1" ‖ 0x00 ‖ h ‖ N_I) }
///     R -> I : hello { sasNonce = N_R }
///     I -> R : sas-reveal { nonce = N_I }        R checks the commitment
///     SAS = SHA-256("nearcard/sas/v1" ‖ 0x00 ‖ h ‖ N_I ‖ N_R), first 4 bytes big-endian, mod 10^6
///
/// Each side fixes its nonce before it can see the other's, so a man in the middle (who has a
/// different h with each victim) cannot search for values that make the two screens agree: each
/// attempt matches with probability 10^-6.
public enum SAS {
    public static let nonceByteCount = 32

    public static func commitment(handshakeHash h: [UInt8], nonce: [UInt8]) -> [UInt8] {
        SHA256.hash(Array("nearcard/sas-commit/v1".utf8) + [0] + h + nonce)
    }

    /// The six-digit code, as a number 0…999999.
    public static func value(handshakeHash h: [UInt8], initiatorNonce: [UInt8], responderNonce: [UInt8]) -> UInt32 {
        let d = SHA256.hash(Array("nearcard/sas/v1".utf8) + [0] + h + initiatorNonce + responderNonce)
        let n = UInt32(d[0]) << 24 | UInt32(d[1]) << 16 | UInt32(d[2]) << 8 | UInt32(d[3])
        return n % 1_000_000
    }

    /// "123 456": how both screens show it.
    public static func display(_ value: UInt32) -> String {
        let digits = String(value)
        let padded = String(repeating: "0", count: 6 - digits.count) + digits
        return String(padded.prefix(3)) + " " + String(padded.suffix(3))
    }
}
