import Foundation
import Metrics
import NearcardStore

/// What a serving node counts, through swift-metrics (whichever backend the process bootstraps;
/// `--metrics` serves them in Prometheus's text format). Names and meanings are listed in
/// docs/OPERATIONS.md; every one is derived from the node's events or sampled from the node, so a
/// face adds nothing to record them.
public enum NodeMetrics {
    /// Connections refused by admission control (per-address or overall limits), counted one by one
    /// where they are refused.
    static func connectionRefused() { Counter(label: "nearcard_connections_refused_total").increment() }

    /// An exchange completed but its contact could not be stored (or a sample of the store failed).
    static func storeError() { Counter(label: "nearcard_store_errors_total").increment() }

    /// Follows `events` until they end, and samples the runtime (sessions, peers, the outbox) every
    /// `interval` seconds.
    static func record(_ events: AsyncStream<NodeEvent>, runtime: NodeRuntime, interval: TimeInterval = 5) async {
        let sessions = Gauge(label: "nearcard_sessions_open")
        let peers = Gauge(label: "nearcard_peers_discovered")
        let storeUp = Gauge(label: "nearcard_store_up")
        let discoveryUp = Gauge(label: "nearcard_discovery_up")
        let latency = Timer(label: "nearcard_exchange_duration_seconds", preferredDisplayUnit: .seconds)
        storeUp.record(1)
        discoveryUp.record(0)
        let outbox = OutboxItem.State.allCases.map { ($0, Gauge(label: "nearcard_outbox_messages", dimensions: [("state", $0.rawValue)])) }
        // Declared up front so a scrape shows them at 0 before the first exchange.
        Counter(label: "nearcard_exchanges_total", dimensions: [("outcome", "completed"), ("code", "")]).increment(by: 0)
        for e in ["delivered", "failed", "received", "refused"] { Counter(label: "nearcard_messages_total", dimensions: [("event", e)]).increment(by: 0) }
        Counter(label: "nearcard_connections_refused_total").increment(by: 0)
        Counter(label: "nearcard_store_errors_total").increment(by: 0)
        Counter(label: "nearcard_store_reconnects_total").increment(by: 0)

        func sample() {
            sessions.record(runtime.openSessions)
            peers.record(runtime.peers.all.count)
            if let counts = try? runtime.context.database.outboxCounts() {
                for (state, gauge) in outbox { gauge.record(counts[state] ?? 0) }
            } else {
                storeError()
            }
        }
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                while !Task.isCancelled {
                    sample()
                    try? await Task.sleep(nanoseconds: UInt64(interval * 1e9))
                }
            }
            group.addTask {
                for await event in events {
                    switch event {
                    case .exchangeCompleted(_, _, _, _, let elapsed):
                        Counter(label: "nearcard_exchanges_total", dimensions: [("outcome", "completed"), ("code", "")]).increment()
                        latency.recordNanoseconds(Int64(elapsed * 1e9))
                    case .exchangeFailed(_, _, let error, let byPeer):
                        Counter(label: "nearcard_exchanges_total",
                                dimensions: [("outcome", byPeer ? "ended_by_peer" : "failed"), ("code", error.code.rawValue)]).increment()
                    case .messageDelivered:
                        Counter(label: "nearcard_messages_total", dimensions: [("event", "delivered")]).increment()
                    case .messageGaveUp:
                        Counter(label: "nearcard_messages_total", dimensions: [("event", "failed")]).increment()
                    case .messageReceived:
                        Counter(label: "nearcard_messages_total", dimensions: [("event", "received")]).increment()
                    case .messageRefused:
                        Counter(label: "nearcard_messages_total", dimensions: [("event", "refused")]).increment()
                    case .storeConnection(let lost, _):
                        storeUp.record(lost ? 0 : 1)
                        if !lost { Counter(label: "nearcard_store_reconnects_total").increment() }
                    case .published:
                        discoveryUp.record(1)
                    case .discoveryUnavailable:
                        discoveryUp.record(0)
                    case .error(let message) where message.hasPrefix("discovery:"):
                        discoveryUp.record(0)
                    default:
                        break
                    }
                    sessions.record(runtime.openSessions)
                }
            }
            await group.next()
            group.cancelAll()
        }
    }
}
