import Foundation

/// What discovery reports.
public enum DiscoveryEvent: Sendable, Equatable {
    case found(DiscoveredPeer)
    case updated(DiscoveredPeer)
    case lost(instanceName: String)
    case failed(DiscoveryError)
    /// Everything discovery knew when the browse began has been reported (avahi-daemon's cache, each
    /// instance in it resolved once): a one-shot listing may stop here. Said once per browse; peers
    /// heard later still come as `found`.
    case settled
}
