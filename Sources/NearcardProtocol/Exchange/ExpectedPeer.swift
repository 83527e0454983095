/// Who the initiator expects to reach (from discovery or the command line); checked against what
/// the peer proves.
public struct ExpectedPeer: Sendable, Equatable {
    public var fingerprint: String?
    public var did: String?
    public init(fingerprint: String? = nil, did: String? = nil) {
        self.fingerprint = fingerprint
        self.did = did
    }
}
