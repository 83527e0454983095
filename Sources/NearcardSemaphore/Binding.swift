import NearcardCrypto

/// How a Semaphore proof is bound to the card that carries it (docs/PROTOCOL.md §18): its message and
/// scope must be these values for the card holder's DID, so a proof made for one holder cannot be
/// copied into another's card.
public enum SemaphoreBinding {
    /// message = SHA-256("nearcard/semaphore/message/v1" ‖ 0x00 ‖ DID) as a 256-bit big-endian integer.
    public static func message(holderDID: String) -> UInt256 {
        UInt256(bigEndian: SHA256.hash(Array("nearcard/semaphore/message/v1".utf8) + [0] + Array(holderDID.utf8)))
    }

    /// scope = SHA-256("nearcard/semaphore/scope/v1" ‖ 0x00 ‖ DID) as a 256-bit big-endian integer.
    public static func scope(holderDID: String) -> UInt256 {
        UInt256(bigEndian: SHA256.hash(Array("nearcard/semaphore/scope/v1".utf8) + [0] + Array(holderDID.utf8)))
    }

    /// What a verified group proof says about a card.
    public enum Verdict: Sendable, Equatable {
        /// Verifies, is bound to the holder, and its root is a trusted group's.
        case trusted(group: String, nullifier: UInt256)
        /// Verifies and is bound, but its root is not a group the user trusts.
        case untrustedGroup(root: UInt256)
        case failed(String)
    }

    /// Checks a proof for a holder; `trustedName(root)` names the group when its root is trusted.
    public static func check(_ text: String, holderDID: String, trustedName: (String) -> String?) -> Verdict {
        let proof: SemaphoreProof
        do { proof = try SemaphoreProof(json: text) } catch { return .failed(error.description) }
        guard proof.message == message(holderDID: holderDID), proof.scope == scope(holderDID: holderDID) else {
            return .failed("the group proof is not bound to \(holderDID) (its message and scope are for another card)")
        }
        if case .failure(let f) = SemaphoreVerifier.verify(proof) { return .failed(f.description) }
        guard let name = trustedName(proof.root.description) else { return .untrustedGroup(root: proof.root) }
        return .trusted(group: name, nullifier: proof.nullifier)
    }
}
