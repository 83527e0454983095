import ArgumentParser
import Foundation
import NearcardCrypto
import NearcardModel
import NearcardStore

/// Options every command takes.
struct GlobalOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("Nearcard's data directory (default: $NEARCARD_HOME, else $XDG_DATA_HOME/nearcard, else ~/.local/share/nearcard).", valueName: "DIR"))
    var home: String?

    @Flag(name: .long, help: "Add detail to error messages.")
    var verbose = false

    var environment: [String: String] { ProcessInfo.processInfo.environment }

    var resolvedHome: NearcardHome { NearcardHome.resolve(explicit: home, environment: environment) }

    var identityStore: IdentityStore { IdentityStore(home: resolvedHome) }

    /// The database in the home directory (created on first use: for commands that store something).
    func database() throws -> NearcardDatabase { try NearcardDatabase(home: resolvedHome) }

    /// The database for a command that only reads: a home without an identity or a database is never
    /// created by looking at it (exit 3, saying how to make one).
    func existingDatabase() throws -> NearcardDatabase {
        let home = resolvedHome
        let fm = FileManager.default
        guard fm.fileExists(atPath: home.databasePath) || fm.fileExists(atPath: home.identityPath) else {
            throw StoreError(.noIdentity, "no identity yet in \(home.path): create one with: nearcard init --name \"Your Name\"")
        }
        return try NearcardDatabase(home: home)
    }

    /// The identity's secret keys, asking for the passphrase when they are sealed.
    func unlockIdentity() throws -> IdentityKeys {
        let store = identityStore
        return try store.unlock { try Passphrase.forUnlocking(path: store.home.secretKeysPath, environment: environment) }
    }
}

extension DIDKey.DocumentFormat: ExpressibleByArgument {}
