import NearcardProtocol

/// Limits on follow-up messages a node accepts (docs/PROTOCOL.md §15).
public struct MailLimits: Sendable, Equatable {
    /// Messages accepted from one contact per minute.
    public var perContactPerMinute = 30
    /// How far in the future a message's `sentAt` may be (clock skew).
    public var maximumFutureSkew: Int64 = ProtocolLimits.maximumClockSkew
    public init() {}
}
