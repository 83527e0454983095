/// Who the initiator expects to reach (from discovery or the command line); checked against what
/// the peer proves.
public struct ExpectedPeer: Sendable, Equatable {
    public var fingerprint: String?
    public var did: String?
    /// The presence key of the contact a discovered peer's tag resolved to (docs/PROTOCOL.md §3), nil
    /// for a stranger or a peer dialled by address.
    public var presenceKey: [UInt8]?

    public init(fingerprint: String? = nil, did: String? = nil, presenceKey: [UInt8]? = nil) {
        self.fingerprint = fingerprint
        self.did = did
        self.presenceKey = presenceKey
    }
}
