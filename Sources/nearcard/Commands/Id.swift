import ArgumentParser
import Foundation
import NearcardCrypto
import NearcardModel
import NearcardNode

/// `nearcard id`: show the identity (no passphrase needed); `id rotate-presence`: a new presence key.
struct Id: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "id",
        abstract: t("Show your DID, fingerprint and public keys; seal your keys under a passphrase; replace your presence key."),
        subcommands: [Show.self, PassphraseCommand.self, RotatePresence.self], defaultSubcommand: Show.self)

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "show", abstract: t("Show your DID, fingerprint and public keys."))

        @OptionGroup var global: GlobalOptions

        @Flag(help: ArgumentHelp(t("Print {did, publicKeyJwk, pubKey, signPubKey, fingerprint, name} as JSON.")))
        var json = false

        @Flag(help: ArgumentHelp(t("Print the identity's W3C DID document.")))
        var document = false

        @Option(help: ArgumentHelp(t("Verification-method format of --document: Multikey or JsonWebKey2020.")))
        var format: DIDKey.DocumentFormat = .multikey

        func validate() throws {
            if json && document { throw ValidationError(t("use either --json or --document")) }
        }

        func run() async throws {
            let home = global.resolvedHome
            let identity = try home.identity()
            if document {
                Console.json(identity.didKey.document(format: format))
            } else if json {
                Console.json(identity.json)
            } else {
                // The public identity is shown even when the secret keys are damaged; then the command
                // says so and fails (exit 3), as every command that needs them would.
                let secrets = Result { () throws(NodeError) -> Bool in try home.checkSecrets() }
                let state: String
                switch secrets {
                case .success(let sealed): state = sealed ? t("sealed under a passphrase") : t("not sealed (mode 0600)")
                case .failure: state = t("DAMAGED (see below)")
                }
                Console.table(IdentityDisplay.rows(identity, secretKeys: state) + [(t("Home"), home.path)])
                if case .failure(let problem) = secrets { throw problem }
            }
        }
    }

    /// `nearcard id passphrase`: add, change or remove the passphrase the secret keys are sealed under.
    struct PassphraseCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "passphrase",
            abstract: t("Add, change or remove the passphrase your secret keys are sealed under."),
            discussion: t(
                """
                Unsealed keys are sealed under a new passphrase; sealed keys, once opened with the current \
                one, are sealed under the new one (--remove: left unsealed, mode 0600). The new passphrase \
                is asked twice at the terminal, or read from --new-passphrase-file (its first line); the \
                current one is asked as every command asks it (NEARCARD_PASSPHRASE_FILE, the systemd \
                credential nearcard-passphrase, else the terminal). The key file is replaced all at once, \
                only after the new one has been read back with the new passphrase: a wrong passphrase, a \
                full disk or Ctrl-C leaves the old file as it was. A node running on this home keeps \
                running (it opened the keys when it started); a service that reads the passphrase from a \
                file or credential needs the new one before it next starts. Exit 0 done; 2 the new \
                passphrases differed three times, or a passphrase file is unusable; 3 wrong current \
                passphrase, or no identity.
                """
            ))

        @OptionGroup var global: GlobalOptions

        @Option(help: ArgumentHelp(t("Read the new passphrase from this file's first line (mode 0600)."), valueName: "FILE"))
        var newPassphraseFile: String?

        @Flag(help: ArgumentHelp(t("Remove the passphrase: the keys are left unsealed (readable by anyone who can read your files as you).")))
        var remove = false

        @Flag(help: ArgumentHelp(t("Print {sealed, was} as JSON.")))
        var json = false

        func validate() throws {
            if remove && newPassphraseFile != nil { throw ValidationError(t("use either --remove or --new-passphrase-file")) }
        }

        func run() async throws {
            let home = global.resolvedHome
            let wasSealed = try home.checkSecrets()
            if remove && !wasSealed {
                if json { Console.json(["sealed": false, "was": false]) } else { Console.out(t("Your secret keys are not sealed; nothing to remove.")) }
                return
            }
            // The current one first: a wrong one stops here, before a new one is asked for.
            let current: SecureBytes? = wasSealed ? try Passphrase.forUnlocking(path: home.secretKeysPath, environment: global.environment) : nil
            let keys = try home.unlock { current }
            let new: SecureBytes?
            if remove {
                new = nil
            } else if let newPassphraseFile {
                new = try Passphrase.read(file: newPassphraseFile)
            } else {
                guard
                    let typed = try Init.askTwice(
                        wasSealed ? t("New passphrase: ") : t("Passphrase to seal your secret keys: "), allowEmpty: false, nothing: t("nothing was changed"))
                else {
                    throw CLIError(.malformedInput, t("no terminal to ask for the new passphrase on; use --new-passphrase-file FILE"))
                }
                new = typed
            }
            try home.reseal(keys, to: new)
            if json {
                Console.json(["sealed": .bool(new != nil), "was": .bool(wasSealed)])
            } else if new == nil {
                Console.out(t("Passphrase removed: %1$@ is now unsealed (mode 0600), readable by anyone who can read your files as you.", home.secretKeysPath))
            } else {
                Console.out(
                    wasSealed
                        ? t(
                            "Passphrase changed (Argon2id + XChaCha20-Poly1305). Commands that sign ask for it; a service reads it from NEARCARD_PASSPHRASE_FILE or the nearcard-passphrase credential."
                        )
                        : t(
                            "Your secret keys are now sealed under the passphrase (Argon2id + XChaCha20-Poly1305). Commands that sign ask for it; a service reads it from NEARCARD_PASSPHRASE_FILE or the nearcard-passphrase credential."
                        ))
            }
        }
    }

    /// `nearcard id rotate-presence`.
    struct RotatePresence: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rotate-presence",
            abstract: t("Replace your presence key: your contacts stop recognising you on the LAN until you next exchange with them."),
            discussion: t(
                """
                Your node's announcements carry a tag that changes every few minutes and that only your \
                contacts can recognise, with the presence key you handed them in your last exchange. A new \
                key withdraws that: a node running on this home announces again with the new key before \
                this command returns (and one started later uses it from the start), and from then on nobody \
                recognises you until an exchange hands them the new key. Your identity, contacts and \
                messages are not changed.
                """
            ))

        @OptionGroup var global: GlobalOptions

        @Flag(help: ArgumentHelp(t("Print {rotated, createdAt} as JSON.")))
        var json = false

        func run() async throws {
            _ = try global.identity()
            let now = Date()
            if let node = RunningNode.link(global) {
                // The running node replaces the key and announces with the new one before it answers.
                try RunningNode.check(try await RunningNode.call(node, ["cmd": "rotate-presence"]))
            } else {
                let db = try global.existingDatabase()
                defer { db.close() }
                try db.rotatePresenceKey()
            }
            if json {
                Console.json(["rotated": .bool(true), "createdAt": .string(ISO8601.string(now))])
            } else {
                Console.out(t("New presence key made: your contacts will not recognise you on the LAN until you next exchange cards with them."))
            }
        }
    }
}
