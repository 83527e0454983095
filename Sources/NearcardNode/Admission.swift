package import Foundation
internal import NIOConcurrencyHelpers

/// Admission control for a listening node (docs/PROTOCOL.md §14): a cap on connections, per-address
/// concurrency, a per-address rate (a token bucket refilled over a minute), and a fair share of the
/// cap between source addresses. A refused address is reported once per minute, not per connection.
///
/// A connection is **idle** until its first message names a session (`promote`), then
/// **unidentified** until the peer completes the handshake (`identify`: Noise message 3, one round
/// trip that costs the peer its own key work), then a **session**. Idle and unidentified connections
/// cost a flooder little, so they never lock anyone out:
/// - an address's idle and unidentified connections are counted apart from its sessions; at the
///   address's cap its oldest such connection is closed (`evict`) to admit the new one;
/// - at the node's cap, room is made fairly: the source holding the most connections (IPv6 addresses
///   grouped by /64 prefix, then by address within it) loses its oldest idle or unidentified one —
///   unless the newcomer's source already holds as many, when the newcomer is refused (busy);
/// - while the node is at least half full, a connection still unidentified `identifyTimeoutWhenCrowded`
///   after it was accepted is closed (a short deadline; an idle node leaves slow links the whole
///   handshake time, §12).
/// Sessions are never closed to make room.
package final class Admission: Sendable {
    /// One admitted connection, to promote or release.
    package struct Ticket: Sendable, Hashable {
        let id: UInt64
        package let address: String
    }

    enum Stage { case idle, unidentified, session }

    struct Connection {
        let address: String
        let source: String
        let openedAt: TimeInterval
        var stage = Stage.idle
        /// A byte came from the peer: whatever follows, the connection is no liveness check.
        var heard = false
        let evict: @Sendable () -> Void
        let stop: @Sendable () -> Void
        var evictable: Bool { stage != .session }
    }

    struct AddressState {
        /// Idle or unidentified connections (evictable).
        var pending = 0
        var sessions = 0
        var tokens: Double
        var lastRefill: TimeInterval
        var lastReported: TimeInterval = -.infinity
        /// The liveness checks this address may still make (`checksPerAddressPerMinute`; nil: all of
        /// them), as of `checkRefill`.
        var checkTokens: Double? = nil
        var checkRefill: TimeInterval = 0
    }

    struct State {
        var next: UInt64 = 0
        var connections: [UInt64: Connection] = [:]
        var addresses: [String: AddressState] = [:]
        /// Connections held per source (an IPv4 address, an IPv6 /64).
        var sources: [String: Int] = [:]
        var evicted = 0
        var checks = 0
    }

    private let state = NIOLockedValueBox(State())
    let limits: NodeLimits

    package init(limits: NodeLimits) { self.limits = limits }

    package enum Decision: Equatable {
        case admit(Ticket)
        /// Refused; `report` is true the first time in a minute for this address.
        case refuse(reason: String, report: Bool)
    }

    /// Admits a connection from `address`, closing another if that is what makes room; `evict`
    /// closes this connection should it later be the one chosen; `stop` ends it when the node stops
    /// (`stopAll`).
    package func admit(
        address: String, now: TimeInterval = Date().timeIntervalSince1970,
        evict: @escaping @Sendable () -> Void = {}, stop: @escaping @Sendable () -> Void = {}
    ) -> Decision {
        var toEvict: [@Sendable () -> Void] = []
        let source = Self.source(of: address)
        let decision = state.withLockedValue { s -> Decision in
            let rate = Double(limits.connectionsPerAddressPerMinute)
            var a = s.addresses[address] ?? AddressState(tokens: rate, lastRefill: now)
            a.tokens = min(rate, a.tokens + (now - a.lastRefill) * rate / 60)
            a.lastRefill = now
            s.addresses[address] = a
            func refuse(_ reason: String) -> Decision {
                var a = s.addresses[address] ?? a
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
            // A crowded node: connections that have not identified themselves in time go.
            if s.connections.count * 2 >= limits.maximumSessions {
                let late = s.connections.filter { $0.value.evictable && now - $0.value.openedAt >= limits.identifyTimeoutWhenCrowded }
                for id in late.keys.sorted() { toEvict.append(Self.remove(&s, id)) }
            }
            // This address's idle and unidentified connections: at its cap, its oldest goes.
            if (s.addresses[address]?.pending ?? 0) >= limits.maximumSessionsPerAddress,
                let oldest = Self.oldestEvictable(s, where: { $0.address == address })
            {
                toEvict.append(Self.remove(&s, oldest))
            }
            // The node's cap: the source holding the most gives up one, if that is fair.
            if s.connections.count >= limits.maximumSessions {
                guard !TestFault.has(.noEviction), let victim = Self.fairVictim(s, for: address, source: source) else {
                    // Said as what fills it: exchanges under way, or connections that never said who they are.
                    let sessions = s.connections.values.filter { $0.stage == .session }.count
                    let waiting = s.connections.count - sessions
                    return refuse(
                        "node full: all \(limits.maximumSessions) connections taken (\(sessions) exchange\(sessions == 1 ? "" : "s") under way, "
                            + "\(waiting) not yet identified), and no source holds more than its share")
                }
                toEvict.append(Self.remove(&s, victim))
            }
            a = s.addresses[address] ?? a
            a.tokens -= 1
            a.pending += 1
            s.next += 1
            s.connections[s.next] = Connection(address: address, source: source, openedAt: now, evict: evict, stop: stop)
            s.addresses[address] = a
            s.sources[source, default: 0] += 1
            if s.addresses.count > 10_000 { Self.prune(&s, now: now) }
            return .admit(Ticket(id: s.next, address: address))
        }
        // Closed outside the lock: closing runs the connection's own release.
        for close in toEvict { close() }
        return decision
    }

    /// The connection's first message named a session: it is unidentified until `identify`. False
    /// when it was closed to make room meanwhile.
    @discardableResult
    package func promote(_ ticket: Ticket) -> Bool {
        state.withLockedValue { s in
            guard var c = s.connections[ticket.id], c.stage == .idle else { return false }
            c.stage = .unidentified
            s.connections[ticket.id] = c
            return true
        }
    }

    /// The peer completed the handshake: a session from now on, counted against its address's
    /// sessions and never closed to make room. False when it was closed meanwhile.
    @discardableResult
    package func identify(_ ticket: Ticket) -> Bool {
        state.withLockedValue { s in
            guard var c = s.connections[ticket.id], c.stage != .session else { return false }
            c.stage = .session
            s.connections[ticket.id] = c
            s.addresses[ticket.address]?.pending -= 1
            s.addresses[ticket.address]?.sessions += 1
            return true
        }
    }

    /// The peer closed a connection before its first byte: a liveness check (docs/PROTOCOL.md §14)
    /// when it came within `checkWindow` of its opening and the address has checks left. Then the
    /// connection is given back to the address's rate and the caller counts no probe; returns whether
    /// it was one. Call before `release`.
    package func closedBeforeFirstByte(_ ticket: Ticket, now: TimeInterval = Date().timeIntervalSince1970) -> Bool {
        state.withLockedValue { s in
            guard let c = s.connections[ticket.id], c.stage == .idle, !c.heard, now - c.openedAt <= limits.checkWindow,
                var a = s.addresses[ticket.address]
            else { return false }
            let budget = Double(limits.checksPerAddressPerMinute)
            var checks = min(budget, (a.checkTokens ?? budget) + max(0, now - a.checkRefill) * budget / 60)
            a.checkRefill = now
            guard checks >= 1 else { return false }
            checks -= 1
            a.checkTokens = checks
            a.tokens = min(Double(limits.connectionsPerAddressPerMinute), a.tokens + 1)
            s.addresses[ticket.address] = a
            s.checks += 1
            return true
        }
    }

    /// The peer sent its first byte (a check sends none).
    package func heard(_ ticket: Ticket) {
        state.withLockedValue { s in s.connections[ticket.id]?.heard = true }
    }

    /// Liveness checks this node answered since it started (connections given back, never probes).
    package var checksAnswered: Int { state.withLockedValue { $0.checks } }

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

    /// Connections open now (idle, unidentified or sessions).
    package var openSessions: Int { state.withLockedValue { $0.connections.count } }
    /// Connections closed to make room (or unidentified too long on a crowded node), since the node started.
    package var evictedConnections: Int { state.withLockedValue { $0.evicted } }

    /// The source an address's connections are shared out by: an IPv4 address itself, an IPv6 address's
    /// /64 prefix (one host holds a whole /64).
    package static func source(of address: String) -> String {
        guard address.contains(":") else { return address }
        var bytes = in6_addr()
        guard inet_pton(AF_INET6, address, &bytes) == 1 else { return address }
        let octets = withUnsafeBytes(of: &bytes) { Array($0.prefix(8)) }
        return stride(from: 0, to: 8, by: 2).map { String(UInt16(octets[$0]) << 8 | UInt16(octets[$0 + 1]), radix: 16) }
            .joined(separator: ":") + "::/64"
    }

    private static func oldestEvictable(_ s: State, where match: (Connection) -> Bool) -> UInt64? {
        // Idle before unidentified, then the oldest.
        s.connections.filter { $0.value.evictable && match($0.value) }
            .min { ($0.value.stage == .idle ? 0 : 1, $0.value.openedAt, $0.key) < ($1.value.stage == .idle ? 0 : 1, $1.value.openedAt, $1.key) }?
            .key
    }

    /// Which connection makes room for one from `address` at the node's cap: an evictable connection of
    /// the source holding the most connections, within it of the address holding the most, idle before
    /// unidentified, the oldest first — nil (refuse the newcomer) when the newcomer's own source (or own
    /// address, within the same source) already holds at least as many: a swap must not leave it
    /// holding more than the one it took from.
    private static func fairVictim(_ s: State, for address: String, source: String) -> UInt64? {
        var perAddress: [String: Int] = [:]
        for c in s.connections.values { perAddress[c.address, default: 0] += 1 }
        func rank(_ e: (key: UInt64, value: Connection)) -> (Int, Int, Int, TimeInterval, UInt64) {
            (-(s.sources[e.value.source] ?? 0), -(perAddress[e.value.address] ?? 0), e.value.stage == .idle ? 0 : 1, e.value.openedAt, e.key)
        }
        guard let victim = s.connections.filter({ $0.value.evictable }).min(by: { rank($0) < rank($1) }) else { return nil }
        let fair =
            victim.value.source == source
            ? (perAddress[victim.value.address] ?? 0) > (perAddress[address] ?? 0)
            : (s.sources[victim.value.source] ?? 0) > (s.sources[source] ?? 0)
        return fair ? victim.key : nil
    }

    /// Forgets a connection; returns its evict closure (a no-op when it was gone already).
    @discardableResult
    private static func remove(_ s: inout State, _ id: UInt64, counting: Bool = true) -> @Sendable () -> Void {
        guard let c = s.connections.removeValue(forKey: id) else { return {} }
        if c.evictable { s.addresses[c.address]?.pending -= 1 } else { s.addresses[c.address]?.sessions -= 1 }
        let left = (s.sources[c.source] ?? 1) - 1
        s.sources[c.source] = left > 0 ? left : nil
        if counting { s.evicted += 1 }
        return c.evict
    }

    /// Forget idle addresses whose buckets are full again (bounds memory under a flood of sources).
    static func prune(_ s: inout State, now: TimeInterval) {
        s.addresses = s.addresses.filter { $0.value.pending + $0.value.sessions > 0 || now - $0.value.lastRefill < 60 }
    }
}
