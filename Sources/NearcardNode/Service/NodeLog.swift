import Foundation
public import Logging
import NearcardDiscovery
import NearcardModel
import NearcardProtocol
import NearcardStore

/// The node's events as log records through swift-log: one record per event, its facts as metadata
/// (ids, codes, DIDs, addresses, counts) and never a secret or what a person wrote: no card fields,
/// no message text, no names. The process's logging backend decides where they go (the CLI writes
/// `key=value` lines to stderr, which journald keeps).
public enum NodeLog {
    /// Logs every event `bus` emits from now on, as it is emitted (no task woken per event); an
    /// event below the logger's level costs one comparison.
    public static func attach(to bus: EventBus, logger: Logger) {
        bus.observe { event in
            guard logger.logLevel <= level(of: event), let (level, name, metadata) = describe(event) else { return }
            logger.log(level: level, "\(name)", metadata: metadata)
        }
    }

    /// The level an event is logged at (what `describe` says, without building the record).
    static func level(of event: NodeEvent) -> Logger.Level {
        switch event {
        case .peerFound, .peerLost, .exchangeStarted, .exchangeRequested, .exchangeCheckCode: .debug
        case .exchangeUnconfirmed, .exchangeSettled: .notice
        case .stillDialing: .notice
        case .listening, .published, .exchangeCompleted, .messageReceived, .messageDelivered: .info
        case .exchangeFailed(_, _, let error, _): error.code == .internalError ? .error : .notice
        case .exchangeAbandoned: .notice
        case .messageRefused: .notice
        case .storeConnection(let lost, _): lost ? .warning : .notice
        case .discoveryUnavailable, .messageGaveUp, .rateLimited: .warning
        case .connectionsProbed: .notice
        case .error: .error
        }
    }

    /// The record for an event: its level, its name (the JSON-lines event name) and its metadata.
    static func describe(_ event: NodeEvent) -> (Logger.Level, String, Logger.Metadata)? {
        switch event {
        case .listening(let port, let addresses):
            return (.info, "started", ["port": "\(port)", "addresses": "\(addresses.joined(separator: ","))"])
        case .published(let name):
            return (.info, "published", ["instance": "\(name)"])
        case .discoveryUnavailable(let message):
            return (.warning, "discovery-unavailable", ["reason": "\(message)"])
        case .peerFound(let p):
            return (.debug, "peer.found", ["instance": "\(p.instanceName)", "contact": "\(p.contact?.did ?? "")"])
        case .peerLost(let name):
            return (.debug, "peer.lost", ["instance": "\(name)"])
        case .stillDialing(let target, let attempt, let reason):
            return (.notice, "dial.retrying", ["target": "\(target)", "attempt": "\(attempt)", "reason": "\(reason)"])
        case .exchangeStarted(let id, let role, let remote):
            return (.debug, "exchange.started", ["id": "\(id)", "role": "\(role)", "remote": "\(remote)"])
        case .exchangeRequested(let id, let peer, _, _, _, _):
            return (.debug, "exchange.requested", ["id": "\(id)", "did": "\(peer.did)"])
        case .exchangeCheckCode(let id, _):
            return (.debug, "exchange.check-code", ["id": "\(id)"])
        case .exchangeUnconfirmed(let id, let contact, let error):
            return (
                .notice, "exchange.unconfirmed",
                [
                    "id": "\(id)", "contact": "\(contact.id)", "did": "\(contact.didPublicKey ?? "")",
                    "code": "\(error.code.rawValue)",
                ]
            )
        case .exchangeCompleted(let id, let contact, _, _, let elapsed):
            return (
                .info, "exchange.completed",
                [
                    "id": "\(id)", "contact": "\(contact.id)", "did": "\(contact.didPublicKey ?? "")",
                    "status": "\(contact.verificationStatus.rawValue)", "ms": "\(Int((elapsed * 1000).rounded()))",
                ]
            )
        case .exchangeFailed(let id, let peer, let error, let byPeer):
            var m: Logger.Metadata = ["id": "\(id)", "code": "\(error.code.rawValue)", "by_peer": "\(byPeer)"]
            if let did = peer?.did { m["did"] = "\(did)" }
            let level: Logger.Level = error.code == .internalError ? .error : .notice
            return (level, "exchange.failed", m)
        case .exchangeAbandoned(let id, _, let error):
            return (.notice, "exchange.failed", ["id": "\(id)", "code": "\(error.code.rawValue)", "by_peer": "false"])
        case .exchangeSettled(let did, _, let kept):
            return (.notice, "exchange.settled", ["did": "\(did)", "kept": "\(kept)"])
        case .messageReceived(let m):
            return (.info, "message.received", ["id": "\(m.id)", "from": "\(m.fromDID)"])
        case .messageRefused(let remote, _, let byPeer):
            return (.notice, "message.refused", ["remote": "\(remote)", "by_peer": "\(byPeer)"])
        case .messageDelivered(let m):
            return (.info, "message.delivered", ["id": "\(m.id)", "to": "\(m.contactDID)", "attempts": "\(m.attempts)"])
        case .messageGaveUp(let m):
            return (.warning, "message.failed", ["id": "\(m.id)", "to": "\(m.contactDID)", "attempts": "\(m.attempts)"])
        case .rateLimited(let address, let reason, let count, let seconds):
            return (.warning, "rate-limited", ["address": "\(address ?? "others")", "reason": "\(reason)", "count": "\(count)", "seconds": "\(seconds)"])
        case .connectionsProbed(let count, let seconds, let address, let kinds):
            var m: Logger.Metadata = ["count": "\(count)", "seconds": "\(seconds)", "address": "\(address ?? "others")"]
            for (k, v) in kinds { m[k] = "\(v)" }
            return (.notice, "connections.probed", m)
        case .storeConnection(let lost, let store):
            return lost ? (.warning, "store.disconnected", ["store": "\(store)"]) : (.notice, "store.reconnected", ["store": "\(store)"])
        case .error(let message):
            return (.error, "error", ["reason": "\(message)"])
        }
    }
}
