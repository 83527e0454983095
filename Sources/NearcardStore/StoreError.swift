import NearcardCrypto
@_exported public import NearcardErrors

/// The one error type of NearcardStore: what failed, on which file, and what to do.
public typealias StoreError = ModuleError<StoreErrorKind>

/// What a `StoreError` is about.
public enum StoreErrorKind: Sendable, Equatable {
    /// There is no identity in the home directory yet.
    case noIdentity
    /// `init` found an identity (or part of one) and refused to touch it.
    case identityExists
    /// A key file is damaged, foreign, or unsafe (permissions); it was left untouched.
    case keyFile
    /// The passphrase did not open the sealed keys.
    case wrongPassphrase
    /// Input a user gave (a card file, a field value) is not acceptable.
    case invalidInput
    /// Something asked for does not exist (a card, a credential, a message id, …).
    case notFound
    /// A reference to a contact — a whole name, 4+ characters of its id, a DID — that names no contact
    /// or several (listed): the one matcher every command that names a contact uses (docs/DECISIONS.md).
    case unmatched
    /// The file system refused (permissions, disk full, …).
    case io
    /// The SQLite database is locked, corrupt or from a newer Nearcard.
    case database
    /// The book's schema is older than this Nearcard, and it was opened only to read: it must be
    /// opened to write once, to be brought up to date.
    case schemaBehind
    /// An exchange the peer was already told is not kept (docs/PROTOCOL.md §11): not stored now.
    case withdrawn
    /// The write could not commit before the deadline it was given (an exchange's phase, §12): it was
    /// rolled back, nothing of it is stored.
    case pastDeadline
    /// The commit was sent but its answer never came (the server froze or went away): whether it
    /// landed is not known here. The exchange's settlement (§11) finds out.
    case inDoubt
}

extension ModuleError where K == StoreErrorKind {
    init(_ error: CryptoError) {
        switch error.kind {
        case .wrongPassphrase: self.init(.wrongPassphrase, error.phrase)
        default: self.init(.keyFile, error.phrase)
        }
    }
}
