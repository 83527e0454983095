import NearcardQR
import NearcardSemaphore
import NearcardStore

/// Checks issuer (group-membership) proofs against the groups the user trusts.
public struct GroupProofs: GroupProofChecker {
    let database: NearcardDatabase

    public init(database: NearcardDatabase) { self.database = database }

    public func verdict(_ proof: String, holderDID: String) -> SemaphoreBinding.Verdict {
        SemaphoreBinding.check(proof, holderDID: holderDID) { root in (try? database.trustedGroup(root: root))?.name }
    }

    public func check(issuerProof: String, holderDID: String, shareID: String) -> (valid: Bool, trusted: Bool, reason: String) {
        switch verdict(issuerProof, holderDID: holderDID) {
        case .trusted(let group, _): (true, true, "a member of the trusted group “\(group)” (Semaphore proof verified)")
        case .untrustedGroup(let root): (true, false, "a valid group proof, but root \(String(root.description.prefix(12)))… is not a group you trust")
        case .failed(let why): (false, false, why)
        }
    }
}
