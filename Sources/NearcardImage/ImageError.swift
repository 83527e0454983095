@_exported public import NearcardErrors

/// The one error type of NearcardImage: an image that cannot be read or used, and why.
public typealias ImageError = ModuleError<ImageErrorKind>

/// What an `ImageError` is about.
public enum ImageErrorKind: Sendable, Equatable {
    /// An image that cannot be read, or is not what it must be (its message says which).
    case image
    /// The C library failed.
    case library
}
