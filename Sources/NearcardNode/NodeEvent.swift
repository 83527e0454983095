internal import NIOConcurrencyHelpers
public import NearcardDiscovery
public import NearcardModel
package import NearcardProtocol
import NearcardStore

/// What a node reports: the CLI prints these for people; the JSON-lines interface serialises them.
public enum NodeEvent: Sendable {
    case listening(port: Int, addresses: [String])
    case published(name: String)
    case discoveryUnavailable(message: String)
    case peerFound(DiscoveredPeer)
    case peerLost(instanceName: String)
    /// A dial got no answer (a lossy or slow network) and is trying again: `attempt` is the round about
    /// to start, within the connect budget.
    case stillDialing(target: String, attempt: Int, reason: String)
    /// A connection arrived or was dialled; nothing is known of the peer yet.
    case exchangeStarted(id: String, role: ExchangeRole, remote: String)
    /// The peer proved its identity; the SAS is known; a decision is needed.
    /// `awaitsCommand`: an `accept`/`decline` command decides (JSON lines); otherwise a person or policy does.
    case exchangeRequested(id: String, peer: PeerIdentity, sas: String, role: ExchangeRole, awaitsCommand: Bool, remote: String = "")
    /// `elapsed`: seconds from the connection opening to the contact being committed.
    /// Initiator: the check code is known, the responder's person has not decided (nor shown who they are) yet.
    case exchangeCheckCode(id: String, sas: String)
    /// Initiator: the contact is stored but unconfirmed — the responder may or may not hold ours; a
    /// confirmation query settles it when the two nodes next reach each other (docs/PROTOCOL.md §11).
    case exchangeUnconfirmed(id: String, contact: Contact, reason: ProtocolError)
    case exchangeCompleted(id: String, contact: Contact, myMessage: String?, theirMessage: String?, elapsed: Double)
    case exchangeFailed(id: String, peer: PeerIdentity?, error: ProtocolError, byPeer: Bool)
    /// A connection ended before the peer said who it is (a probe, a stranger who walked away: PROTOCOL
    /// §6.2), during `phase`: not an exchange with anyone. Reported to programs as an `exchange.failed`
    /// with `error` (`connection_lost`) and no peer.
    case exchangeAbandoned(id: String, phase: String, error: ProtocolError)
    /// An exchange left unconfirmed (`exchangeUnconfirmed`) was settled later, when the two nodes reached
    /// each other (docs/PROTOCOL.md §11): `kept` when the other node holds it (it stands on both sides),
    /// else it was withdrawn here too (a contact new with it is gone from the book). `name` is the
    /// contact's as it was.
    case exchangeSettled(did: String, name: String, kept: Bool)
    /// A follow-up message arrived from a contact and was stored.
    case messageReceived(InboxItem)
    /// A delivery to this node was refused (or failed); `byPeer` when the sender ended it.
    case messageRefused(remote: String, reason: String, byPeer: Bool)
    /// A queued message was delivered (or found already delivered), or failed for good.
    case messageDelivered(OutboxItem)
    case messageGaveUp(OutboxItem)
    /// `count` connections from `address` were refused in the last `seconds` (the reason the last one
    /// met): summed like probes, one line per address per interval, at most 64 addresses with a line of
    /// their own (`address` nil: the rest, together).
    case rateLimited(address: String?, reason: String, count: Int, seconds: Int)
    /// `count` connections from `address` ended before identifying a session in the last `seconds`
    /// (port scans, probes, idle sockets, half-open sessions): one summary per address, not a line each
    /// (`address` nil: the addresses past the per-interval limit, together). `kinds` counts them by how
    /// they ended.
    case connectionsProbed(count: Int, seconds: Int, address: String?, kinds: [String: Int])
    /// A shared store (PostgreSQL) lost its server (`lost`), or reached it again; calls in between wait
    /// and retry, for up to 30 s each.
    case storeConnection(lost: Bool, store: String)
    case error(message: String)
}

/// Fans node events out to any number of subscribers.
public final class EventBus: Sendable {
    private let subscribers = NIOLockedValueBox<[Int: AsyncStream<NodeEvent>.Continuation]>([:])
    private let nextID = NIOLockedValueBox(0)
    private let observers = NIOLockedValueBox<[(id: Int, handler: @Sendable (NodeEvent) -> Void)]>([])

    public init() {}

    /// Calls `handler` with every event from now on, on the thread that emits it (an event loop, often),
    /// before the subscribers see it: for quick work that should not wake a task per event (a log
    /// line, a counter). A subscriber's task wakes for every event; on a busy bot that costs more
    /// than the work.
    /// Returns a token for `stopObserving` (an observer that lives as long as the node needs none).
    @discardableResult
    public func observe(_ handler: @escaping @Sendable (NodeEvent) -> Void) -> Int {
        let id = nextID.withLockedValue { n in
            n += 1
            return n
        }
        observers.withLockedValue { $0.append((id, handler)) }
        return id
    }

    /// Stops calling the observer `observe` returned `token` for (a control connection that closed).
    public func stopObserving(_ token: Int) {
        observers.withLockedValue { $0.removeAll { $0.id == token } }
    }

    public func subscribe() -> AsyncStream<NodeEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: NodeEvent.self, bufferingPolicy: .unbounded)
        let id = nextID.withLockedValue { n in
            n += 1
            return n
        }
        subscribers.withLockedValue { $0[id] = continuation }
        continuation.onTermination = { [subscribers] _ in _ = subscribers.withLockedValue { $0.removeValue(forKey: id) } }
        return stream
    }

    public func emit(_ event: NodeEvent) {
        for o in observers.withLockedValue({ $0 }) { o.handler(event) }
        for c in subscribers.withLockedValue({ Array($0.values) }) { c.yield(event) }
    }

    public func finish() {
        for c in subscribers.withLockedValue({ Array($0.values) }) { c.finish() }
    }
}

/// Which side of an exchange this node is: the one that dialled (`initiator`) or the one that was asked
/// (`responder`, the listening side). The faces' word for it, whatever the handshake underneath calls it.
public enum ExchangeRole: String, Sendable, Equatable {
    case initiator, responder

    package init(_ role: NoiseXXHandshake.Role) {
        switch role {
        case .initiator: self = .initiator
        case .responder: self = .responder
        }
    }
}
