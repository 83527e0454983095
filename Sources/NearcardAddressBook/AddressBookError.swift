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
    /// The server answered something a CardDAV server should not.
    case server
    /// The book (the store) failed.
    case store
    /// A shared library the sync loads when it first needs it (libxml2) is not installed.
    case library
}
