@_exported public import NearcardErrors

/// The one error type of NearcardAddressBook: which account, what failed, and what to do.
public typealias AddressBookError = ModuleError<AddressBookErrorKind>

/// What an `AddressBookError` is about.
public enum AddressBookErrorKind: String, Sendable, Equatable {
    /// A URL, option or account a person gave is not usable.
    case invalidInput
    /// The password could not be read (no file, unsafe permissions, no such credential).
    case credential
    /// The server refused the user name or password (401).
    case unauthorized
    /// The server's TLS certificate was not accepted (expired, another name, a CA the system does not trust).
    case certificate
    /// The server could not be reached (refused, timed out, name not found).
    case unreachable
    /// The account may not write to the address book (403, or no write privilege).
    case readOnly
    /// The URL leads to no CardDAV address book.
    case notAddressBook
    /// The server answered something a CardDAV server should not: a status no step expects, a body
    /// that is not a multistatus (malformed XML, a DTD or entities), a redirect loop.
    case server
    /// The server failed (a 5xx status other than 507): its own trouble, tried again later.
    case serverFailed
    /// The server is out of space (507 Insufficient Storage): nothing is written until it has room.
    case serverFull
    /// An answer over Nearcard's limit (docs/ADDRESSBOOK.md, Limits): never read to its end.
    case tooLarge
    /// The book (the store) failed.
    case store
    /// A shared library the sync loads when it first needs it (libxml2) is not installed.
    case library

    /// Whether a later try may well succeed with nothing changed here (the server down, failing or
    /// full): an account that met it is kept and its contacts wait in the book; any other kind needs
    /// the person (a password, a URL, a certificate, the server's configuration).
    public var passes: Bool { self == .unreachable || self == .serverFailed || self == .serverFull }
}
