/// The one error type of NearcardDiscovery.
public struct DiscoveryError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// avahi-daemon (or the D-Bus system bus it needs) cannot be reached.
        case daemonUnavailable
        /// Avahi refused a request (the message carries avahi_strerror's words).
        case avahi
        /// A TXT record, address or peer name that cannot be used.
        case invalidInput
    }

    public let kind: Kind
    public let message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}
