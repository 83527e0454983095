package import NearcardDiscovery
public import NearcardErrors
package import NearcardModel
import NearcardProtocol
package import NearcardStore
public import NearcardText

/// Why something a face asked of the node did not happen. Faces decide by `kind` (the CLI maps each
/// kind to one exit code, exhaustively); `message` is the one line a person reads; `cause` is what lay
/// beneath, for `--verbose`.
public struct NodeError: PhrasedError, CustomStringConvertible {
    public enum Kind: String, Sendable, CaseIterable {
        /// Text the node cannot use: a message over its limit, a malformed address.
        case invalidInput
        /// Nothing answers to the name given (no such peer seen, no such contact).
        case notFound
        /// Several peers or contacts answer to the name given.
        case ambiguous
        /// The peer could not be reached: no address took a connection (or its node was at its limit).
        case unreachable
        /// The session began, then the connection dropped (an outage, the other side went away).
        case connectionLost
        /// The peer stopped answering within a phase's time (docs/PROTOCOL.md §12): a network outage,
        /// a frozen laptop — never a decision.
        case timedOut
        /// A person or a policy said no, or did not decide in time.
        case declined
        /// A contact without a usable sealed route (only contacts from an in-person exchange can be messaged).
        case noRoute
        /// The exchange or delivery was refused because a check failed (a card, an identity, the protocol).
        case refused
        /// Something the node needs from the system is missing (avahi-daemon, the D-Bus system bus).
        case environment
        /// The database or a file could not be read or written.
        case storage
        /// The home's identity: none yet, one exists already, a wrong passphrase, a damaged or unsafe key file.
        case identity
        /// Something asked of the book that it does not hold: no card yet, no such group, credential or message.
        case missing
        /// A bug in Nearcard or a library it uses.
        case internalError
    }

    public let kind: Kind
    /// The sentence in English (logs, JSON lines).
    public let message: String
    /// The sentence to be said in a person's language (`phrase.said(by:)`).
    public let phrase: Phrase
    /// The protocol code when a session failed ("declined", "timeout", …; docs/PROTOCOL.md §13).
    public let code: String?
    /// What lay beneath, most immediate first.
    public let causes: [String]
    /// No address of the peer took a connection (nothing was exchanged).
    var neverConnected = false

    package init(_ kind: Kind, _ message: String, code: String? = nil, causes: [String] = []) {
        self.init(kind, Phrase(verbatim: message), code: code, causes: causes)
    }

    package init(_ kind: Kind, _ phrase: Phrase, code: String? = nil, causes: [String] = []) {
        self.kind = kind
        self.message = phrase.english
        self.phrase = phrase
        self.code = code
        self.causes = causes
    }

    public var description: String { message }

    /// A session that ended without its result: the kind follows the protocol code.
    package init(session error: ProtocolError) {
        let kind: Kind
        switch error.code {
        case .declined, .consentTimeout:
            kind = .declined
        case .badCard, .badIdentity, .identityMismatch, .badCommitment, .protocolError, .decryptFailed, .tooLarge, .unsupportedVersion, .inviteRefused:
            kind = .refused
        case .timeout:
            kind = .timedOut
        case .connectionLost:
            kind = .connectionLost
        case .busy:
            kind = .unreachable
        case .internalError:
            kind = .internalError
        }
        let phrase =
            switch kind {
            case .internalError: Phrase("exchange failed: %1$@", error.phrase)
            // A refusal's words say it was one ("the peer declined: …").
            case .declined where error.code == .declined: Phrase("%1$@; nothing was stored", error.phrase)
            default: Phrase("exchange failed (%1$@): %2$@; nothing was stored", error.code.rawValue, error.phrase)
            }
        self.init(kind, phrase, code: error.code.rawValue)
    }

    /// A store failure met while serving a face.
    /// The cards crossed but this side's book refused the contact: a storage error (exit 5), in the
    /// store's own words (what failed and what to do); the peer was told nothing was kept.
    package init(notStored error: StoreError, peer name: String?) {
        let phrase =
            if let name {
                Phrase(
                    "the exchange with %1$@ was not kept: this side could not store it (%2$@); the other side was told, so neither keeps it", name, error.phrase
                )
            } else {
                Phrase("the exchange was not kept: this side could not store it (%1$@); the other side was told, so neither keeps it", error.phrase)
            }
        self.init(.storage, phrase, code: ProtocolErrorCode.internalError.rawValue, causes: [error.message])
    }

    package init(storage error: any Error, while doing: Phrase) {
        if let e = error as? StoreError, e.kind == .notFound || e.kind == .unmatched {
            self.init(.notFound, e.phrase)
        } else if let e = error as? StoreError, e.kind == .invalidInput {
            self.init(.invalidInput, e.phrase)
        } else {
            self.init(.storage, Phrase("%1$@: %2$@", doing, (error as? StoreError)?.phrase ?? Phrase(verbatim: "\(error)")), causes: ["\(error)"])
        }
    }

    /// A failure of a layer below the facade (the book's), as a node error; nil for any other error.
    /// For a face's last resort: what the facade hands out is already a `NodeError`.
    public init?(below error: any Error) {
        guard let e = error as? StoreError else { return nil }
        self.init(book: e)
    }

    /// A book's failure, in the store's own words: its kind decides the face's code.
    package init(book error: StoreError) {
        let kind: Kind =
            switch error.kind {
            case .noIdentity, .identityExists, .keyFile, .wrongPassphrase: .identity
            case .invalidInput: .invalidInput
            case .notFound: .missing
            // The one matcher (docs/DECISIONS.md): a contact reference that names no one, or several.
            case .unmatched: .notFound
            case .io, .database, .schemaBehind, .pastDeadline, .inDoubt: .storage
            // An exchange the peer was already told is not kept.
            case .withdrawn: .refused
            }
        self.init(kind, error.phrase)
    }

    /// Discovery that cannot run.
    package init(discovery error: DiscoveryError) {
        switch error.kind {
        case .daemonUnavailable, .avahi: self.init(.environment, error.phrase)
        case .invalidInput: self.init(.invalidInput, error.phrase)
        }
    }
}

extension SessionResult {
    /// Why the exchange failed, for a face; nil when it completed.
    public var failure: NodeError? {
        if case .failed(_, let peer, _, let notStored?) = self { return NodeError(notStored: notStored, peer: peer?.name) }
        if case .failed(let error, _, _, _) = self { return NodeError(session: error) }
        return nil
    }
}
