public import Foundation
public import NearcardCrypto
public import NearcardModel
package import NearcardStore

/// A home as a face names it: Nearcard's data directory (`--home`, else `$NEARCARD_HOME`, else
/// `$XDG_DATA_HOME/nearcard`, else `~/.local/share/nearcard`) and where its book lives (`--store`,
/// else `$NEARCARD_STORE`, else the home's `nearcard.sqlite`). The identity is made, read and
/// unlocked here; the book is opened here for a face that runs no node (`openBook`). Errors are
/// `NodeError`s in the store's own words.
public struct Home: Sendable {
    package let directory: NearcardHome
    /// The store a person named (`--store` or `$NEARCARD_STORE`), as given.
    private let storeText: String?
    public let environment: [String: String]

    /// `explicit`: `--home`; `store`: `--store` (an empty `$NEARCARD_STORE` names none).
    public init(explicit: String?, store: String?, environment: [String: String] = ProcessInfo.processInfo.environment) {
        directory = NearcardHome.resolve(explicit: explicit, environment: environment)
        storeText = store ?? environment["NEARCARD_STORE"].flatMap { $0.isEmpty ? nil : $0 }
        self.environment = environment
    }

    public var path: String { directory.path }
    public var identityPath: String { directory.identityPath }
    public var secretKeysPath: String { directory.secretKeysPath }
    /// The home's own SQLite book (used unless a store is named).
    public var databasePath: String { directory.databasePath }

    /// Where the book lives when it is not the home's SQLite file; nil when no store is named.
    package func location() throws(NodeError) -> StoreLocation? {
        guard let storeText else { return nil }
        do { return try StoreLocation.parse(storeText, environment: environment) } catch { throw NodeError(book: error) }
    }

    /// The named store as a person reads it (a PostgreSQL URL without its password), or nil when the
    /// book is the home's own file. Throws when the name cannot be read.
    public func storeName() throws(NodeError) -> String? { try location()?.description }

    /// Whether a book is in place to read: a named store, or the home's file.
    public var hasBook: Bool {
        if storeText != nil { return true }
        return FileIO.exists(databasePath)
    }

    /// Makes an existing home private (0700; the book's files 0600): the notice to show when it was
    /// not. A home owned by another user is refused.
    public func tighten() throws(NodeError) -> String? {
        do { return try directory.tighten() } catch { throw NodeError(book: error) }
    }

    // MARK: the identity

    private var identityStore: IdentityStore { IdentityStore(home: directory) }

    /// Whether any part of an identity is present.
    public var hasIdentity: Bool { identityStore.exists }

    /// Who this home is (no passphrase needed).
    public func identity() throws(NodeError) -> PublicIdentity {
        do { return try identityStore.loadPublic() } catch { throw NodeError(book: error) }
    }

    /// Makes a new identity; never overwrites one (or part of one).
    @discardableResult
    public func createIdentity(name: String?, passphrase: SecureBytes?) throws(NodeError) -> PublicIdentity {
        do { return try identityStore.create(name: name, passphrase: passphrase) } catch {
            if error.kind == .io {
                throw NodeError(.storage, Phrase("%1$@; choose a directory you can write with --home DIR (or NEARCARD_HOME)", error.phrase))
            }
            throw NodeError(book: error)
        }
    }

    /// Checks the secret-key file without a passphrase: whether the keys are sealed; what is wrong.
    public func checkSecrets() throws(NodeError) -> Bool {
        do { return try identityStore.checkSecrets() } catch { throw NodeError(book: error) }
    }

    /// The secret keys; `passphrase` is asked only when they are sealed (what it throws passes through).
    public func unlock(passphrase: () throws -> SecureBytes?) throws -> IdentityKeys {
        do { return try identityStore.unlock(passphrase: passphrase) } catch let error as StoreError { throw NodeError(book: error) }
    }

    /// Seals the secret keys (`keys`, as `unlock` opened them) under `passphrase` (nil: unsealed); the
    /// old key file stays as it was unless the new one is complete.
    public func reseal(_ keys: IdentityKeys, to passphrase: SecureBytes?) throws {
        do { try identityStore.reseal(keys, to: passphrase) } catch let error as StoreError { throw NodeError(book: error) }
    }

    // MARK: the book

    /// How a face opens the book.
    public enum BookUse: Sendable {
        /// To store something: created on first use, one connection.
        case writing
        /// For a node (listen, bot, ui): created on first use, a pool of connections.
        case serving
        /// To read and perhaps change what exists: a home without an identity or a book is never
        /// created by looking at it (an `identity` error saying how to make one).
        case existing
        /// To read only: an SQLite book that exists is opened read-only (not a byte written, no
        /// fdatasync); any other as `existing`.
        case reading
    }

    /// Opens the book; `events` hears a shared store lose and regain its server.
    public func openBook(_ use: BookUse, events: @escaping @Sendable (StoreEvent) -> Void = { _ in }) throws(NodeError) -> Book {
        do {
            return Book(try database(use, events: events))
        } catch let e as NodeError { throw e } catch let e as StoreError { throw NodeError(book: e) } catch {
            throw NodeError(storage: error, while: Phrase("opening the book"))
        }
    }

    /// Opens the store a person names (`sqlite:PATH`, `postgres://…`), creating it when needed
    /// (`store migrate`'s other end).
    public func openBook(named text: String) throws(NodeError) -> Book {
        do { return Book(try NearcardDatabase(location: try StoreLocation.parse(text, environment: environment))) } catch { throw NodeError(book: error) }
    }

    private func database(_ use: BookUse, events: @escaping @Sendable (StoreEvent) -> Void) throws -> NearcardDatabase {
        let fm = FileManager.default
        switch use {
        case .writing, .serving:
            let location = try location() ?? .sqlite(path: databasePath)
            return try NearcardDatabase(location: location, singleConnection: use == .writing, events: events)
        case .reading:
            let path: String
            switch try location() {
            case .sqlite(let p)?: path = p
            case .postgres?: return try database(.existing, events: events)
            case nil: path = databasePath
            }
            guard fm.fileExists(atPath: path) else { return try database(.existing, events: events) }
            return try NearcardDatabase(reading: path)
        case .existing:
            switch try location() {
            case .postgres(let p)?:
                // A fleet's database: the server holds it; opening brings its schema up to date.
                return try NearcardDatabase(location: .postgres(p), events: events)
            case .sqlite(let path)?:
                guard fm.fileExists(atPath: path) else {
                    throw NodeError(
                        .identity, Phrase("there is no book at %1$@ yet: a command that stores something (nearcard card set, listen, bot) creates it", path))
                }
                return try NearcardDatabase(location: .sqlite(path: path), singleConnection: true)
            case nil:
                guard fm.fileExists(atPath: databasePath) || fm.fileExists(atPath: identityPath) else {
                    throw NodeError(.identity, Phrase("no identity yet in %1$@: create one with: nearcard init --name \"Your Name\"", path))
                }
                return try NearcardDatabase(location: .sqlite(path: databasePath), singleConnection: true)
            }
        }
    }
}

/// Files a face writes for a person (an export, a code's image, a token): atomically, never half
/// written, with the mode given.
public enum PrivateFiles {
    /// Writes `bytes` to `path` (replacing what was there when `replace`), synced before it is renamed
    /// into place.
    public static func write(_ bytes: SecureBytes, to path: String, mode: mode_t = 0o600, replace: Bool = true) throws(NodeError) {
        do { try FileIO.writeAtomically(bytes, to: path, mode: mode, replace: replace) } catch { throw NodeError(book: error) }
    }

    /// The mode a new file gets under the process's umask.
    public static func modeFollowingUmask() -> mode_t { FileIO.modeFollowingUmask() }

    /// Why a file given to read could not be: "no such file", "it is a directory", or permissions.
    public static func unreadable(_ path: String) -> String { FileIO.unreadable(path) }
}
