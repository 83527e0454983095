import Foundation
internal import NIOConcurrencyHelpers

/// What a listener learnt of an admitted connection before it became a session.
struct AdmittedConnection: Sendable {
    let admission: Admission
    let ticket: Admission.Ticket
    let probes: ProbeCounter
}

/// Counts connections that ended before identifying a session — a port scan, a probe that sends
/// nothing or something that is not Nearcard, an idle socket that timed out or was closed to make
/// room — and reports them as one `connectionsProbed` event per interval, never one line each (a scan of
/// 200 connections is one line, not 200).
final class ProbeCounter: Sendable {
    enum Kind: String, Sendable, CaseIterable {
        /// Closed without sending a frame.
        case silent
        /// Sent something that is not Noise message 1 of a Nearcard protocol.
        case foreign
        /// Sent nothing within the handshake time.
        case timedOut
        /// Closed by this node to admit another connection (admission, §14).
        case evicted
    }

    private struct State {
        var counts: [Kind: Int] = [:]
        var flushScheduled = false
    }

    private let state = NIOLockedValueBox(State())
    private let events: EventBus
    private let interval: TimeInterval

    init(events: EventBus, interval: TimeInterval) {
        self.events = events
        self.interval = interval
    }

    func record(_ kind: Kind) {
        NodeMetrics.connectionProbed(kind.rawValue)
        let schedule = state.withLockedValue { s -> Bool in
            s.counts[kind, default: 0] += 1
            defer { s.flushScheduled = true }
            return !s.flushScheduled
        }
        guard schedule else { return }
        DispatchQueue.global().asyncAfter(deadline: .now() + interval) { [self] in flush() }
    }

    private func flush() {
        let counts = state.withLockedValue { s -> [Kind: Int] in
            defer {
                s.counts = [:]
                s.flushScheduled = false
            }
            return s.counts
        }
        let total = counts.values.reduce(0, +)
        guard total > 0 else { return }
        events.emit(
            .connectionsProbed(
                count: total, seconds: Int(interval.rounded()),
                kinds: Dictionary(uniqueKeysWithValues: counts.map { ($0.key.rawValue, $0.value) })))
    }
}
