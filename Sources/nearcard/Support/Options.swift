public import ArgumentParser
import Foundation
import NearcardCrypto
import NearcardModel
import NearcardStore

/// Options every command takes.
struct GlobalOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp("Nearcard's data directory (default: $NEARCARD_HOME, else $XDG_DATA_HOME/nearcard, else ~/.local/share/nearcard).", valueName: "DIR")
    )
    var home: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Where the book (card, contacts, messages, trust) lives: sqlite:PATH or postgres://USER@HOST[:PORT]/DATABASE, which several bots may share (default: $NEARCARD_STORE, else the home's nearcard.sqlite). The identity key always stays in the home; give a PostgreSQL password in $PGPASSWORD.",
            valueName: "STORE"))
    var store: String?

    @Flag(name: .long, help: "Add detail to error messages.")
    var verbose = false

    var environment: [String: String] { ProcessInfo.processInfo.environment }

    /// The home as it is, not tightened (`doctor` reports what it finds).
    var homeAsFound: NearcardHome { NearcardHome.resolve(explicit: home, environment: environment) }

    /// The home, made private if it was not (a home others could reach is tightened, with a notice
    /// once per process; one owned by another user is refused).
    var resolvedHome: NearcardHome {
        let resolved = NearcardHome.resolve(explicit: home, environment: environment)
        HomeNotice.once(resolved)
        return resolved
    }

    var identityStore: IdentityStore { IdentityStore(home: resolvedHome) }
    /// The home's path, for what needs no store type (the running node's control socket).
    var homePath: String { resolvedHome.path }

    /// Where the book lives when it is not the home's SQLite file: `--store`, else `$NEARCARD_STORE`.
    func storeLocation() throws -> StoreLocation? {
        guard let text = store ?? environment["NEARCARD_STORE"].flatMap({ $0.isEmpty ? nil : $0 }) else { return nil }
        return try StoreLocation.parse(text, environment: environment)
    }

    /// The book (created on first use: for commands that store something). `events` hears a shared
    /// store lose and regain its server.
    /// `serving`: a node (listen, bot, ui) keeps a pool of connections; a command that runs once, one.
    func database(serving: Bool = false, events: @escaping @Sendable (StoreEvent) -> Void = { _ in }) throws -> NearcardDatabase {
        let location = try storeLocation() ?? .sqlite(path: resolvedHome.databasePath)
        return try NearcardDatabase(location: location, singleConnection: !serving, events: events)
    }

    /// The database for a command that only reads: a home without an identity or a database is never
    /// created by looking at it (exit 3, saying how to make one).
    func existingDatabase() throws -> NearcardDatabase {
        let home = resolvedHome
        let fm = FileManager.default
        switch try storeLocation() {
        case .postgres(let p)?:
            // A fleet's database: the server holds it; opening brings its schema up to date.
            return try NearcardDatabase(location: .postgres(p))
        case .sqlite(let path)?:
            guard fm.fileExists(atPath: path) else {
                throw StoreError(.noIdentity, "there is no book at \(path) yet: a command that stores something (nearcard card set, listen, bot) creates it")
            }
            return try NearcardDatabase(location: .sqlite(path: path), singleConnection: true)
        case nil:
            break
        }
        guard fm.fileExists(atPath: home.databasePath) || fm.fileExists(atPath: home.identityPath) else {
            throw StoreError(.noIdentity, "no identity yet in \(home.path): create one with: nearcard init --name \"Your Name\"")
        }
        return try NearcardDatabase(location: .sqlite(path: home.databasePath), singleConnection: true)
    }

    /// The book for a command that only reads it (`contacts`, `contacts show`, `peers`, `addressbook
    /// status`): an SQLite book that exists is opened read-only (nothing written, no fdatasync); any
    /// other is opened as `existingDatabase()` opens it.
    func readingDatabase() throws -> NearcardDatabase {
        let path: String
        switch try storeLocation() {
        case .sqlite(let p)?: path = p
        case .postgres?: return try existingDatabase()
        case nil: path = resolvedHome.databasePath
        }
        guard FileManager.default.fileExists(atPath: path) else { return try existingDatabase() }
        return try NearcardDatabase(reading: path)
    }

    /// The identity's secret keys, asking for the passphrase when they are sealed.
    func unlockIdentity() throws -> IdentityKeys {
        let store = identityStore
        return try store.unlock { try Passphrase.forUnlocking(path: store.home.secretKeysPath, environment: environment) }
    }
}

extension DIDKey.DocumentFormat: @retroactive ExpressibleByArgument {}

/// Tightens a home the first time a command touches it, and says so once.
enum HomeNotice {
    nonisolated(unsafe) private static var done: Set<String> = []
    private static let lock = NSLock()

    static func once(_ home: NearcardHome) {
        let first = lock.withLock { done.insert(home.path).inserted }
        guard first else { return }
        do {
            if let notice = try home.tighten() { Console.err("nearcard: \(notice)") }
        } catch {
            // Another user's home, or not a directory: nothing in it is used.
            Console.err("nearcard: \(error.message)")
            exit(Exit.storage.rawValue)
        }
    }
}
