public import NearcardModel
public import NearcardProtocol

/// How an exchange ended, for whoever started it.
public enum SessionResult: Sendable {
    case completed(Contact, ExchangeOutcome)
    /// Initiator: the contact is stored but the responder's confirmation never came (docs/PROTOCOL.md
    /// §11): the peer may or may not hold ours; a confirmation query settles it later.
    case unconfirmed(Contact, ExchangeOutcome, ProtocolError)
    case failed(ProtocolError, peer: PeerIdentity?, byPeer: Bool)
}
