import NearcardCrypto
import NearcardProtocol

/// What a session driver asks of its connection: the only transport a driver sees. Implemented by
/// `SessionChannelHandler`; every call is made on the connection's event loop.
protocol SessionConnection: AnyObject {
    /// Queues one frame.
    func write(_ frame: [UInt8])
    /// Sends what was queued.
    func flush()
    /// Runs `timer` from now for its node-configured duration, replacing the one before.
    func arm(_ timer: SessionTimer)
    func close()
    /// A function that runs `body` on this connection's event loop, callable from anywhere (for work
    /// done elsewhere: a person's consent, a SQLite write).
    func onLoop<T: Sendable>(_ body: @escaping (T) -> Void) -> @Sendable (T) -> Void
}

/// One session's logic above the transport: it owns the state machine and performs its actions —
/// consent, storing, events. Plain (no NIO types); driven by `SessionChannelHandler` on the event loop.
protocol SessionDriver: AnyObject {
    var isFinished: Bool { get }
    /// The connection is up and the first flight may go.
    func start()
    func received(_ frame: [UInt8])
    func timerFired(_ timer: SessionTimer, after seconds: Int)
    /// The transport failed below the session (a bad frame, a socket error, the session's overall time).
    func failed(_ error: ProtocolError)
    /// The connection closed; `heardFromPeer`: whether the peer ever sent a frame.
    func closed(heardFromPeer: Bool)
}

/// 8 hex digits naming a session in events and commands.
enum SessionID {
    static func make() -> String { Hex.encode(Sodium.randomBytes(4)) }
}
