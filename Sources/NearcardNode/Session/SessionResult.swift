public import NearcardModel
public import NearcardProtocol
public import NearcardStore

/// How an exchange ended, for whoever started it.
public enum SessionResult: Sendable {
    case completed(Contact, ExchangeOutcome)
    /// Initiator: the contact is stored but the responder's confirmation never came (docs/PROTOCOL.md
    /// §11): the peer may or may not hold ours; a confirmation query settles it later.
    case unconfirmed(Contact, ExchangeOutcome, ProtocolError)
    /// `notStored`: this side's book refused the contact (a full disk, a read-only or unreachable
    /// store) after the cards crossed; the peer was told nothing was kept, and a face says what to fix.
    case failed(ProtocolError, peer: PeerIdentity?, byPeer: Bool, notStored: StoreError? = nil)
}
