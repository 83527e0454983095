@_exported public import NearcardErrors

/// The one error type of NearcardDiscovery.
public typealias DiscoveryError = ModuleError<DiscoveryErrorKind>

/// What a `DiscoveryError` is about.
public enum DiscoveryErrorKind: Sendable, Equatable {
    /// avahi-daemon (or the D-Bus system bus it needs) cannot be reached.
    case daemonUnavailable
    /// Avahi refused a request (the message carries avahi_strerror's words).
    case avahi
    /// A TXT record, address or peer name that cannot be used.
    case invalidInput
}
