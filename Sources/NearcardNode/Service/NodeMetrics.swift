import Foundation
import Metrics
import NearcardModel
import NearcardProtocol
import NearcardStore

/// What a serving node counts, through swift-metrics (whichever backend the process bootstraps;
/// `--metrics` serves them in Prometheus's text format). Names and meanings are listed in
/// docs/OPERATIONS.md; every one is derived from the node's events or sampled from the node, so a
/// face adds nothing to record them.
package enum NodeMetrics {
    /// Connections refused by admission control (per-address or overall limits), counted one by one
    /// where they are refused.
    static func connectionRefused() { Counter(label: "nearcard_connections_refused_total").increment() }

    /// Connections that ended before identifying a session (a scan, a probe, an idle socket timed out
    /// or closed to make room), by kind: silent, foreign, timedOut, evicted.
    static func connectionProbed(_ kind: String) {
        Counter(label: "nearcard_connections_probed_total", dimensions: [("kind", kind)]).increment()
    }

    /// An exchange completed but its contact could not be stored (or a sample of the store failed).
    static func storeError() { Counter(label: "nearcard_store_errors_total").increment() }

    /// Counts what `bus` emits from now on, as it is emitted (no task woken per event), and samples
    /// the runtime (sessions, peers, the outbox) every `interval` seconds until cancelled.
    static func record(_ bus: EventBus, runtime: NodeRuntime, interval: TimeInterval = 5) async {
        let sessions = Gauge(label: "nearcard_sessions_open")
        let peers = Gauge(label: "nearcard_peers_discovered")
        let storeUp = Gauge(label: "nearcard_store_up")
        let discoveryUp = Gauge(label: "nearcard_discovery_up")
        let latency = Timer(label: "nearcard_exchange_duration_seconds", preferredDisplayUnit: .seconds)
        let completed = Counter(label: "nearcard_exchanges_total", dimensions: [("outcome", "completed"), ("code", "")])
        let messages = Dictionary(
            uniqueKeysWithValues: ["delivered", "failed", "received", "refused"].map {
                ($0, Counter(label: "nearcard_messages_total", dimensions: [("event", $0)]))
            })
        let reconnects = Counter(label: "nearcard_store_reconnects_total")
        storeUp.record(1)
        discoveryUp.record(0)
        let outbox = OutboxItem.State.allCases.map { ($0, Gauge(label: "nearcard_outbox_messages", dimensions: [("state", $0.rawValue)])) }
        // Declared up front so a scrape shows them at 0 before the first exchange.
        completed.increment(by: 0)
        for c in messages.values { c.increment(by: 0) }
        reconnects.increment(by: 0)
        Counter(label: "nearcard_connections_refused_total").increment(by: 0)
        Counter(label: "nearcard_store_errors_total").increment(by: 0)

        bus.observe { event in
            switch event {
            case .exchangeCompleted(_, _, _, _, let elapsed):
                completed.increment()
                latency.recordNanoseconds(Int64(elapsed * 1e9))
            case .exchangeFailed(_, _, let error, let byPeer):
                Counter(
                    label: "nearcard_exchanges_total",
                    dimensions: [("outcome", byPeer ? "ended_by_peer" : "failed"), ("code", error.code.rawValue)]
                ).increment()
            case .exchangeAbandoned(_, _, let error):
                Counter(label: "nearcard_exchanges_total", dimensions: [("outcome", "failed"), ("code", error.code.rawValue)]).increment()
            case .messageDelivered: messages["delivered"]?.increment()
            case .messageGaveUp: messages["failed"]?.increment()
            case .messageReceived: messages["received"]?.increment()
            case .messageRefused: messages["refused"]?.increment()
            case .storeConnection(let lost, _):
                storeUp.record(lost ? 0 : 1)
                if !lost { reconnects.increment() }
            case .published:
                discoveryUp.record(1)
            case .discoveryUnavailable:
                discoveryUp.record(0)
            case .error(let message) where message.hasPrefix("discovery:"):
                discoveryUp.record(0)
            case .exchangeStarted:
                break
            default:
                return
            }
            sessions.record(runtime.openSessions)
        }
        while !Task.isCancelled {
            sessions.record(runtime.openSessions)
            peers.record(runtime.peers.all.count)
            if let counts = try? runtime.context.database.outboxCounts() {
                for (state, gauge) in outbox { gauge.record(counts[state] ?? 0) }
            } else {
                storeError()
            }
            try? await Task.sleep(nanoseconds: UInt64(interval * 1e9))
        }
    }
}
