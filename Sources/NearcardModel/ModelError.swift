/// The one error type of NearcardModel: input that cannot become a card, payload or contact.
public struct ModelError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// A card, vCard or JSON document that cannot be read; the message names the line or key.
        case invalidCard
        /// A payload or proof that is not well formed.
        case malformedPayload
        /// A value outside a documented limit.
        case limitExceeded
    }

    public let kind: Kind
    public let message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}
