import NearcardModel
import NearcardProtocol

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
    /// `seconds`: how long the session ran, by the connection's clock (a node at its limit closes at once;
    /// one that waited for a first message that never came, after its time).
    func closed(heardFromPeer: Bool, after seconds: Double)
}
