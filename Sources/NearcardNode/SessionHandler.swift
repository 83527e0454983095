import Foundation
import NearcardCrypto
import NearcardModel
import NearcardProtocol
import NearcardStore
import NIOCore

/// How an exchange ended, for whoever started it.
public enum SessionResult: Sendable {
    case completed(Contact, ExchangeOutcome)
    case failed(ProtocolError, peer: PeerIdentity?, byPeer: Bool)
}

/// The thin handler that runs one session's state machine on a Channel: it frames bytes, feeds the
/// machine, performs its actions (asking for consent, checking and storing a delivery, storing a
/// contact), and applies the timeouts. This is the only type that touches a Channel.
final class SessionHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    enum Machine {
        /// A responder before message 1: the first frame says which kind of session this is.
        case dispatching
        case exchange(ExchangeStateMachine)
        case mail(MailboxStateMachine)
    }

    enum Completion {
        case none
        case exchange(EventLoopPromise<SessionResult>)
        case mail(EventLoopPromise<Result<Bool, ProtocolError>>)
    }

    let id: String
    private var machine: Machine
    private let service: ExchangeService
    private let mailbox: MailboxAuthority?
    private let remote: String
    private let completion: Completion
    private var parser = FrameParser()
    private var phaseTimer: Scheduled<Void>?
    private var sessionTimer: Scheduled<Void>?
    private var armedPhase = ""
    private var context: ChannelHandlerContext?
    private var reported = false
    /// Whether the peer has sent anything: a connection that closes silently (a reachability probe,
    /// a port scan) is not reported as a failed exchange.
    private var heardFromPeer = false
    /// The pending consent request; cancelled when the session ends first (the prompt is withdrawn).
    private var consentTask: Task<Void, Never>?
    /// Whether this exchange's card, sharing policy and proof were read from the store since the
    /// session began (the machine starts with the last read; see `refreshCard`).
    private var cardIsCurrent = false
    /// When the connection was set up (for the exchange's elapsed time).
    private var startedAt = NIODeadline.now()

    /// 8 hex digits naming the session in events and commands.
    private static func newID() -> String { Hex.encode(Sodium.randomBytes(4)) }

    /// A responder (listener side).
    init(responderFor service: ExchangeService, mailbox: MailboxAuthority, remote: String) {
        self.id = Self.newID()
        self.machine = .dispatching
        self.service = service
        self.mailbox = mailbox
        self.remote = remote
        self.completion = .none
    }

    /// An exchange initiator (`cardIsCurrent`: its card was read from the store just now).
    init(exchange: ExchangeStateMachine, cardIsCurrent: Bool, service: ExchangeService, remote: String, result: EventLoopPromise<SessionResult>) {
        self.id = Self.newID()
        self.machine = .exchange(exchange)
        self.cardIsCurrent = cardIsCurrent
        self.service = service
        self.mailbox = nil
        self.remote = remote
        self.completion = .exchange(result)
    }

    /// A mail sender.
    init(mail: MailboxStateMachine, service: ExchangeService, remote: String, result: EventLoopPromise<Result<Bool, ProtocolError>>) {
        self.id = Self.newID()
        self.machine = .mail(mail)
        self.service = service
        self.mailbox = nil
        self.remote = remote
        self.completion = .mail(result)
    }

    private var now: Int64 { Int64(Date().timeIntervalSince1970) }

    private var isInitiator: Bool { if case .none = completion { false } else { true } }

    private var isFinished: Bool {
        switch machine {
        case .dispatching: false
        case .exchange(let m): m.isFinished
        case .mail(let m): m.isFinished
        }
    }

    private var phaseName: String {
        switch machine {
        case .dispatching: "handshake"
        case .exchange(let m): m.phaseName
        case .mail(let m): m.isFinished ? "completed" : "mail"
        }
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        startedAt = .now()
    }

    func channelActive(context: ChannelHandlerContext) {
        if case .exchange(let m) = machine { service.events.emit(.exchangeStarted(id: id, role: m.role, remote: remote)) }
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        sessionTimer = context.eventLoop.scheduleTask(in: .seconds(Int64(service.limits.sessionTimeout))) {
            bound.value.abort(ProtocolError(.timeout, "the session took longer than \(Int(bound.value.service.limits.sessionTimeout)) s"))
        }
        switch machine {
        case .exchange(var m):
            let actions = m.start()
            machine = .exchange(m)
            perform(actions)
            scheduleCardRefresh()
        case .mail(var m):
            let actions = m.start()
            machine = .mail(m)
            perform(actions)
        case .dispatching:
            break
        }
        armTimer()
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        guard !isFinished else { return }
        heardFromPeer = true
        parser.append(bytes: buffer.readableBytesView)
        buffer.moveReaderIndex(forwardBy: buffer.readableBytes)
        do throws(ProtocolError) {
            while let frame = try parser.nextFrame() {
                receive(frame)
                if isFinished || reported { return }
            }
            if parser.bufferedByteCount > service.limits.maximumBufferedBytes {
                abort(ProtocolError(.tooLarge, "the peer sent more than a frame's worth of bytes without completing one"))
            }
        } catch {
            abort(error)
        }
    }

    private func receive(_ frame: [UInt8]) {
        switch machine {
        case .dispatching:
            do throws(ProtocolError) {
                let (kind, noise) = try SessionDispatch.readFirstMessage(frame, staticKey: service.keys.x25519, ephemeralKey: X25519.PrivateKey())
                switch kind {
                case .exchange:
                    service.events.emit(.exchangeStarted(id: id, role: .responder, remote: remote))
                    let start: (party: LocalParty, isCurrent: Bool)
                    do { start = try service.startingParty() } catch { throw Self.cardUnreadable(error) }
                    cardIsCurrent = start.isCurrent
                    var m = ExchangeStateMachine(resuming: noise, local: start.party, sasNonce: Sodium.randomBytes(SAS.nonceByteCount),
                                                 mailboxToken: Sodium.randomBytes(RouteRecord.mailboxTokenByteCount))
                    let actions = m.start()
                    machine = .exchange(m)
                    perform(actions)
                    scheduleCardRefresh()
                case .mail:
                    var m = MailboxStateMachine(receivingAfter: noise)
                    let actions = m.start()
                    machine = .mail(m)
                    perform(actions)
                }
            } catch {
                report(failure: error, peer: nil, byPeer: false)
                context?.close(promise: nil)
            }
        case .exchange(var m):
            let actions = m.receive(frame, now: now)
            machine = .exchange(m)
            perform(actions)
        case .mail(var m):
            let actions = m.receive(frame)
            machine = .mail(m)
            perform(actions)
        }
    }

    /// Reads this node's card, sharing policy and proof from the store into the machine, once per
    /// session and before the card is made. It is scheduled for the idle moment after our first flight
    /// (the peer is computing its answer), so the read is off the way to the peer; `receive` and `apply`
    /// do it first should that moment not have come. A card changed by another process (`nearcard card
    /// set`) is therefore the one the next session sends.
    private func refreshCard() {
        guard !cardIsCurrent, case .exchange(var m) = machine, !m.isFinished else { return }
        cardIsCurrent = true
        let fresh: LocalParty
        do { fresh = try service.localParty() } catch {
            abort(Self.cardUnreadable(error))
            return
        }
        _ = m.refreshLocal(fresh)
        machine = .exchange(m)
    }

    private static func cardUnreadable(_ error: Error) -> ProtocolError {
        ProtocolError(.internalError, "cannot read this node's card: \(error)")
    }

    private func scheduleCardRefresh() {
        guard let context, !cardIsCurrent else { return }
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        context.eventLoop.execute { bound.value.refreshCard() }
    }

    private func abort(_ error: ProtocolError) {
        switch machine {
        case .dispatching:
            report(failure: error, peer: nil, byPeer: false)
            context?.close(promise: nil)
        case .exchange(var m):
            let actions = m.abort(error)
            machine = .exchange(m)
            perform(actions)
        case .mail(var m):
            let actions = m.abort(error)
            machine = .mail(m)
            perform(mail: actions)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        phaseTimer?.cancel()
        sessionTimer?.cancel()
        consentTask?.cancel()
        if !isFinished && !reported {
            let silent = !isInitiator && !heardFromPeer
            if silent {
                reported = true
            } else {
                let lost = isInitiator && !heardFromPeer
                    ? ProtocolError(.connectionLost, "the peer closed the connection before the session began (it may be busy or rate-limiting)")
                    : ProtocolError(.connectionLost, "the connection closed during the \(phaseName)")
                // The connection is gone: report, but there is nothing to send on.
                self.context = nil
                report(failure: lost, peer: identifiedPeer, byPeer: false)
            }
        }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        if !isFinished { abort(ProtocolError(.connectionLost, "the connection failed: \(error)")) }
        context.close(promise: nil)
    }

    private var identifiedPeer: PeerIdentity? {
        if case .exchange(let m) = machine { return m.identifiedPeer }
        return nil
    }

    // MARK: actions

    private func write(_ bytes: [UInt8]) {
        guard let context else { return }
        var buffer = context.channel.allocator.buffer(capacity: bytes.count + 2)
        buffer.writeBytes(FrameParser.frame(bytes))
        context.write(wrapOutboundOut(buffer), promise: nil)
    }

    private func perform(_ actions: [ExchangeStateMachine.Action]) {
        guard let context else { return }
        var fixedAnswer: ConsentAnswer?
        for action in actions {
            switch action {
            case .send(let bytes):
                write(bytes)
            case .identified(let peer):
                if case .exchange(let m) = machine { service.events.emit(.exchangeRequested(id: id, peer: peer, role: m.role, awaitsCommand: service.consent.waitsForCommand)) }
                fixedAnswer = askConsent(peer, context: context)
            case .peerDecided:
                break
            case .completed(let outcome):
                context.flush()
                store(outcome, context: context)
            case .failed(let error, let byPeer):
                context.flush()
                report(failure: error, peer: identifiedPeer, byPeer: byPeer)
                context.close(promise: nil)
            }
        }
        if let fixedAnswer, !isFinished {
            // Decided by a fixed rule (--accept all, a bot policy): the decision leaves in the same
            // write as the SAS message before it, so the peer wakes once for both.
            apply(fixedAnswer)
            return
        }
        context.flush()
        armTimer()
    }

    private func perform(mail actions: [MailboxStateMachine.Action]) {
        guard let context else { return }
        for action in actions {
            switch action {
            case .send(let bytes):
                write(bytes)
            case .authorize(let delivery):
                authorize(delivery, context: context)
            case .delivered(_, let duplicate):
                context.flush()
                if case .mail(let p) = completion { p.succeed(.success(duplicate)) }
                reported = true
                context.close(promise: nil)
            case .failed(let error, let byPeer):
                context.flush()
                if !reported {
                    if case .mail(let p) = completion {
                        p.succeed(.failure(error))
                    } else {
                        service.events.emit(.messageRefused(remote: remote, reason: error.message, byPeer: byPeer))
                    }
                }
                reported = true
                context.close(promise: nil)
            }
        }
        context.flush()
        armTimer()
    }

    private func perform(_ actions: [MailboxStateMachine.Action]) { perform(mail: actions) }

    /// Asks the person or the policy; returns the answer at once when a fixed rule gives it
    /// (the caller applies it after the current actions), otherwise answers later on the loop.
    private func askConsent(_ peer: PeerIdentity, context: ChannelHandlerContext) -> ConsentAnswer? {
        guard case .exchange(let m) = machine else { return nil }
        let request = ConsentRequest(exchangeID: id, peer: peer, role: m.role, remoteAddress: remote)
        let consent = service.consent
        if let answer = consent.immediateAnswer(request) { return answer }
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        let loop = context.eventLoop
        consentTask = Task {
            let answer = await consent.decide(request)
            if Task.isCancelled { return }
            loop.execute { bound.value.apply(answer) }
        }
        return nil
    }

    /// This side's decision, into the state machine (on the event loop).
    private func apply(_ answer: ConsentAnswer) {
        if !cardIsCurrent { refreshCard() }
        guard case .exchange(var m) = machine else { return }
        let actions = m.decide(accept: answer.accept, message: answer.message, reason: answer.reason, now: now)
        machine = .exchange(m)
        perform(actions)
    }

    /// Checks and stores a delivery off the event loop (SQLite blocks), then answers.
    private func authorize(_ delivery: MailboxStateMachine.Delivery, context: ChannelHandlerContext) {
        guard let mailbox else { return }
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        let loop = context.eventLoop
        let events = service.events
        Task.detached {
            let outcome = mailbox.accept(delivery)
            loop.execute {
                let handler = bound.value
                guard case .mail(var m) = handler.machine else { return }
                let actions: [MailboxStateMachine.Action]
                switch outcome {
                case .stored(let item):
                    if let item { events.emit(.messageReceived(item)) }
                    actions = m.authorized(duplicate: false)
                case .duplicate:
                    actions = m.authorized(duplicate: true)
                case .refused(let error):
                    actions = m.refused(error)
                }
                handler.machine = .mail(m)
                handler.perform(mail: actions)
            }
        }
    }

    /// Stores the contact off the event loop (SQLite blocks), then reports and closes.
    private func store(_ outcome: ExchangeOutcome, context: ChannelHandlerContext) {
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        let loop = context.eventLoop
        let service = self.service
        Task.detached {
            let stored: Result<Contact, Error> = Result { try service.record(outcome) }
            loop.execute {
                let handler = bound.value
                switch stored {
                case .success(let contact):
                    handler.reportExchange(.completed(contact, outcome))
                case .failure(let error):
                    handler.reportExchange(.failed(ProtocolError(.internalError, "the exchange completed but storing the contact failed: \(error)"),
                                                   peer: outcome.peer, byPeer: false))
                }
                handler.context?.close(promise: nil)
            }
        }
    }

    private func report(failure error: ProtocolError, peer: PeerIdentity?, byPeer: Bool) {
        switch completion {
        case .mail(let p):
            guard !reported else { return }
            reported = true
            p.succeed(.failure(error))
        case .exchange, .none:
            if case .mail = machine {
                guard !reported else { return }
                reported = true
                service.events.emit(.messageRefused(remote: remote, reason: error.message, byPeer: byPeer))
                return
            }
            reportExchange(.failed(error, peer: peer, byPeer: byPeer))
        }
    }

    private func reportExchange(_ outcome: SessionResult) {
        guard !reported else { return }
        reported = true
        phaseTimer?.cancel()
        sessionTimer?.cancel()
        consentTask?.cancel()
        switch outcome {
        case .completed(let contact, let o):
            let elapsed = Double((NIODeadline.now() - startedAt).nanoseconds) / 1e9
            service.events.emit(.exchangeCompleted(id: id, contact: contact, myMessage: o.myMessage, theirMessage: o.theirMessage, elapsed: elapsed))
        case .failed(let error, let peer, let byPeer):
            service.events.emit(.exchangeFailed(id: id, peer: peer, error: error, byPeer: byPeer))
        }
        if case .exchange(let p) = completion { p.succeed(outcome) }
    }

    // MARK: timeouts

    /// One timer for the current phase: handshake steps, consent, then cards (or the delivery).
    private func armTimer() {
        guard let context else { return }
        let phase = phaseName
        guard phase != armedPhase else { return }
        armedPhase = phase
        phaseTimer?.cancel()
        phaseTimer = nil
        let seconds: TimeInterval
        let error: ProtocolError
        switch phase {
        case "handshake", "hello", "sas-reveal":
            seconds = service.limits.handshakeTimeout
            error = ProtocolError(.timeout, "no answer within \(Int(seconds)) s during the \(phase)")
        case "consent":
            seconds = service.limits.consentTimeout
            error = ProtocolError(.consentTimeout, "no decision within \(Int(seconds)) s")
        case "cards", "mail":
            seconds = service.limits.idleTimeout
            error = ProtocolError(.timeout, "no progress within \(Int(seconds)) s")
        default:
            return
        }
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        phaseTimer = context.eventLoop.scheduleTask(in: .milliseconds(Int64(seconds * 1000))) {
            let handler = bound.value
            if handler.phaseName == phase { handler.abort(error) }
        }
    }
}
