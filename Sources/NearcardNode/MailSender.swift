package import Foundation
internal import NIOConcurrencyHelpers
import NearcardCrypto
package import NearcardDiscovery
package import NearcardModel
import NearcardProtocol
import NearcardStore

/// Sending a queued message: open the contact's sealed route, find the contact's node (over DNS-SD, by
/// the presence tag the contact's presence key resolves; then the route's address hints), and deliver
/// over a pinned Noise session.
package struct MailSender: Sendable {
    let context: NodeContext

    package init(context: NodeContext) { self.context = context }

    /// Where and how to reach a contact: from the route it gave us.
    package struct Target: Sendable {
        package let route: RouteRecord
        package let contact: Contact
        /// The presence key the contact handed over (nil: their node cannot be recognised on the LAN,
        /// only reached at the route's hints).
        package let presenceKey: [UInt8]?

        /// Whether a discovered announcement is the contact's node: its tag made with their presence key.
        package func isAnnounced(by peer: DiscoveredPeer) -> Bool {
            guard let presenceKey, let tag = peer.txt.tag else { return false }
            return Presence.matches(tag, key: presenceKey)
        }
    }

    package func target(for contact: Contact) throws(NodeError) -> Target {
        guard let sealed = contact.sealedRoute, let did = contact.didPublicKey else {
            throw NodeError(.noRoute, Phrase("%1$@ gave no sealed route (only contacts from an exchange can be messaged)", contact.name))
        }
        switch SealedRoute.open(
            sealed, with: context.keys.x25519, expectedIssuer: did, expectedRecipient: context.identity.did,
            expectedSignKey: contact.signPubKey.flatMap { try? Ed25519.PublicKey(rawRepresentation: Base64.decode($0)) },
            now: Int64(Date().timeIntervalSince1970))
        {
        case .success(let route):
            return Target(route: route, contact: contact, presenceKey: try? context.database.presenceKey(contactDID: did))
        case .failure(let f): throw NodeError(.noRoute, Phrase("cannot use the route %1$@ gave: %2$@", contact.name, "\(f)"))
        }
    }

    /// Tries each address in turn; returns on the first delivery (or duplicate acknowledgement).
    package func deliver(_ item: OutboxItem, to target: Target, addresses: [PeerAddress]) async -> Result<Bool, ProtocolError> {
        await firstAnswer(from: target, at: addresses) { address in
            await Dialer.deliver(item.envelope, token: target.route.mailboxToken, pinned: target.route.pubKey, at: address, context: context)
        }
    }

    /// Asks the contact's node whether it holds exchange `edge` (a confirmation query, §11).
    package func ask(about edge: String, target: Target, addresses: [PeerAddress]) async -> Result<Bool, ProtocolError> {
        await firstAnswer(from: target, at: addresses) { address in
            await Dialer.ask(about: edge, pinned: target.route.pubKey, at: address, context: context)
        }
    }

    /// One mail session per address, in turn, until one answers. The wrong node, or a refusal, will not
    /// improve at another address of the same node: only a lost connection or a timeout tries the next.
    private func firstAnswer(
        from target: Target, at addresses: [PeerAddress],
        _ session: (PeerAddress) async -> Result<Bool, ProtocolError>
    ) async -> Result<Bool, ProtocolError> {
        var last = ProtocolError(.connectionLost, "\(target.contact.name) is not reachable (no address answered)")
        for address in addresses {
            switch await session(address) {
            case .success(let answer): return .success(answer)
            case .failure(let e):
                last = e
                if e.code != .connectionLost && e.code != .timeout { return .failure(e) }
            }
        }
        return .failure(last)
    }

    /// The addresses to try: what DNS-SD shows now for the contact's node (recognised by its presence
    /// tag), then the route's hints.
    package static func addresses(for target: Target, discovered: [DiscoveredPeer]) -> [PeerAddress] {
        var out: [PeerAddress] = []
        for p in discovered where target.isAnnounced(by: p) {
            for a in p.dialOrder where !out.contains(a) { out.append(a) }
        }
        for h in target.route.hints {
            let a = PeerAddress(ip: h.host, port: h.port, interfaceName: "", interfaceIndex: 0)
            if !out.contains(where: { $0.ip == a.ip && $0.port == a.port }) { out.append(a) }
        }
        return out
    }

    /// When to try again after `attempts` failures: 5 s doubling to 15 minutes; nil (give up) after
    /// 7 days or 200 attempts.
    package static func retryAt(attempts: Int, createdAt: Date, now: Date = Date()) -> Date? {
        if attempts >= 200 || now.timeIntervalSince(createdAt) > 7 * 24 * 3600 { return nil }
        return now.addingTimeInterval(min(900, 5 * pow(2, Double(min(max(attempts - 1, 0), 10)))))
    }
}
