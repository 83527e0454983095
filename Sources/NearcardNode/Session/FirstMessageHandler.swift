import NearcardCrypto
import NearcardProtocol
internal import NIOCore

/// A responder's first step: reads Noise message 1, learns what the session is for
/// (`SessionDispatch`), and hands the connection to a `SessionChannelHandler` with an exchange or a
/// mail driver, removing itself. A connection that closes before message 1 (a probe, a port scan) is
/// not reported; one that sends something else, or nothing in time, is refused without an answer.
final class FirstMessageHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = [UInt8]

    private let node: NodeContext
    private let mailbox: MailboxAuthority
    private let remote: String
    private var timer: Scheduled<Void>?
    private var done = false
    private var refused = false

    init(context node: NodeContext, mailbox: MailboxAuthority, remote: String) {
        self.node = node
        self.mailbox = mailbox
        self.remote = remote
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { armTimer(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        armTimer(context)
        context.fireChannelActive()
    }

    private func armTimer(_ context: ChannelHandlerContext) {
        guard timer == nil else { return }
        let seconds = node.limits.seconds(for: .handshake)
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(in: .milliseconds(Int64(seconds * 1000))) {
            let (handler, context) = bound.value
            handler.refuse(ProtocolError(.timeout, "no answer within \(Int(seconds)) s during the handshake"), context: context)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !done else { return }
        done = true
        timer?.cancel()
        let frame = unwrapInboundIn(data)
        do throws(ProtocolError) {
            let (kind, noise) = try SessionDispatch.readFirstMessage(frame, staticKey: node.keys.x25519, ephemeralKey: X25519.PrivateKey())
            let session = SessionChannelHandler(limits: node.limits, heardFromPeer: true)
            switch kind {
            case .exchange:
                session.drive(with: ExchangeDriver(responderFor: node, resuming: noise, remote: remote, connection: session))
            case .mail:
                session.drive(with: MailDriver(receivingAfter: noise, authority: mailbox, events: node.events, remote: remote, connection: session))
            }
            let ops = context.pipeline.syncOperations
            try? ops.addHandler(session, position: .after(self))
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        } catch {
            refuse(error, context: context)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        done = true
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        refuse(error as? ProtocolError ?? ProtocolError(.connectionLost, "the connection failed: \(error)"), context: context)
    }

    /// Ends a connection that never became a session: nothing is sent (not even this node's static key).
    private func refuse(_ error: ProtocolError, context: ChannelHandlerContext) {
        guard !refused else { return }
        refused = true
        timer?.cancel()
        done = true
        // Reported as a session that began and failed under one id, as docs/JSONL.md promises of every
        // exchange.failed (the connection was one, even if its first message was not a session's).
        let id = SessionID.make()
        node.events.emit(.exchangeStarted(id: id, role: .responder, remote: remote))
        node.events.emit(.exchangeFailed(id: id, peer: nil, error: error, byPeer: false))
        context.close(promise: nil)
    }
}
