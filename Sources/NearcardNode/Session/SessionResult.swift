import NearcardModel
import NearcardProtocol

/// How an exchange ended, for whoever started it.
public enum SessionResult: Sendable {
    case completed(Contact, ExchangeOutcome)
    case failed(ProtocolError, peer: PeerIdentity?, byPeer: Bool)
}
