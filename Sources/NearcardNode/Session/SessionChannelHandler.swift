import Foundation
internal import NIOCore
import NearcardModel
import NearcardProtocol

/// The handler of one session's connection, whatever the session is for: it holds only framing
/// (frames in from `FrameDecoder`, out through `FrameEncoder`), writes, the timers the state machine
/// arms, the session's overall time limit, and closing. What the session means is its driver's.
final class SessionChannelHandler: ChannelInboundHandler, RemovableChannelHandler, SessionConnection {
    typealias InboundIn = [UInt8]
    typealias OutboundOut = [UInt8]

    private let limits: NodeLimits
    /// Set once, right after init (the driver holds this handler weakly, as its connection).
    private var driver: (any SessionDriver)?
    private var context: ChannelHandlerContext?
    /// The connection's loop, kept after the handler leaves the pipeline (for answers still on their way).
    private var eventLoop: (any EventLoop)?
    private var timer: Scheduled<Void>?
    /// Which arming a firing belongs to: a timer replaced while its firing was queued is ignored.
    private var timerGeneration = 0
    private var sessionTimer: Scheduled<Void>?
    private var closeTimer: Scheduled<Void>?
    private var started = false
    private var heardFromPeer: Bool
    /// When the running timer and the whole session end. A frame read past a deadline counts for
    /// nothing: a process stopped (SIGSTOP, a suspended laptop) reads its queued frames before its
    /// overdue timers run, and must not commit 40 s into a 30 s phase (docs/PROTOCOL.md §12).
    private var timerDeadline: (kind: SessionTimer, armedAt: NIODeadline, at: NIODeadline, seconds: TimeInterval)?
    /// The round trip measured on this connection: from this side's first flush to the first frame
    /// read after it (the peer's answer: Noise message 2 for an initiator, message 3 for a responder).
    /// Deadlines stretch with it (`NodeLimits.seconds(for:roundTrip:)`), so a slow link is not taken
    /// for a silent peer.
    private var roundTrip: TimeInterval?
    private var firstFlushAt: NIODeadline?
    private var sessionDeadline: NIODeadline?
    /// When the session began (its connection up and handed to this handler).
    private var beganAt: NIODeadline?
    /// The clock deadlines are read from (the loop's; a test's).
    private let clock: (@Sendable () -> NIODeadline)?

    /// `heardFromPeer`: the peer already sent something (a responder's first message, read by the dispatcher).
    init(limits: NodeLimits, heardFromPeer: Bool = false, clock: (@Sendable () -> NIODeadline)? = nil) {
        self.limits = limits
        self.heardFromPeer = heardFromPeer
        self.clock = clock
    }

    private func now(_ context: ChannelHandlerContext) -> NIODeadline { clock?() ?? context.eventLoop.now }

    /// How a session past its overall time ends, whether its timer fired or a late frame found it over.
    private var sessionTimedOut: ProtocolError { ProtocolError(.timeout, "the session took longer than \(Int(limits.sessionTimeout)) s") }

    /// Attaches the driver; call once, before the handler is added to a pipeline.
    func drive(with driver: any SessionDriver) {
        self.driver = driver
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        eventLoop = context.eventLoop
        // Added by the dispatcher to a connection that is already up: the session begins now.
        if context.channel.isActive { begin() }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        cancelTimers()
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        SessionTrace.mark("connected")
        begin()
        context.fireChannelActive()
    }

    private func begin() {
        guard !started, let context, let driver else { return }
        started = true
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        let seconds = limits.sessionTimeout
        beganAt = now(context)
        sessionDeadline = now(context) + .milliseconds(Int64(seconds * 1000))
        sessionTimer = context.eventLoop.scheduleTask(in: .milliseconds(Int64(seconds * 1000))) {
            bound.value.driver?.failed(bound.value.sessionTimedOut)
        }
        driver.start()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        SessionTrace.mark("read \(frame.count)")
        heardFromPeer = true
        guard let driver, !driver.isFinished else { return }
        let t = now(context)
        if roundTrip == nil, let sent = firstFlushAt {
            roundTrip = Double((t - sent).nanoseconds) / 1e9
            stretchTimer(context)
        }
        if let session = sessionDeadline, t >= session {
            driver.failed(sessionTimedOut)
            return
        }
        if let d = timerDeadline, t >= d.at {
            // Overdue: the timer's verdict comes first. If it still stands (the state moved on past
            // it), the frame is read as usual.
            timerDeadline = nil
            timer?.cancel()
            driver.timerFired(d.kind, after: Int(d.seconds))
            if driver.isFinished { return }
        }
        driver.received(frame)
    }

    func channelInactive(context: ChannelHandlerContext) {
        cancelTimers()
        let ran = beganAt.map { Double((now(context) - $0).nanoseconds) / 1e9 } ?? 0
        driver?.closed(heardFromPeer: heardFromPeer, after: ran)
        context.fireChannelInactive()
    }

    /// The node is stopping (`Admission.stopAll`): the session ends here, telling the peer why when it
    /// can, and reports its end like any other.
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard event is NodeStopping else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        if let driver, !driver.isFinished {
            driver.failed(ProtocolError(.connectionLost, "the node stopped before the session ended"))
        }
        close()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // Reset before the peer said a word: a node at its limit closing a connection whose first
        // message it never read (the kernel answers that with a reset). The close says what it was
        // (`closed(heardFromPeer:after:)`: busy, §14), not the socket's error.
        if !heardFromPeer, error is IOError {
            context.close(promise: nil)
            return
        }
        if let driver, !driver.isFinished {
            driver.failed(error as? ProtocolError ?? ProtocolError(.connectionLost, Phrase("the connection failed: %1$@", connectProblem(error))))
        }
        context.close(promise: nil)
    }

    private func cancelTimers() {
        timer?.cancel()
        timer = nil
        sessionTimer?.cancel()
        sessionTimer = nil
        closeTimer?.cancel()
        closeTimer = nil
    }

    // MARK: SessionConnection

    func write(_ frame: [UInt8]) {
        guard let context, context.channel.isActive else { return }
        SessionTrace.mark("write \(frame.count)")
        context.write(wrapOutboundOut(frame), promise: nil)
    }

    func flush() {
        SessionTrace.mark("flush")
        guard let context else { return }
        if firstFlushAt == nil { firstFlushAt = now(context) }
        context.flush()
    }

    var secondsLeft: Double? {
        guard let context else { return nil }
        guard let end = [timerDeadline?.at, sessionDeadline].compactMap({ $0 }).min() else { return nil }
        return Double((end - now(context)).nanoseconds) / 1e9
    }

    func arm(_ kind: SessionTimer) {
        guard let context else { return }
        timer?.cancel()
        timerGeneration += 1
        let generation = timerGeneration
        let seconds = limits.seconds(for: kind, roundTrip: roundTrip)
        let armedAt = now(context)
        timerDeadline = (kind, armedAt, armedAt + .milliseconds(Int64(seconds * 1000)), seconds)
        schedule(kind, generation: generation, in: seconds, context)
    }

    private func schedule(_ kind: SessionTimer, generation: Int, in seconds: TimeInterval, _ context: ChannelHandlerContext) {
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(in: .milliseconds(Int64(seconds * 1000))) {
            let handler = bound.value
            guard handler.timerGeneration == generation, let d = handler.timerDeadline else { return }
            handler.driver?.timerFired(kind, after: Int(d.seconds.rounded()))
        }
    }

    /// A round trip measured after the running timer was armed gives it the time the link needs: the
    /// deadline moves to what it would have been had the round trip been known (never earlier).
    private func stretchTimer(_ context: ChannelHandlerContext) {
        guard let d = timerDeadline else { return }
        let seconds = limits.seconds(for: d.kind, roundTrip: roundTrip)
        guard seconds > d.seconds else { return }
        let at = d.armedAt + .milliseconds(Int64(seconds * 1000))
        timer?.cancel()
        timerGeneration += 1
        timerDeadline = (d.kind, d.armedAt, at, seconds)
        schedule(d.kind, generation: timerGeneration, in: Double((at - now(context)).nanoseconds) / 1e9, context)
    }

    func close() {
        cancelTimers()
        context?.close(promise: nil)
    }

    func close(after seconds: Double) {
        guard let context, closeTimer == nil else { return }
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        closeTimer = context.eventLoop.scheduleTask(in: .milliseconds(Int64(seconds * 1000))) { bound.value.close() }
    }

    func after(_ seconds: Double, _ body: @escaping () -> Void) {
        guard let context else { return }
        let bound = NIOLoopBound(body, eventLoop: context.eventLoop)
        context.eventLoop.scheduleTask(in: .milliseconds(Int64(seconds * 1000))) { bound.value() }
    }

    var localAddress: String? { context?.channel.localAddress.flatMap(plainIP) }

    func onLoop<T: Sendable>(_ body: @escaping (T) -> Void) -> @Sendable (T) -> Void {
        guard let loop = eventLoop else { return { _ in } }
        let bound = NIOLoopBound(body, eventLoop: loop)
        return { value in loop.execute { bound.value(value) } }
    }
}
