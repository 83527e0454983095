import Foundation
package import NearcardDiscovery
import NearcardModel

/// Browsing as the faces need it: every peer seen within a time, or the one peer a name means. It reads
/// the discovery's event stream as events arrive (nothing polls) and stops browsing when it returns.
package enum PeerBrowser {
    /// Every peer seen within `seconds` (minus those that said goodbye), or as soon as `enough` holds;
    /// each resolved against the contacts `resolver` knows.
    /// With `untilSettled`, the listing ends as soon as discovery has told what it knew (`.settled`:
    /// avahi-daemon's cache, resolved), `seconds` being only the longest wait.
    package static func collect(
        _ discovery: any Discovery, filter: InterfaceFilter, seconds: Double, resolver: PresenceResolver = .none, untilSettled: Bool = false,
        until enough: @escaping ([DiscoveredPeer]) -> Bool = { _ in false }
    ) async throws(NodeError) -> [DiscoveredPeer] {
        try await browse(discovery.browse(filter: filter), seconds: seconds, resolver: resolver, untilSettled: untilSettled) { peers, _ in
            enough(peers) ? 0 : nil
        }
    }

    /// The peer `query` names. Once a match is seen, browsing goes on `settle` seconds more to gather its
    /// addresses on every interface (and any look-alike) — unless discovery has told all it held
    /// (`.settled`: the daemon's cache, every announcement in it resolved), when it is answered at once. Nobody answering to it within `seconds` is
    /// `.notFound`; several are `.ambiguous`, named with their peer ids. Peers are resolved against the
    /// contacts `resolver` knows, so a contact is found by name even in private mode.
    package static func find(
        _ query: PeerQuery, in discovery: any Discovery, filter: InterfaceFilter, seconds: Double,
        settle: Double = 0.3, resolver: PresenceResolver = .none
    ) async throws(NodeError) -> DiscoveredPeer {
        var firstMatch: Date?
        let peers = try await browse(discovery.browse(filter: filter), seconds: seconds, resolver: resolver) { peers, settled in
            guard peers.contains(where: { query.matches($0) }) else { return nil }
            if settled { return 0 }
            if firstMatch == nil { firstMatch = Date() }
            return settle - Date().timeIntervalSince(firstMatch!)
        }
        switch query.select(from: peers) {
        case .success(let found?): return found
        case .success(nil):
            if let near = Spelling.nearest(to: "\(query)", among: peers.map(\.displayName)) {
                throw NodeError(
                    .notFound,
                    Phrase(
                        "no peer named \"%1$@\" answered on the LAN within %2$@ s (did you mean \"%3$@\"? see `nearcard peers`, or use HOST:PORT)",
                        "\(query)", String(Int(seconds)), near))
            }
            throw NodeError(
                .notFound,
                Phrase("no peer named \"%1$@\" answered on the LAN within %2$@ s (see `nearcard peers`, or use HOST:PORT)", "\(query)", String(Int(seconds))))
        case .failure(let ambiguous): throw NodeError(.ambiguous, ambiguous.description)
        }
    }

    /// The announcement `instance` of another service type (`nearcard doctor`'s probe), with its
    /// addresses gathered for `settle` seconds once seen; nil when it is not seen within `seconds`.
    static func first(
        in discovery: AvahiDiscovery, serviceType: String, instance: String, filter: InterfaceFilter, seconds: Double,
        settle: Double = 0.5
    ) async -> DiscoveredPeer? {
        var firstSeen: Date?
        let peers = try? await browse(discovery.browse(filter: filter, serviceType: serviceType), seconds: seconds) { peers, _ in
            guard peers.contains(where: { $0.instanceName == instance }) else { return nil }
            if firstSeen == nil { firstSeen = Date() }
            return settle - Date().timeIntervalSince(firstSeen!)
        }
        return peers?.first { $0.instanceName == instance }
    }

    /// Applies events until `seconds` pass or `done` says to stop. `done` sees the peers after each event,
    /// and whether discovery has told what it held (`.settled`), and answers nil (go on), or how many
    /// more seconds to browse (≤ 0: stop now; the first answer sets the stop).
    static func browse(
        _ events: AsyncStream<DiscoveryEvent>, seconds: Double, resolver: PresenceResolver = .none, untilSettled: Bool = false,
        done: @escaping ([DiscoveredPeer], Bool) -> Double?
    ) async throws(NodeError) -> [DiscoveredPeer] {
        enum Step: Sendable {
            case event(DiscoveryEvent)
            case deadline, finished
        }
        let (steps, step) = AsyncStream.makeStream(of: Step.self, bufferingPolicy: .unbounded)
        let reader = Task {
            for await e in events { step.yield(.event(e)) }
            step.yield(.finished)
        }
        let clock = Task {
            try? await Task.sleep(nanoseconds: UInt64(max(0, seconds) * 1e9))
            step.yield(.deadline)
        }
        var stopAt: Task<Void, Never>?
        defer {
            reader.cancel()
            clock.cancel()
            stopAt?.cancel()
        }
        var peers: [String: DiscoveredPeer] = [:]
        var settled = false
        for await s in steps {
            switch s {
            case .deadline, .finished:
                return Array(peers.values)
            case .event(let event):
                switch resolver.resolve(event) {
                case .found(let p), .updated(let p): peers[p.instanceName] = p
                case .lost(let name): peers[name] = nil
                case .failed(let e): throw NodeError(discovery: e)
                case .settled:
                    if untilSettled { return Array(peers.values) }
                    settled = true
                }
                if let more = done(Array(peers.values), settled) {
                    if more <= 0 { return Array(peers.values) }
                    guard stopAt == nil else { continue }
                    stopAt = Task {
                        try? await Task.sleep(nanoseconds: UInt64(more * 1e9))
                        step.yield(.deadline)
                    }
                }
            }
        }
        return Array(peers.values)
    }
}
