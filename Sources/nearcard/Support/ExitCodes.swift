import ArgumentParser
import NearcardAddressBook
import NearcardCrypto
import NearcardModel
import NearcardNode

/// Nearcard's exit codes (README "Exit codes"; keep both in step).
enum Exit: Int32 {
    /// Success.
    case ok = 0
    /// A check failed: a signature, a time claim, a verification; an exchange declined.
    case checkFailed = 1
    /// Malformed input: a token, DID, JSON, key or card file that cannot be parsed; a reference to a
    /// contact or peer that names no one or several (the one matcher, docs/DECISIONS.md).
    case malformedInput = 2
    /// Identity: none yet, one exists already, wrong passphrase, damaged or unsafe key file.
    case identity = 3
    /// Environment: a daemon, service or network the command needs is missing.
    case environment = 4
    /// Storage or file-system error.
    case storage = 5
    /// Something not found: no card yet, no such group, credential or message id.
    case notFound = 6
    /// A person or policy declined an exchange, or did not decide in time.
    case declined = 7
    /// No address of the peer took a connection.
    case unreachable = 8
    /// The session began, then the connection dropped.
    case connectionLost = 9
    /// The peer stopped answering within a phase's time.
    case timedOut = 10
    /// The contact is stored but unconfirmed: the connection ended before the peer confirmed it kept
    /// ours; it is confirmed or withdrawn when the two nodes next reach each other.
    case unconfirmed = 11
    /// A server Nearcard talks to (an address book's CardDAV server) answered, but not usably: it
    /// failed (5xx), is out of space (507), sent more than the limit or something no CardDAV server sends.
    case serverFault = 12
    /// Internal error: a bug in Nearcard or its libraries.
    case software = 70
    /// Interrupted (Ctrl-C).
    case interrupted = 130
}

/// An error the CLI reports as one line with a chosen exit code.
struct CLIError: Error, CustomStringConvertible {
    let code: Exit
    /// The line said on the terminal, in the person's language.
    let message: String
    /// The line in English, for JSON output (nil: the CLI's own words, made as `message`).
    let english: String?
    init(_ code: Exit, _ message: String) {
        self.code = code
        self.message = message
        self.english = nil
    }
    /// A sentence made elsewhere (the running node's), said here in the person's language.
    init(_ code: Exit, _ phrase: Phrase) {
        self.code = code
        self.message = t.translator.say(phrase)
        self.english = phrase.english
    }
    var description: String { message }
}

/// Maps any error to (exit code, one-line message).
func classify(_ error: any Error) -> (Exit, String) {
    switch error {
    case let e as CLIError:
        return (e.code, e.english ?? e.message)
    case let e as CryptoError:
        switch e.kind {
        case .malformedJSON, .malformedEncoding, .malformedToken, .didKey, .invalidKey, .invalidSignature, .invalidArgument:
            return (.malformedInput, e.message)
        case .authenticationFailed:
            return (.checkFailed, e.message)
        case .keyFile, .wrongPassphrase:
            return (.identity, e.message)
        case .library:
            return (.software, e.message)
        }
    case let e as ModelError:
        return (.malformedInput, e.message)
    case let e as NodeError:
        return (exit(for: e.kind), e.message)
    case let e as AddressBookError:
        switch e.kind {
        case .invalidInput, .credential: return (.malformedInput, e.message)
        case .unauthorized, .certificate, .readOnly: return (.checkFailed, e.message)
        case .unreachable: return (.unreachable, e.message)
        case .notAddressBook: return (.notFound, e.message)
        case .server, .serverFailed, .serverFull, .tooLarge: return (.serverFault, e.message)
        case .library: return (.environment, e.message)
        case .store: return (.storage, e.message)
        }
    default:
        if let e = NodeError(below: error) { return (exit(for: e.kind), e.message) }
        return (.software, "\(error)")
    }
}

/// An error's sentence in the person's language, for the terminal (`classify` gives the English, for JSON):
/// a module's or the node's phrase, the CLI's own words as they were made.
func said(_ error: any Error) -> String {
    switch error {
    case let e as CLIError: e.message
    case let e as any PhrasedError: t.translator.say(e.phrase)
    default: NodeError(below: error).map { t.translator.say($0.phrase) } ?? classify(error).1
    }
}

/// The exit code for each kind of node error (README "Exit codes").
func exit(for kind: NodeError.Kind) -> Exit {
    switch kind {
    // docs/DECISIONS.md, one matcher: a name that matches no one, or several, is a usage error like any malformed input.
    case .invalidInput, .notFound, .ambiguous: .malformedInput
    case .refused, .noRoute: .checkFailed
    case .declined: .declined
    case .unreachable: .unreachable
    case .connectionLost: .connectionLost
    case .timedOut: .timedOut
    case .environment: .environment
    case .storage: .storage
    case .identity: .identity
    case .missing: .notFound
    case .internalError: .software
    }
}

/// What lay beneath an error, for `--verbose` (most immediate first).
func causes(of error: any Error) -> [String] {
    switch error {
    case let e as NodeError: e.causes
    default: []
    }
}
