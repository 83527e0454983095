import NearcardModel
package import NearcardSemaphore

/// The groups a user trusts (`nearcard group trust`), as the one group-proof check asks for them: by
/// root, with the tree depth the user pinned. Exchanges (the node) and scans (NearcardScan) both decide with it.
package enum GroupTrust {
    package static func lookup(_ database: NearcardDatabase) -> @Sendable (String) -> SemaphoreBinding.TrustedGroup? {
        { root in (try? database.trustedGroup(root: root))?.map { SemaphoreBinding.TrustedGroup(name: $0.name, depth: $0.depth) } }
    }
}
