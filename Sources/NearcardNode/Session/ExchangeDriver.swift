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
    private let consent: any ConsentProvider
    private let remote: String
    /// Where a dialled exchange's result goes (nil for one that reached the listener).
    private let result: (@Sendable (SessionResult) -> Void)?
    private weak var connection: (any SessionConnection)?
    /// The peer once proven (kept for reporting a failure after it).
    private var peer: PeerIdentity?
    /// Responder: this node's presence key, taken once for the session from the node (it seals our
    /// identity for a contact and goes with our card).
    private var presenceKey: [UInt8]?
    /// Initiator: the contact stored unconfirmed, until the responder's `confirm` (or the session's end).
    private var unconfirmed: (Contact, ExchangeOutcome)?
    /// Why this side's book refused the contact, once it has (the result says so to the face).
    private var notStored: StoreError?
    /// The pending consent request; cancelled when the session ends first (the prompt is withdrawn).
    private var consentTask: Task<Void, Never>?
    private var reported = false
    /// Responder: the listener's admission of this connection (nil in tests that build a pipeline by hand).
    private let admitted: AdmittedConnection?
    /// Responder: whether the peer completed the handshake, and the exchange was reported as started.
    /// A connection that sends message 1 and nothing more (a half-open flood) is a probe, summed up
    /// with the others (§14), never an `exchange.started`/`exchange.failed` pair.
    private var announced = false
    /// The phase in which a peer that never identified itself went away (`closed`), if that is how it ended.
    private var abandonedDuring: String?
    private let startedAt = Date()
    /// Events said while frames were being written: they go out once those frames are flushed, in the
    /// order they were said, so this side's bookkeeping (a JSON line, a log line) never holds up the
    /// peer's next step.
    private var heldEvents: [NodeEvent] = []
    private var depth = 0

    /// A dialled exchange.
    init(
        initiatorFor node: NodeContext, consent: any ConsentProvider, expected: ExpectedPeer, invitation: Invitation.Claim?,
        version: Int = ExchangeMessage.version, remote: String, result: @escaping @Sendable (SessionResult) -> Void, connection: any SessionConnection
    ) {
        // A fresh Noise static key per session (§5): the long-term key never crosses an exchange's handshake.
        // The keys come made ahead (`SessionKeys`), so the dial does not wait for them.
        machine = ExchangeStateMachine(
            initiatorFor: node.local, expected: expected, sessionKey: SessionKeys.take(), ephemeralKey: SessionKeys.take(),
            sasNonce: Sodium.randomBytes(SAS.nonceByteCount),
            mailboxToken: Sodium.randomBytes(RouteRecord.mailboxTokenByteCount), sealKey: SessionKeys.take(), psiRandomness: .fresh(),
            invitation: invitation, version: version)
        self.node = node
        self.consent = consent
        self.remote = remote
        self.result = result
        self.connection = connection
        self.admitted = nil
    }

    /// An exchange a peer opened, whose message 1 the dispatcher read.
    init(
        responderFor node: NodeContext, resuming noise: NoiseXXHandshake, remote: String, admitted: AdmittedConnection? = nil,
        connection: any SessionConnection
    ) throws(ProtocolError) {
        let presenceKey: [UInt8]
        do { presenceKey = try node.presenceKey() } catch {
            throw ProtocolError(.internalError, "this node's presence key cannot be read: \(error.message)")
        }
        self.presenceKey = presenceKey
        machine = ExchangeStateMachine(
            resuming: noise, identity: node.local, presenceKey: presenceKey, sasNonce: Sodium.randomBytes(SAS.nonceByteCount),
            mailboxToken: Sodium.randomBytes(RouteRecord.mailboxTokenByteCount), sealKey: SessionKeys.take(), psiRandomness: .fresh())
        self.node = node
        self.consent = node.consent
        self.remote = remote
        self.result = nil
        self.admitted = admitted
        self.connection = connection
    }

    var isFinished: Bool { machine.isFinished }

    private var now: Int64 { Int64(Date().timeIntervalSince1970) }

    func start() {
        batch {
            if machine.role == .initiator { announce() }
            perform(machine.start())
        }
    }

    /// The exchange is reported as started: an initiator's at once, a responder's when the peer's
    /// message 3 completes the handshake.
    private func announce() {
        guard !announced else { return }
        announced = true
        admitted?.identified()
        emit(.exchangeStarted(id: id, role: ExchangeRole(machine.role), remote: remote))
    }

    func received(_ frame: [UInt8]) {
        let actions = machine.receive(frame, now: now)
        SessionTrace.mark("machine: \(machine.phaseName)")
        // Message 3 that the machine accepted: the peer is a Nearcard node that did its part.
        if !machine.isFinished { announce() }
        perform(actions)
    }

    func timerFired(_ timer: SessionTimer, after seconds: Int) {
        perform(machine.timerFired(timer, after: seconds))
    }

    func failed(_ error: ProtocolError) {
        perform(machine.abort(error))
    }

    func closed(heardFromPeer: Bool, after waited: Double) {
        consentTask?.cancel()
        guard !machine.isFinished, !reported else { return }
        // A peer that never showed who it is (protocol v2: the initiator in its hello, the responder in
        // its acceptance) "stopped before identifying itself" — a probe or a stranger who walked away,
        // not a lost exchange with someone (PROTOCOL §6.2).
        // A listener at a limit closes a connection without a byte (PROTOCOL §4, §14): the exchange never
        // began, so this is `busy` (exit 8, like an address that takes no connection), not a lost session.
        let anonymous = machine.identifiedPeer == nil && peer == nil
        let lost: ProtocolError
        if machine.role == .initiator && !heardFromPeer && waited < node.limits.handshakeTimeout * 0.8 {
            // Closed at once, without a byte: what a node at its limit does (§4, §14).
            lost = ProtocolError(
                .busy,
                "the peer closed the connection before the session began: its node is at a limit or limiting this address, is not a Nearcard node of this version, or the link was cut"
            )
        } else if machine.role == .initiator && !heardFromPeer {
            // Closed after the seconds a node waits for a first message: ours never reached it whole.
            lost = ProtocolError(
                .connectionLost,
                "the peer's node closed the connection after \(Int(waited)) s without answering: our first message did not reach it (a lossy link?)")
        } else if anonymous {
            lost = ProtocolError(.connectionLost, "the peer stopped before identifying itself (during the \(machine.phaseName))")
            abandonedDuring = machine.phaseName
        } else {
            lost = ProtocolError(.connectionLost, "the connection closed during the \(machine.phaseName)")
        }
        perform(machine.abort(lost))
    }

    // MARK: actions

    /// Runs `body`; the events it says are held until its frames are flushed (or it ends).
    private func batch(_ body: () -> Void) {
        depth += 1
        body()
        depth -= 1
        if depth == 0 { releaseEvents() }
    }

    private func emit(_ event: NodeEvent) {
        if depth > 0 { heldEvents.append(event) } else { node.events.emit(event) }
    }

    private func releaseEvents() {
        while !heldEvents.isEmpty { node.events.emit(heldEvents.removeFirst()) }
    }

    private func perform(_ actions: [ExchangeStateMachine.Action]) {
        batch { performNow(actions) }
    }

    private func performNow(_ actions: [ExchangeStateMachine.Action]) {
        guard let connection else { return }
        var fixedAnswer: ConsentAnswer?
        var loadCard = false
        var prepareCard = false
        var commit: (outcome: ExchangeOutcome, confirmed: Bool)?
        for action in actions {
            switch action {
            case .send(let bytes):
                connection.write(bytes)
            case .arm(let timer):
                connection.arm(timer)
            case .loadCard:
                loadCard = true
            case .prepareCard:
                prepareCard = true
            case .identified(let peer, let sas, let invite?):
                // A QR invitation: showing it was the inviter's consent for this many sessions.
                self.peer = peer
                limitCommonContacts(with: peer)
                emit(.exchangeRequested(id: id, peer: peer, sas: sas, role: ExchangeRole(machine.role), awaitsCommand: false, remote: remote))
                admit(invite, peer: peer, sas: sas)
            case .identified(let peer, let sas, nil):
                self.peer = peer
                limitCommonContacts(with: peer)
                consent.expect(id)
                emit(.exchangeRequested(id: id, peer: peer, sas: sas, role: ExchangeRole(machine.role), awaitsCommand: consent.waitsForCommand, remote: remote))
                floor = .running
                connection.after(Self.refusalFloor(consentTimeout: node.limits.consentTimeout)) { [weak self] in self?.refusalFloorPassed() }
                fixedAnswer = askConsent(peer, sas: sas)
            case .commonContactsStarted(let peer):
                let db = node.database
                Task.detached { try? db.recordCommonContactsRun(with: peer) }
            case .sasKnown(let sas):
                emit(.exchangeCheckCode(id: id, sas: sas))
            case .commit(let outcome, let confirmed):
                commit = (outcome, confirmed)
            case .confirmed:
                confirm()
            case .unconfirmed(let error):
                if let (contact, outcome) = unconfirmed { report(.unconfirmed(contact, ExchangeSummary(outcome), error)) }
                connection.close()
            case .finished:
                // `confirm` is on its way: the initiator closes once it has read it; close here only if
                // it has not within a moment (closing at once could, on some paths, overtake the frame).
                connection.flush()
                connection.close(after: 2)
            case .failed(let error, let byPeer):
                connection.flush()
                report(.failed(error, peer: peer, byPeer: byPeer, notStored: notStored))
                connection.close()
            }
        }
        if let fixedAnswer, !machine.isFinished, fixedAnswer.accept || !scheduleRefusal(fixedAnswer) {
            // Decided by a fixed rule (--accept all, a bot policy): an acceptance leaves in the same
            // write as the SAS message before it, so the peer wakes once for both (a refusal waits
            // for the session's floor, `scheduleRefusal`, while what came before is sent below).
            apply(fixedAnswer)
            return
        }
        connection.flush()
        releaseEvents()
        // Stored once what came before has been sent.
        if let commit { store(commit.outcome, confirmed: commit.confirmed) }
        // Our acceptance is on its way: make our card while the peer decides.
        if prepareCard { perform(machine.prepareCard(now: now)) }
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
        let request = ConsentRequest(exchangeID: id, peer: peer, sas: sas, role: ExchangeRole(machine.role), remoteAddress: remote)
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
        let request = ConsentRequest(exchangeID: id, peer: peer, sas: sas, role: ExchangeRole(machine.role), remoteAddress: remote)
        let message = consent.acceptanceMessage(request)
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
        if !answer.accept, scheduleRefusal(answer) { return }
        perform(machine.decide(accept: answer.accept, message: answer.message, reason: answer.reason, now: now))
    }

    /// Whether the request was put to the person or the policy and `refusalFloor` runs (`.running`),
    /// has passed, or has not begun; and a refusal decided before it passed, held until then.
    private enum Floor { case notAsked, running, passed }
    private var floor = Floor.notAsked
    private var heldRefusal: ConsentAnswer?

    /// The earliest a refusal leaves after the request is put (docs/PROTOCOL.md §8, docs/SECURITY.md):
    /// a time drawn per session between 1.2 and 4 s (within 80 % of the consent timeout), the span in
    /// which a person says no. A policy's refusal (an allowlist, a bot's rule, nobody at the terminal)
    /// is decided in a millisecond: sent then, its timing would tell a stranger that no person was
    /// asked. A person's later "no" leaves when they say it.
    static func refusalFloor(consentTimeout: Double) -> Double {
        let upper = min(4.0, consentTimeout * 0.8)
        return Double.random(in: min(1.2, upper)...upper)
    }

    /// Holds a refusal decided before this session's floor passed, to send it then; false when it is due.
    private func scheduleRefusal(_ answer: ConsentAnswer) -> Bool {
        guard floor == .running else { return false }
        heldRefusal = answer
        return true
    }

    /// The floor passed: a refusal held until now leaves.
    private func refusalFloorPassed() {
        floor = .passed
        guard let answer = heldRefusal else { return }
        heldRefusal = nil
        perform(machine.decide(accept: false, message: nil, reason: answer.reason, now: now))
    }

    /// Runs a store write and hands its answer to `then`, on this session's loop: at once for the
    /// home's SQLite file (a local write of a tenth of a millisecond, where handing it to another
    /// thread and back would cost a busy bot as much again in wake-ups), in a detached task for a
    /// PostgreSQL store (round trips over the network must not hold up the loop's other sessions).
    private func storing<T: Sendable>(_ work: @escaping @Sendable () -> T, then: @escaping (T) -> Void) {
        guard let connection else { return }
        if !node.database.isShared {
            then(work())
            return
        }
        let answered = connection.onLoop(then)
        Task.detached { answered(work()) }
    }

    /// How long before the phase's deadline a store write must have committed: its answer reaches the
    /// session before the timer does, so the peer hears a definite end.
    static let commitMargin: TimeInterval = 0.5

    /// Stores the contact, then goes on: the responder reports the contact and confirms; the
    /// initiator, its contact unconfirmed, says `done` and waits (§11).
    private func store(_ outcome: ExchangeOutcome, confirmed: Bool) {
        let node = self.node
        // The write commits before this side's deadline or not at all (§12: a side past a deadline
        // stores nothing): a book that stalls longer ends the exchange, said as what it is.
        let commitBy = connection?.secondsLeft.map { Date().addingTimeInterval($0 - Self.commitMargin) }
        // `self` is held strongly: the contact is reported (and a dialled exchange's result given) even
        // when the peer has closed the connection by the time a remote store answers.
        SessionTrace.mark("store")
        storing(
            { () -> Result<Contact, StoreFailure> in
                Result { () throws(StoreFailure) -> Contact in
                    do {
                        return try NearcardDatabase.committing(by: commitBy) { try node.record(outcome, confirmed: confirmed) }
                    } catch let error as StoreError {
                        throw StoreFailure(error: error)
                    } catch {
                        throw StoreFailure(error: StoreError(.database, "\(error)"))
                    }
                }
            },
            then: { stored in
                SessionTrace.mark("stored")
                self.batch {
                    switch stored {
                    case .success(let contact) where confirmed:
                        // Reported once `confirm` has gone (the batch holds the event until the flush).
                        self.report(.completed(contact, ExchangeSummary(outcome)))
                        self.perform(self.machine.committed())
                    case .success(let contact):
                        self.unconfirmed = (contact, outcome)
                        self.perform(self.machine.committed())
                    case .failure(let failure) where failure.error.kind == .inDoubt:
                        // Whether the book kept it is not known: the peer is told nothing and asks (§11).
                        NodeMetrics.storeError()
                        self.notStored = failure.error
                        self.perform(self.machine.storeInDoubt(ProtocolError(.internalError, failure.error.message)))
                    case .failure(let failure):
                        NodeMetrics.storeError()
                        // The peer hears that nothing was kept, never the words of our store's failure
                        // (a path, a server's name); this side's face says what failed and what to do.
                        let withdrawn = failure.error.kind == .withdrawn
                        if !withdrawn { self.notStored = failure.error }
                        self.perform(
                            self.machine.storeFailed(
                                ProtocolError(
                                    .internalError,
                                    withdrawn
                                        ? "this exchange was already withdrawn (its confirmation was asked for and refused); nothing was stored"
                                        : "the other node could not store the exchange, so neither side keeps it")))
                    }
                }
            })
    }

    /// The responder confirmed: the unconfirmed contact is kept for good; report it and close.
    private func confirm() {
        guard let (contact, outcome) = unconfirmed else { return }
        let node = self.node
        // A failure leaves the row pending: the next confirmation query settles it the same way.
        storing(
            { (try? node.database.confirmExchange(edge: outcome.graphEdgeID)) ?? false },
            then: { _ in
                self.report(.completed(contact, ExchangeSummary(outcome)))
                self.connection?.close()
            })
    }

    private func report(_ outcome: SessionResult) {
        guard !reported else { return }
        SessionTrace.mark("report")
        reported = true
        consentTask?.cancel()
        if !announced {
            // Never past message 1 (silent after it, or a message 3 that is not one): a probe.
            if case .failed(let error, _, _, _) = outcome {
                admitted?.endedUnidentified(error.code == .timeout || error.code == .connectionLost ? .halfOpen : .foreign)
            }
            result?(outcome)
            return
        }
        switch outcome {
        case .completed(let contact, let o):
            emit(
                .exchangeCompleted(
                    id: id, contact: contact, myMessage: o.myMessage, theirMessage: o.theirMessage,
                    elapsed: Date().timeIntervalSince(startedAt)))
        case .unconfirmed(let contact, _, let error):
            emit(.exchangeUnconfirmed(id: id, contact: contact, reason: error))
        case .failed(let error, nil, false, _) where abandonedDuring != nil:
            emit(.exchangeAbandoned(id: id, phase: abandonedDuring ?? "", error: error))
        case .failed(let error, let peer, let byPeer, _):
            emit(.exchangeFailed(id: id, peer: peer, error: error, byPeer: byPeer))
        }
        result?(outcome)
    }
}

/// A store error carried back to the loop (`.withdrawn`: the peer was already told this exchange is
/// not kept).
struct StoreFailure: Error, Sendable {
    let error: StoreError
}
