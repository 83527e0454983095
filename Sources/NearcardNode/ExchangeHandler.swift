import Foundation
import NearcardModel
import NearcardProtocol
import NIOCore

/// How a session ended, for whoever started it.
public enum SessionResult: Sendable {
    case completed(Contact, ExchangeOutcome)
    case failed(ProtocolError, peer: PeerIdentity?, byPeer: Bool)
}

/// The thin handler that runs one `ExchangeStateMachine` on a Channel: it frames bytes, feeds the
/// machine, performs its actions, asks for consent, applies the timeouts, and stores the outcome.
/// This is the only type that touches a Channel.
final class ExchangeHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    let id: String
    private var machine: ExchangeStateMachine
    private let service: ExchangeService
    private let remote: String
    private let result: EventLoopPromise<SessionResult>?
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

    init(machine: ExchangeStateMachine, service: ExchangeService, remote: String, result: EventLoopPromise<SessionResult>?) {
        self.id = UUID().uuidString.prefix(8).lowercased()
        self.machine = machine
        self.service = service
        self.remote = remote
        self.result = result
    }

    private var now: Int64 { Int64(Date().timeIntervalSince1970) }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func channelActive(context: ChannelHandlerContext) {
        if machine.role == .initiator { service.events.emit(.exchangeStarted(id: id, role: machine.role, remote: remote)) }
        let loop = context.eventLoop
        let bound = NIOLoopBound(self, eventLoop: loop)
        sessionTimer = loop.scheduleTask(in: .seconds(Int64(service.limits.sessionTimeout))) {
            bound.value.perform(bound.value.machine.abort(ProtocolError(.timeout, "the session took longer than \(Int(bound.value.service.limits.sessionTimeout)) s")))
        }
        perform(machine.start())
        armTimer()
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        guard !machine.isFinished else { return }
        if !heardFromPeer {
            heardFromPeer = true
            if machine.role == .responder { service.events.emit(.exchangeStarted(id: id, role: machine.role, remote: remote)) }
        }
        parser.append(bytes: buffer.readableBytesView)
        buffer.moveReaderIndex(forwardBy: buffer.readableBytes)
        do throws(ProtocolError) {
            while let frame = try parser.nextFrame() {
                perform(machine.receive(frame, now: now))
                if machine.isFinished { return }
            }
            if parser.bufferedByteCount > service.limits.maximumBufferedBytes {
                perform(machine.abort(ProtocolError(.tooLarge, "the peer sent more than a frame's worth of bytes without completing one")))
            }
        } catch {
            perform(machine.abort(error))
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        phaseTimer?.cancel()
        sessionTimer?.cancel()
        if !machine.isFinished {
            let closedSilently = machine.role == .responder && !heardFromPeer
            let lost = closedSilently
                ? ProtocolError(.connectionLost, "the connection closed before anything was sent")
                : machine.role == .initiator && !heardFromPeer
                ? ProtocolError(.connectionLost, "the peer closed the connection before the exchange began (it may be busy or rate-limiting)")
                : ProtocolError(.connectionLost, "the connection closed during the \(machine.phaseName)")
            if closedSilently { reported = true }
            consentTask?.cancel()
            let actions = machine.abort(lost)
            // The connection is gone: report, but there is nothing to send on.
            perform(actions.filter { if case .send = $0 { false } else { true } })
        }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        if !machine.isFinished {
            perform(machine.abort(ProtocolError(.connectionLost, "the connection failed: \(error)")))
        }
        context.close(promise: nil)
    }

    // MARK: actions

    private func perform(_ actions: [ExchangeStateMachine.Action]) {
        guard let context else { return }
        var wrote = false
        for action in actions {
            switch action {
            case .send(let bytes):
                var buffer = context.channel.allocator.buffer(capacity: bytes.count + 2)
                buffer.writeBytes(FrameParser.frame(bytes))
                context.write(wrapOutboundOut(buffer), promise: nil)
                wrote = true
            case .identified(let peer):
                service.events.emit(.exchangeRequested(id: id, peer: peer, role: machine.role))
                askConsent(peer, context: context)
            case .peerDecided:
                break
            case .completed(let outcome):
                if wrote { context.flush(); wrote = false }
                store(outcome, context: context)
            case .failed(let error, let byPeer):
                if wrote { context.flush(); wrote = false }
                finish(.failed(error, peer: machine.identifiedPeer, byPeer: byPeer))
                context.close(promise: nil)
            }
        }
        if wrote { context.flush() }
        armTimer()
    }

    private func askConsent(_ peer: PeerIdentity, context: ChannelHandlerContext) {
        let request = ConsentRequest(exchangeID: id, peer: peer, role: machine.role, remoteAddress: remote)
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        let loop = context.eventLoop
        let consent = service.consent
        consentTask = Task {
            let answer = await consent.decide(request)
            if Task.isCancelled { return }
            loop.execute {
                let handler = bound.value
                handler.perform(handler.machine.decide(accept: answer.accept, message: answer.message, reason: answer.reason, now: handler.now))
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
                    handler.finish(.completed(contact, outcome))
                case .failure(let error):
                    handler.finish(.failed(ProtocolError(.internalError, "the exchange completed but storing the contact failed: \(error)"),
                                           peer: outcome.peer, byPeer: false))
                }
                handler.context?.close(promise: nil)
            }
        }
    }

    private func finish(_ outcome: SessionResult) {
        guard !reported else { return }
        reported = true
        phaseTimer?.cancel()
        sessionTimer?.cancel()
        consentTask?.cancel()
        switch outcome {
        case .completed(let contact, let o):
            service.events.emit(.exchangeCompleted(id: id, contact: contact, myMessage: o.myMessage, theirMessage: o.theirMessage))
        case .failed(let error, let peer, let byPeer):
            service.events.emit(.exchangeFailed(id: id, peer: peer, error: error, byPeer: byPeer))
        }
        result?.succeed(outcome)
    }

    // MARK: timeouts

    /// One timer for the current phase: handshake steps, consent, then cards.
    private func armTimer() {
        guard let context else { return }
        let phase = machine.phaseName
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
        case "cards":
            seconds = service.limits.idleTimeout
            error = ProtocolError(.timeout, "the cards did not arrive within \(Int(seconds)) s")
        default:
            return
        }
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        phaseTimer = context.eventLoop.scheduleTask(in: .milliseconds(Int64(seconds * 1000))) {
            let handler = bound.value
            if handler.machine.phaseName == phase { handler.perform(handler.machine.abort(error)) }
        }
    }
}
