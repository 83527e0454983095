public import NearcardModel
import NearcardProtocol

/// A request for a person's (or a policy's) consent: who, and the SAS both screens show.
public struct ConsentRequest: Sendable {
    package let exchangeID: String
    public let peer: PeerIdentity
    /// The check code both screens show ("123 456").
    public let sas: String
    /// Which side this node is: a listener asked by someone who dialled (`.responder`), or the dialling
    /// side asked to confirm the person who answered (`.initiator`).
    public let role: ExchangeRole
    public let remoteAddress: String

    package init(exchangeID: String, peer: PeerIdentity, sas: String, role: ExchangeRole, remoteAddress: String) {
        self.exchangeID = exchangeID
        self.peer = peer
        self.sas = sas
        self.role = role
        self.remoteAddress = remoteAddress
    }
}

/// The answer, and the ephemeral message to send with our card if accepted.
public struct ConsentAnswer: Sendable, Equatable {
    public var accept: Bool
    public var message: String?
    public var reason: String?

    public init(accept: Bool, message: String? = nil, reason: String? = nil) {
        self.accept = accept
        self.message = message
        self.reason = reason
    }

    /// A refusal; `reason`, when there is one, says why in words the peer reads after "the peer declined: "
    /// (so it does not say "declined" again).
    public static func decline(_ reason: String? = nil) -> ConsentAnswer { ConsentAnswer(accept: false, reason: reason) }
}

/// Whoever decides: a person at a terminal, or a written policy. The node applies the consent
/// timeout; a late answer is ignored.
public protocol ConsentProvider: Sendable {
    func decide(_ request: ConsentRequest) async -> ConsentAnswer
    /// The answer, when a fixed rule gives it without waiting (for a person, a command or a remote
    /// store): the session then takes it on its own event loop instead of handing the request to a
    /// task and back. Called at most once per request, instead of `decide`.
    func immediateAnswer(_ request: ConsentRequest) -> ConsentAnswer?
    /// The message this side would send with an acceptance it did not have to decide (a QR
    /// invitation stands for the decision): asks nothing and counts nothing.
    func acceptanceMessage(_ request: ConsentRequest) -> String?
    /// Whether the answer comes from an `accept`/`decline` command (JSON lines): the request is then
    /// announced with `"decision": "pending"`.
    var waitsForCommand: Bool { get }
    /// Called before the request is announced (the `exchangeRequested` event), so that an answer given
    /// the moment the event is seen is kept until the session asks for it.
    func expect(_ exchangeID: String)
}

extension ConsentProvider {
    public func immediateAnswer(_ request: ConsentRequest) -> ConsentAnswer? { nil }
    public func acceptanceMessage(_ request: ConsentRequest) -> String? { nil }
    public var waitsForCommand: Bool { false }
    public func expect(_ exchangeID: String) {}
}

/// Consent given by `accept`/`decline` commands (JSON lines): for requests to a node run with
/// `listen --jsonl --accept ask`, and for its own dials with `"confirm": true`. An accept without a
/// message sends `message`.
public struct DecidedByCommand: ConsentProvider {
    package let decisions: PendingDecisions
    package let message: String?
    public init(decisions: PendingDecisions, message: String?) {
        self.decisions = decisions
        self.message = message
    }
    public func decide(_ request: ConsentRequest) async -> ConsentAnswer {
        var answer = await decisions.decide(request)
        if answer.accept && answer.message == nil { answer.message = message }
        return answer
    }
    public var waitsForCommand: Bool { true }
    public func expect(_ exchangeID: String) { decisions.announce(exchangeID) }
}

/// Accept everyone (`--accept all`, and `exchange --yes`).
public struct AcceptAll: ConsentProvider {
    package let message: String?
    public init(message: String?) { self.message = message }
    public func decide(_ request: ConsentRequest) async -> ConsentAnswer { ConsentAnswer(accept: true, message: message) }
    public func immediateAnswer(_ request: ConsentRequest) -> ConsentAnswer? { ConsentAnswer(accept: true, message: message) }
    public func acceptanceMessage(_ request: ConsentRequest) -> String? { message }
}

/// Accept only DIDs on a list (`--accept allowlist:FILE`).
public struct AcceptAllowlist: ConsentProvider {
    package let dids: Set<String>
    package let message: String?
    public init(dids: Set<String>, message: String?) {
        self.dids = dids
        self.message = message
    }
    public func decide(_ request: ConsentRequest) async -> ConsentAnswer {
        immediateAnswer(request)!
    }
    public func immediateAnswer(_ request: ConsentRequest) -> ConsentAnswer? {
        dids.contains(request.peer.did) ? ConsentAnswer(accept: true, message: message) : .decline("not on the allowlist")
    }
    public func acceptanceMessage(_ request: ConsentRequest) -> String? { message }
}

/// Decline with a reason (no terminal to ask and no policy given).
public struct DeclineAll: ConsentProvider {
    package let reason: String
    public init(reason: String) { self.reason = reason }
    public func decide(_ request: ConsentRequest) async -> ConsentAnswer { .decline(reason) }
}
