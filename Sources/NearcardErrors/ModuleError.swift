/// The one shape of a Nearcard module's error: a `kind` callers switch on, and a `message` — one
/// sentence for people that says what failed, on which input, and (where there is one) what to do.
/// Messages never hold key material or secrets.
///
/// Each module names its own: `CryptoError` is `ModuleError<CryptoErrorKind>`, and so on for
/// NearcardModel, NearcardQR, NearcardStore, NearcardDiscovery and NearcardProtocol (whose kinds are the
/// wire's abort codes). The node's `NodeError`, which a face maps to exit codes, carries more (the
/// protocol code, causes) and is its own type.
public struct ModuleError<K: Sendable & Equatable>: Error, Sendable, Equatable, CustomStringConvertible {
    /// The module's kinds (`CryptoError.Kind` is `CryptoErrorKind`).
    public typealias Kind = K

    public let kind: Kind
    public let message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}
