/// Who the initiator expects to reach (from discovery, a contact, a QR invitation or the command
/// line); checked against what the peer proves.
public struct ExpectedPeer: Sendable, Equatable {
    public var fingerprint: String?
    public var did: String?
    /// The contact's presence key, when discovery recognised its tag (docs/PROTOCOL.md §3): the
    /// initiator then asks the responder to prove itself first (§6.2), and `did` must be set. Nil for
    /// a stranger or a peer dialled by address.
    public var presenceKey: [UInt8]?
    public init(fingerprint: String? = nil, did: String? = nil, presenceKey: [UInt8]? = nil) {
        self.fingerprint = fingerprint
        self.did = did
        self.presenceKey = presenceKey
    }
}
