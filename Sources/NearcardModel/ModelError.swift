@_exported public import NearcardErrors

/// The one error type of NearcardModel: input that cannot become a card, payload or contact.
public typealias ModelError = ModuleError<ModelErrorKind>

/// What a `ModelError` is about.
public enum ModelErrorKind: Sendable, Equatable {
    /// A card, vCard or JSON document that cannot be read; the message names the line or key.
    case invalidCard
    /// A payload or proof that is not well formed.
    case malformedPayload
    /// A value outside a documented limit.
    case limitExceeded
}
