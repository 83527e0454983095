package import Foundation
internal import NIOConcurrencyHelpers

/// What a listener learnt of an admitted connection before it became a session.
struct AdmittedConnection: Sendable {
    let admission: Admission
    let ticket: Admission.Ticket
    let probes: ProbeCounter

    /// The peer completed the handshake: a session from now on (never closed to make room).
    func identified() { admission.identify(ticket) }

    /// The connection ended before the peer completed the handshake: a probe of `kind`, unless this
    /// node closed it to make room (counted as `evicted` then).
    func endedUnidentified(_ kind: ProbeCounter.Kind) {
        if admission.holds(ticket) { probes.record(kind, from: ticket.address) }
    }
}

/// Counts connections that ended before identifying a session — a port scan, a probe that sends
/// nothing or something that is not Nearcard, an idle socket that timed out or was closed to make
/// room, a half-open session (message 1, then silence) — and reports them as one `connectionsProbed`
/// event per address per interval, never one line each (a scan of 200 connections is one line, not
/// 200; a flood from 64 addresses, 64 lines). At most `maximumAddressesPerSummary` addresses get a
/// line of their own in an interval; the rest, and addresses that only opened and closed one or two
/// connections (other nodes checking this one answers), share one line without an address.
final class ProbeCounter: Sendable {
    enum Kind: String, Sendable, CaseIterable {
        /// Closed without sending a frame.
        case silent
        /// Sent something that is not Noise message 1 of a Nearcard protocol (or a message 3 that is not one).
        case foreign
        /// Sent nothing within the handshake time.
        case timedOut
        /// Closed by this node to admit another connection (admission, §14).
        case evicted
        /// Sent message 1 and never completed the handshake (silent, or gone, after it).
        case halfOpen
    }

    static let maximumAddressesPerSummary = 64

    private struct State {
        var counts: [String: [Kind: Int]] = [:]
        var flushScheduled = false
    }

    private let state = NIOLockedValueBox(State())
    private let events: EventBus
    private let interval: TimeInterval

    init(events: EventBus, interval: TimeInterval) {
        self.events = events
        self.interval = interval
    }

    /// One connection of `kind` from `address` ("" when unknown).
    func record(_ kind: Kind, from address: String) {
        NodeMetrics.connectionProbed(kind.rawValue)
        let schedule = state.withLockedValue { s -> Bool in
            s.counts[address, default: [:]][kind, default: 0] += 1
            defer { s.flushScheduled = true }
            return !s.flushScheduled
        }
        guard schedule else { return }
        DispatchQueue.global().asyncAfter(deadline: .now() + interval) { [self] in flush() }
    }

    private func flush() {
        let counts = state.withLockedValue { s -> [String: [Kind: Int]] in
            defer {
                s.counts = [:]
                s.flushScheduled = false
            }
            return s.counts
        }
        // The busiest addresses first; past the limit, the rest together.
        let ranked = counts.map { ($0.key, $0.value, $0.value.values.reduce(0, +)) }.sorted { ($1.2, $0.0) < ($0.2, $1.0) }
        var rest: [Kind: Int] = [:]
        for (i, (address, kinds, total)) in ranked.enumerated() where total > 0 {
            // (Another node's liveness checks never reach this count: Admission.closedBeforeFirstByte.)
            if i < Self.maximumAddressesPerSummary && !address.isEmpty {
                emit(kinds, total: total, address: address)
            } else {
                rest.merge(kinds, uniquingKeysWith: +)
            }
        }
        let others = rest.values.reduce(0, +)
        if others > 0 { emit(rest, total: others, address: nil) }
    }

    private func emit(_ kinds: [Kind: Int], total: Int, address: String?) {
        events.emit(
            .connectionsProbed(
                count: total, seconds: Int(interval.rounded()), address: address,
                kinds: Dictionary(uniqueKeysWithValues: kinds.map { ($0.key.rawValue, $0.value) })))
    }
}

/// Counts the connections admission refused (a rate, a cap), and reports them like probes: per address
/// per interval, the first refusal said at once and the rest summed at the interval's end; at most
/// `ProbeCounter.maximumAddressesPerSummary` addresses get a line of their own in an interval, the rest
/// share one without an address. A flood from 200 addresses is 65 lines a half-minute, not 200.
package final class RefusalCounter: Sendable {
    private struct State {
        /// Refusals not yet said, by address: how many, and the last reason.
        var counts: [String: (count: Int, reason: String)] = [:]
        /// Addresses already said once in this interval (later refusals wait for the summary).
        var said: Set<String> = []
        var flushScheduled = false
    }

    private let state = NIOLockedValueBox(State())
    private let events: EventBus
    private let interval: TimeInterval

    package init(events: EventBus, interval: TimeInterval) {
        self.events = events
        self.interval = interval
    }

    /// One refused connection from `address`, for `reason`.
    package func record(_ reason: String, from address: String) {
        let (first, schedule) = state.withLockedValue { s -> (Bool, Bool) in
            defer { s.flushScheduled = true }
            // A new address is said at once while there is room for it in this interval's lines.
            if !s.said.contains(address) && s.said.count < ProbeCounter.maximumAddressesPerSummary {
                s.said.insert(address)
                return (true, !s.flushScheduled)
            }
            let c = s.counts[address]?.count ?? 0
            s.counts[address] = (c + 1, reason)
            return (false, !s.flushScheduled)
        }
        if first { events.emit(.rateLimited(address: address, reason: reason, count: 1, seconds: 0)) }
        guard schedule else { return }
        DispatchQueue.global().asyncAfter(deadline: .now() + interval) { [self] in flush() }
    }

    /// Says what the interval summed (at its end; a test calls it at once).
    package func flush() {
        let (counts, said) = state.withLockedValue { s -> ([String: (count: Int, reason: String)], Set<String>) in
            defer {
                s.counts = [:]
                s.said = []
                s.flushScheduled = false
            }
            return (s.counts, s.said)
        }
        let seconds = Int(interval.rounded())
        var rest = 0
        var restReason = ""
        var restAddresses = 0
        for (address, c) in counts.sorted(by: { ($1.value.count, $0.key) < ($0.value.count, $1.key) }) {
            if said.contains(address) {
                events.emit(.rateLimited(address: address, reason: c.reason, count: c.count, seconds: seconds))
            } else {
                rest += c.count
                restAddresses += 1
                restReason = c.reason
            }
        }
        if rest > 0 {
            events.emit(
                .rateLimited(
                    address: nil, reason: "\(restReason) (and other limits) from \(restAddresses) more address\(restAddresses == 1 ? "" : "es")",
                    count: rest, seconds: seconds))
        }
    }
}
