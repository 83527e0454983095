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
    /// Closes the connection after `seconds` unless it has closed by then (a timer on the loop, gone
    /// with the connection).
    func close(after seconds: Double)
    /// Runs `body` on the loop after `seconds` (a timer of the loop's clock; it still runs if the
    /// connection has closed by then, so `body` checks what it needs).
    func after(_ seconds: Double, _ body: @escaping () -> Void)
    /// This side's IP address on the connection (nil when it is not connected): the address the peer
    /// demonstrably reaches us at, first in the route hints a card hands over (§10).
    var localAddress: String? { get }
    /// Seconds until the running phase's deadline or the session's, whichever comes first (nil when
    /// neither runs): what a store write may take before the session ends (§12).
    var secondsLeft: Double? { get }
    /// A function that runs `body` on this connection's event loop, callable from anywhere (for work
    /// done elsewhere: a person's consent, a SQLite write).
    func onLoop<T: Sendable>(_ body: @escaping (T) -> Void) -> @Sendable (T) -> Void
}

/// Sent down a listener's connections when the node stops (`Admission.stopAll`): an open session ends
/// with a reason and reports its end, instead of vanishing with the process.
struct NodeStopping: Sendable {}
