internal import CSodium

/// Secret bytes in their own heap buffer, wiped with `sodium_memzero` when the last reference goes.
/// A **locked** buffer (long-term keys) comes from `sodium_malloc`: its pages are locked in RAM
/// (`mlock`: never swapped out), fenced by guard pages, and wiped by `sodium_free`.
///
/// Immutable once built, so it is safe to share between threads. `description` never shows the bytes.
public final class SecureBytes: @unchecked Sendable, CustomStringConvertible {
    private let buffer: UnsafeMutableRawBufferPointer
    /// Whether the buffer is `sodium_malloc`'s (locked, guarded).
    public let isLocked: Bool

    /// Wraps `count` bytes written by `fill`. The buffer is zeroed first. `locked`: in locked memory
    /// (falls back to an ordinary buffer when the system refuses to lock more).
    public init<E: Error>(count: Int, locked: Bool = false, fill: (UnsafeMutableRawBufferPointer) throws(E) -> Void) throws(E) {
        if locked { Sodium.ensureInitialized() }
        if locked, let p = sodium_malloc(max(count, 1)) {
            buffer = UnsafeMutableRawBufferPointer(start: p, count: max(count, 1))
            isLocked = true
        } else {
            buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(count, 1), alignment: 16)
            isLocked = false
        }
        let slice = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count])
        slice.initializeMemory(as: UInt8.self, repeating: 0)
        self.count = count
        do { try fill(slice) } catch {
            Self.free(buffer, locked: isLocked)
            throw error
        }
    }

    /// A copy in locked memory.
    public func lockedCopy() -> SecureBytes {
        SecureBytes(count: count, locked: true) { out in withUnsafeBytes { out.copyMemory(from: $0) } }
    }

    private static func free(_ buffer: UnsafeMutableRawBufferPointer, locked: Bool) {
        if locked {
            sodium_free(buffer.baseAddress) // wipes, unlocks, unmaps
        } else {
            sodium_memzero(buffer.baseAddress!, buffer.count)
            buffer.deallocate()
        }
    }

    /// Copies `bytes`. The caller should wipe its own copy if it was secret.
    public convenience init<C: Collection>(_ bytes: C) where C.Element == UInt8 {
        self.init(count: bytes.count) { out in _ = out.initializeMemory(as: UInt8.self, from: bytes) }
    }

    /// `count` random bytes from libsodium's CSPRNG.
    public static func random(count: Int) -> SecureBytes {
        Sodium.ensureInitialized()
        return SecureBytes(count: count) { if let base = $0.baseAddress { randombytes_buf(base, $0.count) } }
    }

    public let count: Int

    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
    }

    /// A copy as an array: only for encoders that must place the secret in a larger secret buffer.
    public var bytes: [UInt8] { withUnsafeBytes { Array($0) } }

    /// Constant-time comparison (`sodium_memcmp`).
    public func constantTimeEquals(_ other: SecureBytes) -> Bool {
        guard count == other.count else { return false }
        return withUnsafeBytes { a in other.withUnsafeBytes { b in sodium_memcmp(a.baseAddress, b.baseAddress, count) == 0 } }
    }

    public var description: String { "SecureBytes(\(count) bytes, redacted)" }

    deinit { Self.free(buffer, locked: isLocked) }
}

extension Array where Element == UInt8 {
    /// Overwrites the array's storage with zeros (for temporary copies of secrets).
    public mutating func wipe() {
        withUnsafeMutableBytes { if let base = $0.baseAddress { sodium_memzero(base, $0.count) } }
    }
}
