public import ArgumentParser
import Foundation
import NearcardCrypto
import NearcardModel
import NearcardNode

/// Options every command takes.
struct GlobalOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            t("Nearcard's data directory (default: $NEARCARD_HOME, else $XDG_DATA_HOME/nearcard, else ~/.local/share/nearcard)."), valueName: "DIR")
    )
    var home: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            t(
                "Where the book (card, contacts, messages, trust) lives: sqlite:PATH or postgres://USER@HOST[:PORT]/DATABASE, which several bots may share (default: $NEARCARD_STORE, else the home's nearcard.sqlite). The identity key always stays in the home; give a PostgreSQL password in $PGPASSWORD."
            ),
            valueName: "STORE"))
    var store: String?

    @Flag(name: .long, help: ArgumentHelp(t("Add detail to error messages.")))
    var verbose = false

    var environment: [String: String] { ProcessInfo.processInfo.environment }

    /// The home as it is, not tightened (`doctor` reports what it finds).
    var homeAsFound: Home { Home(explicit: home, store: store, environment: environment) }

    /// The home, made private if it was not (a home others could reach is tightened, with a notice
    /// once per process; one owned by another user is refused).
    var resolvedHome: Home {
        let resolved = homeAsFound
        HomeNotice.once(resolved)
        return resolved
    }

    /// The home's path (the running node's control socket).
    var homePath: String { resolvedHome.path }

    /// Who this home is (no passphrase needed).
    func identity() throws -> PublicIdentity { try resolvedHome.identity() }

    /// The book (created on first use: for commands that store something). `events` hears a shared
    /// store lose and regain its server.
    /// `serving`: a node (listen, bot, ui) keeps a pool of connections; a command that runs once, one.
    func database(serving: Bool = false, events: @escaping @Sendable (StoreEvent) -> Void = { _ in }) throws -> Book {
        try resolvedHome.openBook(serving ? .serving : .writing, events: events)
    }

    /// The book for a command that only reads and perhaps changes what exists: a home without an
    /// identity or a book is never created by looking at it (exit 3, saying how to make one).
    func existingDatabase() throws -> Book { try resolvedHome.openBook(.existing) }

    /// The book for a command that only reads it (`contacts`, `contacts show`, `peers`, `addressbook
    /// status`): an SQLite book that exists is opened read-only (nothing written, no fdatasync).
    func readingDatabase() throws -> Book { try resolvedHome.openBook(.reading) }

    /// The identity's secret keys, asking for the passphrase when they are sealed.
    func unlockIdentity() throws -> IdentityKeys {
        let home = resolvedHome
        return try home.unlock { try Passphrase.forUnlocking(path: home.secretKeysPath, environment: environment) }
    }
}

extension DIDKey.DocumentFormat: @retroactive ExpressibleByArgument {}

/// Tightens a home the first time a command touches it, and says so once.
enum HomeNotice {
    nonisolated(unsafe) private static var done: Set<String> = []
    private static let lock = NSLock()

    static func once(_ home: Home) {
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
