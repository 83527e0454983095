@_exported public import NearcardText

/// An error whose sentence a face can say in a person's language (its `phrase`).
public protocol PhrasedError: Error, Sendable {
    var phrase: Phrase { get }
}

/// The one shape of a Nearcard module's error: a `kind` callers switch on, and a `message` — one
/// sentence for people that says what failed, on which input, and (where there is one) what to do.
/// Messages never hold key material or secrets.
///
/// The sentence is a `Phrase` (its English template and values) where the module made it one, so that a
/// face can say it in the person's language (`phrase.said(by:)`); `message` is its English, for logs,
/// JSON and the wire. A message given as plain text is shown as it is in every language.
///
/// Each module names its own: `CryptoError` is `ModuleError<CryptoErrorKind>`, and so on for
/// NearcardModel, NearcardQR, NearcardStore, NearcardDiscovery and NearcardProtocol (whose kinds are the
/// wire's abort codes). The node's `NodeError`, which a face maps to exit codes, carries more (the
/// protocol code, causes) and is its own type.
public struct ModuleError<K: Sendable & Equatable>: PhrasedError, Equatable, CustomStringConvertible {
    /// The module's kinds (`CryptoError.Kind` is `CryptoErrorKind`).
    public typealias Kind = K

    public let kind: Kind
    /// The sentence in English.
    public let message: String
    /// The sentence to be said in a person's language.
    public let phrase: Phrase

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
        self.phrase = Phrase(verbatim: message)
    }

    public init(_ kind: Kind, _ phrase: Phrase) {
        self.kind = kind
        self.message = phrase.english
        self.phrase = phrase
    }

    public var description: String { message }

    /// Two errors are the same when their kinds and English sentences are (however the sentence was made).
    public static func == (a: Self, b: Self) -> Bool { a.kind == b.kind && a.message == b.message }
}
