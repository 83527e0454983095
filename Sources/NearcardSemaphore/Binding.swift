import NearcardCrypto
public import NearcardModel

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

    /// Whether a proof was made for this holder: its message and scope are the holder's (the one binding
    /// check; a proof copied from another card fails it).
    public static func isBound(_ proof: SemaphoreProof, to holderDID: String) -> Bool {
        proof.message == message(holderDID: holderDID) && proof.scope == scope(holderDID: holderDID)
    }

    /// What a group proof says about a card, and so about the contact made from it.
    public enum Verdict: Sendable, Equatable, CustomStringConvertible {
        /// Verifies, is bound to the holder, and its root is a trusted group's.
        case trusted(group: String, nullifier: UInt256)
        /// Verifies and is bound, but its root is not a group the user trusts.
        case untrustedGroup(root: UInt256)
        case failed(String)

        public var description: String {
            switch self {
            case .trusted(let group, _): "a member of the trusted group “\(group)” (Semaphore proof verified)"
            case .untrustedGroup(let root):
                "a valid group proof, but its root \(root) is not a group you trust (nearcard group trust ROOT --name …)"
            case .failed(let why): "the group proof fails: \(why)"
            }
        }

        /// The status of a contact whose card carries this proof (docs/PROTOCOL.md §18), for every way a
        /// card arrives (an exchange, a scanned code): verified only for a trusted group; a valid proof of
        /// a group the user does not trust leaves it unverified; a failing one marks it failed.
        public var contactStatus: VerificationStatus {
            switch self {
            case .trusted: .verified
            case .untrustedGroup: .unverified
            case .failed: .failed
            }
        }

        /// The trusted group the proof shows membership of.
        public var group: String? {
            if case .trusted(let group, _) = self { group } else { nil }
        }
    }

    /// A trusted group as the check needs it: its name and, if pinned, the only tree depth it accepts.
    public struct TrustedGroup: Sendable {
        public let name: String
        public let depth: Int?
        public init(name: String, depth: Int?) {
            self.name = name
            self.depth = depth
        }
    }

    /// Checks a proof for a holder; `trusted(root)` gives the group when its root (decimal) is trusted.
    public static func check(_ text: String, holderDID: String, trusted: (String) -> TrustedGroup?) -> Verdict {
        check(text, holderDID: holderDID, trusted: trusted, verify: SemaphoreVerifier.verify)
    }

    /// The same, with the pairing check passed in (tests exercise the binding and trust rules with it).
    static func check(
        _ text: String, holderDID: String, trusted: (String) -> TrustedGroup?,
        verify: (SemaphoreProof) -> Result<Void, SemaphoreFailure>
    ) -> Verdict {
        let proof: SemaphoreProof
        do { proof = try SemaphoreProof(json: text) } catch { return .failed(error.description) }
        return check(proof, holderDID: holderDID, trusted: trusted, verify: verify)
    }

    /// Checks a parsed proof: bound to `holderDID` (when one is given: `semaphore verify` without
    /// `--holder` checks a bare proof), verifying, and a trusted group's within its pinned depth. The one
    /// place these rules are decided, for exchanges, scans and the `group`/`semaphore` commands.
    public static func check(_ proof: SemaphoreProof, holderDID: String?, trusted: (String) -> TrustedGroup?) -> Verdict {
        check(proof, holderDID: holderDID, trusted: trusted, verify: SemaphoreVerifier.verify)
    }

    static func check(
        _ proof: SemaphoreProof, holderDID: String?, trusted: (String) -> TrustedGroup?,
        verify: (SemaphoreProof) -> Result<Void, SemaphoreFailure>
    ) -> Verdict {
        if let holderDID, !isBound(proof, to: holderDID) {
            return .failed("the group proof is not bound to \(holderDID) (its message and scope are for another card)")
        }
        if case .failure(let f) = verify(proof) { return .failed(f.description) }
        guard let group = trusted(proof.root.description) else { return .untrustedGroup(root: proof.root) }
        if let depth = group.depth, depth != proof.depth {
            return .failed("the group “\(group.name)” accepts only depth-\(depth) proofs; this one has depth \(proof.depth)")
        }
        return .trusted(group: group.name, nullifier: proof.nullifier)
    }
}
