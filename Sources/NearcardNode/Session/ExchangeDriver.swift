import Foundation
import NearcardCrypto
import NearcardModel
import NearcardProtocol
import NearcardStore

/// One exchange above its connection: runs the `ExchangeStateMachine` and performs what it asks —
/// reading this node's card, asking for consent, storing the contact, reporting events and, for a
/// dialled exchange, the result. Lives on the connection's event loop; work that blocks or waits
/// (consent, SQLite writes) runs elsewhere and comes back through `connection.onLoop`.
final class ExchangeDriver: SessionDriver {
    let id = SessionID.make()
    private var machine: ExchangeStateMachine
    private let node: NodeContext
    private let consent: ConsentProvider
    private let remote: String
    /// Where a dialled exchange's result goes (nil for one that reached the listener).
    private let result: (@Sendable (SessionResult) -> Void)?
    private weak var connection: SessionConnection?
    /// The peer once proven (kept for reporting a failure after it).
    private var peer: PeerIdentity?
    /// Responder: this node's presence key, read once for the session (it seals our identity for a
    /// contact and goes with our card).
    private var presenceKey: [UInt8]?
    /// Initiator: the contact stored unconfirmed, until the responder's `confirm` (or the session's end).
    private var unconfirmed: (Contact, ExchangeOutcome)?
    /// The pending consent request; cancelled when the session ends first (the prompt is withdrawn).
    private var consentTask: Task<Void, Never>?
    private var reported = false
    private let startedAt = Date()

    /// A dialled exchange.
    init(initiatorFor node: NodeContext, consent: ConsentProvider, expected: ExpectedPeer, invitation: Invitation.Claim?, remote: String,
         result: @escaping @Sendable (SessionResult) -> Void, connection: SessionConnection) {
        // A fresh Noise static key per session (§5): the long-term key never crosses an exchange's handshake.
        machine = ExchangeStateMachine(initiatorFor: node.local, expected: expected, sessionKey: X25519.PrivateKey(), ephemeralKey: X25519.PrivateKey(),
                                       sasNonce: Sodium.randomBytes(SAS.nonceByteCount),
                                       mailboxToken: Sodium.randomBytes(RouteRecord.mailboxTokenByteCount), invitation: invitation)
        self.node = node
        self.consent = consent
        self.remote = remote
        self.result = result
        self.connection = connection
    }

    /// An exchange a peer opened, whose message 1 the dispatcher read.
    init(responderFor node: NodeContext, resuming noise: NoiseXXHandshake, presenceKey: [UInt8], remote: String, connection: SessionConnection) {
        self.presenceKey = presenceKey
        machine = ExchangeStateMachine(resuming: noise, identity: node.local, presenceKey: presenceKey, sasNonce: Sodium.randomBytes(SAS.nonceByteCount),
                                       mailboxToken: Sodium.randomBytes(RouteRecord.mailboxTokenByteCount))
        self.node = node
        self.consent = node.consent
        self.remote = remote
        self.result = nil
        self.connection = connection
    }

    var isFinished: Bool { machine.isFinished }

    private var now: Int64 { Int64(Date().timeIntervalSince1970) }

    func start() {
        node.events.emit(.exchangeStarted(id: id, role: machine.role, remote: remote))
        perform(machine.start())
    }

    func received(_ frame: [UInt8]) {
        perform(machine.receive(frame, now: now))
    }

    func timerFired(_ timer: SessionTimer, after seconds: Int) {
        perform(machine.timerFired(timer, after: seconds))
    }

    func failed(_ error: ProtocolError) {
        perform(machine.abort(error))
    }

    func closed(heardFromPeer: Bool) {
        consentTask?.cancel()
        guard !machine.isFinished, !reported else { return }
        // A peer that never showed who it is (protocol v2: the initiator in its hello, the responder in
        // its acceptance) "stopped before identifying itself" — a probe or a stranger who walked away,
        // not a lost exchange with someone (PROTOCOL §6.2).
        let lost = machine.role == .initiator && !heardFromPeer
            ? ProtocolError(.connectionLost, "the peer closed the connection before the session began (it may be busy or rate-limiting)")
            : machine.identifiedPeer == nil && peer == nil
            ? ProtocolError(.connectionLost, "the peer stopped before identifying itself (during the \(machine.phaseName))")
            : ProtocolError(.connectionLost, "the connection closed during the \(machine.phaseName)")
        perform(machine.abort(lost))
    }

    // MARK: actions

    private func perform(_ actions: [ExchangeStateMachine.Action]) {
        guard let connection else { return }
        var fixedAnswer: ConsentAnswer?
        var loadCard = false
        for action in actions {
            switch action {
            case .send(let bytes):
                connection.write(bytes)
            case .arm(let timer):
                connection.arm(timer)
            case .loadCard:
                loadCard = true
            case .identified(let peer, let sas, let invite?):
                // A QR invitation: showing it was the inviter's consent for this many sessions.
                self.peer = peer
                limitCommonContacts(with: peer)
                node.events.emit(.exchangeRequested(id: id, peer: peer, sas: sas, role: machine.role, awaitsCommand: false))
                admit(invite, peer: peer, sas: sas)
            case .identified(let peer, let sas, nil):
                self.peer = peer
                limitCommonContacts(with: peer)
                consent.expect(id)
                node.events.emit(.exchangeRequested(id: id, peer: peer, sas: sas, role: machine.role, awaitsCommand: consent.waitsForCommand))
                fixedAnswer = askConsent(peer, sas: sas)
            case .commonContactsStarted(let peer):
                let db = node.database
                Task.detached { try? db.recordCommonContactsRun(with: peer) }
            case .sasKnown(let sas):
                node.events.emit(.exchangeCheckCode(id: id, sas: sas))
            case .commit(let outcome, let confirmed):
                connection.flush()
                store(outcome, confirmed: confirmed)
            case .confirmed:
                confirm()
            case .unconfirmed(let error):
                if let (contact, outcome) = unconfirmed { report(.unconfirmed(contact, outcome, error)) }
                connection.close()
            case .finished:
                // `confirm` is on its way: the initiator closes once it has read it; close here only if
                // it has not within a moment (closing at once could, on some paths, overtake the frame).
                connection.flush()
                let closeNow = connection.onLoop { [weak self] (_: Bool) in self?.connection?.close() }
                Task {
                    try? await Task.sleep(nanoseconds: 2_000_000_000)
                    closeNow(true)
                }
            case .failed(let error, let byPeer):
                connection.flush()
                report(.failed(error, peer: peer, byPeer: byPeer))
                connection.close()
            }
        }
        if let fixedAnswer, !machine.isFinished {
            // Decided by a fixed rule (--accept all, a bot policy): the decision leaves in the same
            // write as the SAS message before it, so the peer wakes once for both.
            apply(fixedAnswer)
            return
        }
        connection.flush()
        // The first flight is on its way: read the card while the peer computes its answer.
        if loadCard { self.loadCard() }
    }

    /// Past the common-contacts rate with this peer (§22.3), our acceptance does not offer the step.
    private func limitCommonContacts(with peer: PeerIdentity) {
        // Only a session that would offer the step asks the store (most never do: it is off by default).
        guard machine.mayOfferCommonContacts else { return }
        if (try? node.database.commonContactsAllowed(with: peer.did)) != true { machine.withholdCommonContacts() }
    }

    private func loadCard() {
        let card: LocalCard
        do { card = try node.loadCard(sessionAddress: connection?.localAddress, presenceKey: presenceKey) } catch {
            perform(machine.abort(ProtocolError(.internalError, "cannot read this node's card: \(error)")))
            return
        }
        perform(machine.cardLoaded(card, now: now))
    }

    /// Asks the person or the policy; returns the answer at once when a fixed rule gives it
    /// (the caller applies it after the current actions), otherwise answers later on the loop.
    private func askConsent(_ peer: PeerIdentity, sas: String) -> ConsentAnswer? {
        let request = ConsentRequest(exchangeID: id, peer: peer, sas: sas, role: machine.role, remoteAddress: remote)
        if let answer = consent.immediateAnswer(request) { return answer }
        guard let connection else { return nil }
        let consent = self.consent
        let answered = connection.onLoop { [weak self] (answer: ConsentAnswer) in self?.apply(answer) }
        consentTask = Task {
            let answer = await consent.decide(request)
            if Task.isCancelled { return }
            answered(answer)
        }
        return nil
    }

    /// Checks the invitation off the loop (the store), then accepts, with the message this node's
    /// policy would send, or ends the session with `invite_refused`.
    private func admit(_ invite: Invitation.Presented, peer: PeerIdentity, sas: String) {
        guard let connection else { return }
        let node = self.node
        let request = ConsentRequest(exchangeID: id, peer: peer, sas: sas, role: machine.role, remoteAddress: remote)
        let message = consent.immediateAnswer(request).flatMap { $0.accept ? $0.message : nil }
        let decided = connection.onLoop { [weak self] (refusal: String?) in
            guard let self else { return }
            if let refusal {
                self.perform(self.machine.abort(ProtocolError(.inviteRefused, refusal)))
            } else {
                self.apply(ConsentAnswer(accept: true, message: message))
            }
        }
        Task.detached { decided(node.admit(invite)) }
    }

    private func apply(_ answer: ConsentAnswer) {
        perform(machine.decide(accept: answer.accept, message: answer.message, reason: answer.reason, now: now))
    }

    /// Stores the contact off the event loop (SQLite blocks), then goes on: the responder reports the
    /// contact and confirms; the initiator, its contact unconfirmed, says `done` and waits (§11).
    private func store(_ outcome: ExchangeOutcome, confirmed: Bool) {
        guard let connection else { return }
        let node = self.node
        // Held strongly: the contact is reported (and a dialled exchange's result given) even when the
        // peer has closed the connection by the time the store answers.
        let stored = connection.onLoop { (stored: Result<Contact, StoreFailure>) in
            switch stored {
            case .success(let contact) where confirmed:
                self.report(.completed(contact, outcome))
                self.perform(self.machine.committed())
            case .success(let contact):
                self.unconfirmed = (contact, outcome)
                self.perform(self.machine.committed())
            case .failure(let failure):
                NodeMetrics.storeError()
                self.perform(self.machine.storeFailed(ProtocolError(.internalError, failure.withdrawn
                    ? "this exchange was already withdrawn (its confirmation was asked for and refused); nothing was stored"
                    : "the exchange completed but storing the contact failed: \(failure.message)")))
            }
        }
        Task.detached {
            stored(Result { () throws(StoreFailure) -> Contact in
                do { return try node.record(outcome, confirmed: confirmed) } catch {
                    throw StoreFailure(message: "\(error)", withdrawn: (error as? StoreError)?.kind == .withdrawn)
                }
            })
        }
    }

    /// The responder confirmed: the unconfirmed contact is kept for good; report it and close.
    private func confirm() {
        guard let connection, let (contact, outcome) = unconfirmed else { return }
        let node = self.node
        let done = connection.onLoop { (_: Bool) in
            self.report(.completed(contact, outcome))
            self.connection?.close()
        }
        Task.detached {
            // A failure leaves the row pending: the next confirmation query settles it the same way.
            done((try? node.database.confirmExchange(edge: outcome.graphEdgeID)) ?? false)
        }
    }

    private func report(_ outcome: SessionResult) {
        guard !reported else { return }
        reported = true
        consentTask?.cancel()
        switch outcome {
        case .completed(let contact, let o):
            node.events.emit(.exchangeCompleted(id: id, contact: contact, myMessage: o.myMessage, theirMessage: o.theirMessage,
                                                elapsed: Date().timeIntervalSince(startedAt)))
        case .unconfirmed(let contact, _, let error):
            node.events.emit(.exchangeUnconfirmed(id: id, contact: contact, reason: error))
        case .failed(let error, let peer, let byPeer):
            node.events.emit(.exchangeFailed(id: id, peer: peer, error: error, byPeer: byPeer))
        }
        result?(outcome)
    }
}

/// A store error carried back to the loop as text.
struct StoreFailure: Error, Sendable {
    let message: String
    /// The store refused because the peer was already told this exchange is withdrawn.
    var withdrawn = false
}
