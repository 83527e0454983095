internal import NIOCore
import NearcardCrypto
import NearcardModel
import NearcardProtocol
import NearcardStore

/// A responder's first step: reads Noise message 1, learns what the session is for
/// (`SessionDispatch`), and hands the connection to a `SessionChannelHandler` with an exchange or a
/// mail driver, removing itself. A connection that never identifies a session — it closes before
/// message 1, sends something that is not a Nearcard message 1, or nothing in time — is refused
/// without an answer and counted as a probe (summed up once per interval, not reported one by one);
/// a Nearcard message 1 of another version is reported as a failed exchange.
final class FirstMessageHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = [UInt8]

    private let node: NodeContext
    private let mailbox: MailboxAuthority
    private let remote: String
    private var timer: Scheduled<Void>?
    private var done = false
    private var refused = false
    /// The listener's admission of this connection (nil in tests that build the pipeline by hand).
    private let admitted: AdmittedConnection?

    init(context node: NodeContext, mailbox: MailboxAuthority, remote: String, admitted: AdmittedConnection? = nil) {
        self.node = node
        self.mailbox = mailbox
        self.remote = remote
        self.admitted = admitted
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { armTimer(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        SessionTrace.mark("accepted")
        armTimer(context)
        context.fireChannelActive()
    }

    private func armTimer(_ context: ChannelHandlerContext) {
        guard timer == nil else { return }
        let seconds = node.limits.seconds(for: .handshake)
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(in: .milliseconds(Int64(seconds * 1000))) {
            let (handler, context) = bound.value
            handler.refuse(ProtocolError(.timeout, "no answer within \(Int(seconds)) s during the handshake"), probe: .timedOut, context: context)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !done else { return }
        done = true
        timer?.cancel()
        let frame = unwrapInboundIn(data)
        SessionTrace.mark("read \(frame.count) (message 1)")
        do throws(ProtocolError) {
            // An exchange's Noise static key is fresh (nothing to know the node by before its person
            // decides, §5); mail proves the long-term key its route pinned. Both fresh keys come made
            // ahead (`SessionKeys`): message 2 leaves without waiting for key generation.
            let first = try SessionDispatch.readFirstMessage(
                frame, ephemeralKey: SessionKeys.take(), sessionKey: SessionKeys.take(),
                longTermKey: node.keys.x25519)
            if let admitted, !admitted.admission.promote(admitted.ticket) {
                // Closed to make room while its first message was on its way: it is gone.
                return
            }
            let session = SessionChannelHandler(limits: node.limits, heardFromPeer: true)
            switch first {
            case .exchange(let noise):
                session.drive(with: try ExchangeDriver(responderFor: node, resuming: noise, remote: remote, admitted: admitted, connection: session))
            case .mail(let noise):
                session.drive(
                    with: MailDriver(
                        receivingAfter: noise, authority: mailbox, events: node.events, remote: remote, admitted: admitted, connection: session))
            }
            let ops = context.pipeline.syncOperations
            try? ops.addHandler(session, position: .after(self))
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        } catch {
            // Another version of Nearcard is a peer to tell about; anything else is a probe.
            refuse(error, probe: error.code == .unsupportedVersion ? nil : .foreign, context: context)
        }
    }

    /// The node is stopping before this connection said what it is for: it is closed, nothing to report.
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard event is NodeStopping else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        done = true
        timer?.cancel()
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        // Closed before its first message: silent, unless this node closed it to make room (counted then),
        // or it was another node's liveness check (closed at once, within the address's check budget).
        if !done && !refused, let admitted, admitted.admission.holds(admitted.ticket), !admitted.admission.closedBeforeFirstByte(admitted.ticket) {
            admitted.probes.record(.silent, from: admitted.ticket.address)
        }
        done = true
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        refuse(
            error as? ProtocolError ?? ProtocolError(.connectionLost, Phrase("the connection failed: %1$@", connectProblem(error))), probe: .foreign,
            context: context)
    }

    /// Ends a connection that never became a session: nothing is sent (not even this node's static key).
    /// A probe is counted for the summary; a Nearcard peer speaking another version is reported as a
    /// session that began and failed under one id, as docs/JSONL.md promises of every exchange.failed.
    private func refuse(_ error: ProtocolError, probe: ProbeCounter.Kind?, context: ChannelHandlerContext) {
        guard !refused else { return }
        refused = true
        timer?.cancel()
        done = true
        if let probe, let admitted {
            admitted.probes.record(probe, from: admitted.ticket.address)
        } else {
            let id = SessionID.make()
            node.events.emit(.exchangeStarted(id: id, role: .responder, remote: remote))
            node.events.emit(.exchangeFailed(id: id, peer: nil, error: error, byPeer: false))
        }
        context.close(promise: nil)
    }
}
