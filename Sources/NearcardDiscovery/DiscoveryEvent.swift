import Foundation

/// What discovery reports.
public enum DiscoveryEvent: Sendable, Equatable {
    case found(DiscoveredPeer)
    case updated(DiscoveredPeer)
    case lost(instanceName: String)
    case failed(DiscoveryError)
}
