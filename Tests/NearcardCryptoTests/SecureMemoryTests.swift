import Foundation
import NearcardCrypto
import Testing

/// A serving node's long-term keys in locked memory (issue 25 part 5): the same keys, signing and
/// agreeing as before, from buffers libsodium locked in RAM, and the process's locked memory grows.
@Suite struct SecureMemoryTests {
    static func lockedKiB() -> Int {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmLck:") } ?? ""
        return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? 0
    }

    @Test func lockedKeysAreTheSameKeysInLockedMemory() throws {
        #expect(SecureMemory.enable(), "OpenSSL's secure heap")
        let keys = IdentityKeys.generate()
        let locked = try keys.locked()
        #expect(locked.areLocked && !keys.areLocked)
        #expect(Self.lockedKiB() > 0, "nothing is locked in RAM")
        #expect(locked.p256.publicKey == keys.p256.publicKey)
        #expect(locked.x25519.publicKey == keys.x25519.publicKey)
        #expect(locked.ed25519.publicKey == keys.ed25519.publicKey)
        let message = Array("nearcard".utf8)
        #expect(locked.ed25519.signature(for: message) == keys.ed25519.signature(for: message), "Ed25519 is deterministic")
        #expect(keys.p256.publicKey.isValidSignature(try locked.p256.signature(for: message), for: message))
        let peer = X25519.PrivateKey()
        #expect(try locked.x25519.sharedSecret(with: peer.publicKey).constantTimeEquals(try keys.x25519.sharedSecret(with: peer.publicKey)))
    }

    @Test func aLockedBufferHoldsItsBytes() {
        let b = SecureBytes(Array(0..<48) as [UInt8]).lockedCopy()
        #expect(b.isLocked && b.count == 48)
        #expect(b.bytes == Array(0..<48))
    }
}
