internal import NIOCore
import NearcardModel
import NearcardProtocol

/// How a connection's pipeline is built: framing, then the session (a responder first reads which kind).
enum SessionPipeline {
    /// A connection a listener accepted: message 1 decides whether it is an exchange or a delivery.
    static func configureResponder(
        _ channel: any Channel, context: NodeContext, mailbox: MailboxAuthority, remote: String,
        admitted: AdmittedConnection? = nil
    ) throws {
        let ops = channel.pipeline.syncOperations
        // The first byte, whatever it is, makes the connection no liveness check (PROTOCOL.md §14).
        if let admitted { try ops.addHandler(FirstByteWatcher(admitted)) }
        try addFraming(ops)
        try ops.addHandler(FirstMessageHandler(context: context, mailbox: mailbox, remote: remote, admitted: admitted))
    }

    /// A connection dialled for an exchange.
    static func configureExchange(
        _ channel: any Channel, context: NodeContext, consent: any ConsentProvider, expected: ExpectedPeer,
        invitation: Invitation.Claim? = nil, version: Int = ExchangeMessage.version, remote: String, result: EventLoopPromise<SessionResult>
    ) throws {
        let ops = channel.pipeline.syncOperations
        try addFraming(ops)
        let handler = SessionChannelHandler(limits: context.limits)
        handler.drive(
            with: ExchangeDriver(
                initiatorFor: context, consent: consent, expected: expected, invitation: invitation, version: version, remote: remote,
                result: { result.succeed($0) }, connection: handler))
        try ops.addHandler(handler)
    }

    /// A connection dialled to deliver a follow-up message.
    static func configureMail(
        _ channel: any Channel, context: NodeContext, machine: MailboxStateMachine, remote: String,
        result: EventLoopPromise<Result<Bool, ProtocolError>>
    ) throws {
        let ops = channel.pipeline.syncOperations
        try addFraming(ops)
        let handler = SessionChannelHandler(limits: context.limits)
        handler.drive(with: MailDriver(sending: machine, remote: remote, result: { result.succeed($0) }, connection: handler))
        try ops.addHandler(handler)
    }

    private static func addFraming(_ ops: ChannelPipeline.SynchronousOperations) throws {
        try ops.addHandler(ByteToMessageHandler(FrameDecoder()))
        try ops.addHandler(FrameEncoder())
    }
}

/// Tells the admission when a connection's first byte arrives (a liveness check closes before one),
/// then leaves the pipeline.
final class FirstByteWatcher: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    private let admitted: AdmittedConnection

    init(_ admitted: AdmittedConnection) { self.admitted = admitted }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        admitted.admission.heard(admitted.ticket)
        context.fireChannelRead(data)
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }
}
