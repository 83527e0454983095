@_exported public import NearcardErrors
internal import NearcardImage

/// The one error type of NearcardQR: what cannot be read, rendered or used, and why.
public typealias QRError = ModuleError<QRErrorKind>

/// What a `QRError` is about.
public enum QRErrorKind: Sendable, Equatable {
    /// Text, JSON or a token that cannot be parsed.
    case malformed
    /// Well formed but not usable here (the iOS app's encrypted formats, credential offers, …).
    case unusable
    /// A chunked payload that is incomplete or inconsistent.
    case chunks
    /// Past its expiry.
    case expired
    /// Over a limit.
    case tooLarge
    /// An image that cannot be read, or holds no QR code.
    case image
    /// The C library failed.
    case library
    /// An OID4VP request missing what the specification requires.
    case invalidRequest
}

extension ModuleError where K == QRErrorKind {
    /// An image library's failure as NearcardQR's: an unreadable image stays `.image`.
    init(_ error: ImageError) {
        self.init(error.kind == .image ? .image : .library, error.phrase)
    }
}
