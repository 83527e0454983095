import ArgumentParser
import Foundation
import NearcardCrypto
import NearcardModel
import NearcardNode
import NearcardSemaphore

/// The group proof a user puts on their own card: it must verify and be bound to their DID, or
/// every recipient would mark the card failed.
enum IssuerProofs {
    static func checked(_ file: String, holderDID: String) throws -> SemaphoreProof {
        let text = try Semaphore.Verify.read(file)
        let proof: SemaphoreProof
        do { proof = try SemaphoreProof(json: text) } catch { throw CLIError(.malformedInput, "\(file): \(error.description)") }
        guard SemaphoreBinding.isBound(proof, to: holderDID) else {
            throw CLIError(
                .checkFailed,
                t(
                    """
                    %1$@: the proof is not bound to your DID, so recipients would refuse it; make it with the message \
                    and scope from: nearcard semaphore binding
                    """, file))
        }
        if case .failure(let f) = SemaphoreVerifier.verify(proof) { throw CLIError(.checkFailed, "\(file): \(f.description)") }
        return proof
    }
}
