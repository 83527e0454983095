package import Foundation
internal import NIOConcurrencyHelpers

/// Admission control for a listening node (docs/PROTOCOL.md §14): a cap on connections, per-address
/// concurrency, and a per-address rate (a token bucket refilled over a minute). A refused address is
/// reported once per minute, not per connection.
///
/// A connection is **idle** until its first message identifies a session (`promote`), then a
/// **session**. Idle connections cost an attacker nothing, so they never lock anyone out: at the
/// node's cap, or at an address's cap of idle connections, the oldest idle connection is closed
/// (`evict`) to admit the new one; and an address's sessions in progress are counted apart from its
/// idle sockets, so eight idle probes from one address do not refuse an honest exchange from it.
package final class Admission: Sendable {
    /// One admitted connection, to promote or release.
    package struct Ticket: Sendable, Hashable {
        let id: UInt64
        package let address: String
    }

    struct Connection {
        let address: String
        let openedAt: TimeInterval
        var idle = true
        let evict: @Sendable () -> Void
        let stop: @Sendable () -> Void
    }

    struct AddressState {
        var idle = 0
        var sessions = 0
        var tokens: Double
        var lastRefill: TimeInterval
        var lastReported: TimeInterval = -.infinity
    }

    struct State {
        var next: UInt64 = 0
        var connections: [UInt64: Connection] = [:]
        var addresses: [String: AddressState] = [:]
        var evicted = 0
    }

    private let state = NIOLockedValueBox(State())
    let limits: NodeLimits

    package init(limits: NodeLimits) { self.limits = limits }

    package enum Decision: Equatable {
        case admit(Ticket)
        /// Refused; `report` is true the first time in a minute for this address.
        case refuse(reason: String, report: Bool)
    }

    /// Admits a connection from `address`, closing an idle one if that is what makes room; `evict`
    /// closes this connection should it later be the idle one chosen; `stop` ends it when the node stops
    /// (`stopAll`).
    package func admit(
        address: String, now: TimeInterval = Date().timeIntervalSince1970,
        evict: @escaping @Sendable () -> Void = {}, stop: @escaping @Sendable () -> Void = {}
    ) -> Decision {
        var toEvict: [@Sendable () -> Void] = []
        let decision = state.withLockedValue { s -> Decision in
            let rate = Double(limits.connectionsPerAddressPerMinute)
            var a = s.addresses[address] ?? AddressState(tokens: rate, lastRefill: now)
            a.tokens = min(rate, a.tokens + (now - a.lastRefill) * rate / 60)
            a.lastRefill = now
            func refuse(_ reason: String) -> Decision {
                let report = now - a.lastReported >= 60
                if report { a.lastReported = now }
                s.addresses[address] = a
                return .refuse(reason: reason, report: report)
            }
            if a.tokens < 1 {
                return refuse("more than \(limits.connectionsPerAddressPerMinute) connections a minute from one address")
            }
            if a.sessions >= limits.maximumSessionsPerAddress {
                return refuse("more than \(limits.maximumSessionsPerAddress) sessions at once from one address")
            }
            s.addresses[address] = a
            // This address's idle sockets: at its cap, its oldest goes.
            if a.idle >= limits.maximumSessionsPerAddress, let oldest = Self.oldestIdle(s, from: address) {
                toEvict.append(Self.remove(&s, oldest))
            }
            // The node's cap: the oldest idle connection anywhere goes; with none idle, refuse.
            if s.connections.count >= limits.maximumSessions {
                guard let oldest = Self.oldestIdle(s, from: nil) else {
                    a = s.addresses[address] ?? a
                    return refuse("node at its limit of \(limits.maximumSessions) sessions")
                }
                toEvict.append(Self.remove(&s, oldest))
            }
            a = s.addresses[address] ?? a
            a.tokens -= 1
            a.idle += 1
            s.next += 1
            s.connections[s.next] = Connection(address: address, openedAt: now, evict: evict, stop: stop)
            s.addresses[address] = a
            if s.addresses.count > 10_000 { Self.prune(&s, now: now) }
            return .admit(Ticket(id: s.next, address: address))
        }
        // Closed outside the lock: closing runs the connection's own release.
        for close in toEvict { close() }
        return decision
    }

    /// The connection's first message identified a session: it counts as one from now on (and can no
    /// longer be evicted). False when it was evicted meanwhile.
    @discardableResult
    package func promote(_ ticket: Ticket) -> Bool {
        state.withLockedValue { s in
            guard var c = s.connections[ticket.id], c.idle else { return false }
            c.idle = false
            s.connections[ticket.id] = c
            s.addresses[ticket.address]?.idle -= 1
            s.addresses[ticket.address]?.sessions += 1
            return true
        }
    }

    /// The connection closed (whatever it was); releasing twice, or an evicted one, is harmless.
    package func release(_ ticket: Ticket) {
        state.withLockedValue { s in _ = Self.remove(&s, ticket.id, counting: false) }
    }

    /// Whether the connection is still admitted (false once evicted or released).
    package func holds(_ ticket: Ticket) -> Bool { state.withLockedValue { $0.connections[ticket.id] != nil } }

    /// The node is stopping: ends every connection still open (each session says why and reports its end).
    package func stopAll() {
        let stops = state.withLockedValue { $0.connections.values.map(\.stop) }
        for stop in stops { stop() }
    }

    /// Connections open now (idle or sessions).
    package var openSessions: Int { state.withLockedValue { $0.connections.count } }
    /// Idle connections closed to make room, since the node started.
    package var evictedConnections: Int { state.withLockedValue { $0.evicted } }

    private static func oldestIdle(_ s: State, from address: String?) -> UInt64? {
        s.connections.filter { $0.value.idle && (address == nil || $0.value.address == address) }
            .min { ($0.value.openedAt, $0.key) < ($1.value.openedAt, $1.key) }?.key
    }

    /// Forgets a connection; returns its evict closure (a no-op when it was gone already).
    @discardableResult
    private static func remove(_ s: inout State, _ id: UInt64, counting: Bool = true) -> @Sendable () -> Void {
        guard let c = s.connections.removeValue(forKey: id) else { return {} }
        if c.idle { s.addresses[c.address]?.idle -= 1 } else { s.addresses[c.address]?.sessions -= 1 }
        if counting { s.evicted += 1 }
        return c.evict
    }

    /// Forget idle addresses whose buckets are full again (bounds memory under a flood of sources).
    static func prune(_ s: inout State, now: TimeInterval) {
        s.addresses = s.addresses.filter { $0.value.idle + $0.value.sessions > 0 || now - $0.value.lastRefill < 60 }
    }
}
