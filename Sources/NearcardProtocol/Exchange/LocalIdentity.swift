public import NearcardCrypto

/// Who this node is in every session: its keys and the name it says in the hello. Fixed for the
/// node's life (a new identity is a new node).
public struct LocalIdentity: Sendable {
    public let keys: IdentityKeys
    public let name: String?
    /// The public side, derived once.
    public let identity: PublicIdentity

    public init(keys: IdentityKeys, name: String?) {
        self.keys = keys
        self.name = name
        self.identity = keys.publicIdentity(name: name)
    }
}
