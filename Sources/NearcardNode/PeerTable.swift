internal import NIOConcurrencyHelpers
package import NearcardDiscovery

/// The peers discovery has shown, kept up to date from a browse.
package final class PeerTable: Sendable {
    private let peers = NIOLockedValueBox<[String: DiscoveredPeer]>([:])

    package init() {}

    package func apply(_ event: DiscoveryEvent) {
        peers.withLockedValue { p in
            switch event {
            case .found(let peer), .updated(let peer): p[peer.instanceName] = peer
            case .lost(let name): p[name] = nil
            case .failed, .settled: break
            }
        }
    }

    package var all: [DiscoveredPeer] { peers.withLockedValue { Array($0.values) } }

    package func contains(_ instanceName: String) -> Bool { peers.withLockedValue { $0[instanceName] != nil } }

    /// The peer announced as `instanceName`, if it is in the table.
    package func peer(named instanceName: String) -> DiscoveredPeer? { peers.withLockedValue { $0[instanceName] } }

    /// Drops a peer (a dial to it failed); true when it was there.
    @discardableResult
    package func forget(_ instanceName: String) -> Bool { peers.withLockedValue { $0.removeValue(forKey: instanceName) != nil } }
}
