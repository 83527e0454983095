import NearcardQR
import NearcardSemaphore
import NearcardStore

/// Checks issuer (group-membership) proofs against the groups the user trusts.
public struct GroupProofs: GroupProofChecker {
    let database: NearcardDatabase

    public init(database: NearcardDatabase) { self.database = database }

    public func verdict(_ proof: String, holderDID: String) -> SemaphoreBinding.Verdict {
        SemaphoreBinding.check(proof, holderDID: holderDID) { root in
            (try? database.trustedGroup(root: root))?.map { SemaphoreBinding.TrustedGroup(name: $0.name, depth: $0.depth) }
        }
    }

    public func check(issuerProof: String, holderDID: String) -> (valid: Bool, group: String?, reason: String) {
        let verdict = verdict(issuerProof, holderDID: holderDID)
        switch verdict {
        case .trusted(let group, _): return (true, group, verdict.description)
        case .untrustedGroup: return (true, nil, verdict.description)
        case .failed(let why): return (false, nil, why)
        }
    }
}
