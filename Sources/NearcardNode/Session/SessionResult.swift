public import Foundation
public import NearcardModel
package import NearcardProtocol
public import NearcardStore

/// How an exchange ended, for whoever started it.
public enum SessionResult: Sendable {
    case completed(Contact, ExchangeSummary)
    /// Initiator: the contact is stored but the responder's confirmation never came (docs/PROTOCOL.md
    /// §11): the peer may or may not hold ours; a confirmation query settles it later.
    case unconfirmed(Contact, ExchangeSummary, ProtocolError)
    /// `notStored`: this side's book refused the contact (a full disk, a read-only or unreachable
    /// store) after the cards crossed; the peer was told nothing was kept, and a face says what to fix.
    case failed(ProtocolError, peer: PeerIdentity?, byPeer: Bool, notStored: StoreError? = nil)
}

/// What a face tells of an exchange that went through: who, the check code both screens showed, the
/// contacts both hold (when both asked, §22). The protocol's whole outcome (payloads, routes, hashes)
/// stays in the node.
public struct ExchangeSummary: Sendable {
    /// The peer as the session proved it.
    public let peer: PeerIdentity
    /// The check code both screens showed ("123 456").
    public let sas: String
    /// Common contacts, when both sides asked for them: our DIDs the peer says it holds too (by its
    /// own account), and how many DIDs its set has at most.
    public let commonContacts: (common: Set<String>, peerSetBound: Int)?
    /// The exchange's graph edge (which exchange the books hold, §11).
    package let graphEdgeID: String
    package let myMessage: String?
    package let theirMessage: String?

    package init(_ outcome: ExchangeOutcome) {
        peer = outcome.peer
        sas = outcome.sas
        commonContacts = outcome.commonContacts.map { ($0.common, $0.peerSetBound) }
        graphEdgeID = outcome.graphEdgeID
        myMessage = outcome.myMessage
        theirMessage = outcome.theirMessage
    }
}

/// An invitation to an exchange (docs/PROTOCOL.md §19) as a face shows it: who invites and where.
public struct ExchangeInvitation: Sendable, Equatable {
    package let invitation: Invitation
    package init(_ invitation: Invitation) { self.invitation = invitation }

    /// The inviter's name, if the invitation says one.
    public var name: String? { invitation.name }
    /// The fingerprint of the key the inviter's node will prove.
    public var fingerprint: String { invitation.fingerprint }
    /// Where the inviter's node listens (HOST:PORT).
    public var addresses: [String] { invitation.addresses }
    /// When it stops being accepted.
    public var expires: Date { Date(timeIntervalSince1970: TimeInterval(invitation.expires)) }
    /// The text a QR code or a message carries (`nearcard-invite:…`).
    public var text: String { invitation.text }
}
