import NearcardProtocol

/// Limits on follow-up messages a node accepts (docs/PROTOCOL.md §15).
package struct MailLimits: Sendable, Equatable {
    /// Messages accepted from one contact per minute.
    package var perContactPerMinute = 30
    /// How far in the future a message's `sentAt` may be (clock skew).
    package var maximumFutureSkew: Int64 = ProtocolLimits.maximumClockSkew
    package init() {}
}
