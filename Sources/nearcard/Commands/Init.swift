import ArgumentParser
import NearcardCrypto
import NearcardStore

/// `nearcard init`: create the identity (P-256 DID key, X25519 key, Ed25519 key).
struct Init: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Create your identity: a did:key (P-256), an X25519 key and an Ed25519 key.",
        discussion: "Refuses if an identity exists already; keys are never overwritten. Secret keys are written with mode 0600, sealed under a passphrase when one is given.")

    @OptionGroup var global: GlobalOptions

    @Option(help: "Your display name (shown to peers you exchange with).")
    var name: String?

    @Option(help: ArgumentHelp("Seal the secret keys under the passphrase on this file's first line (Argon2id + XChaCha20-Poly1305).", valueName: "FILE"))
    var passphraseFile: String?

    @Flag(help: "Seal the secret keys under a passphrase typed at the terminal (asked twice).")
    var askPassphrase = false

    @Flag(help: "Print the new identity as JSON (as `nearcard id --json`).")
    var json = false

    func validate() throws {
        if passphraseFile != nil && askPassphrase { throw ValidationError("use either --passphrase-file or --ask-passphrase, not both") }
        if let name {
            if name.trimmingCharacters(in: .whitespaces).isEmpty { throw ValidationError("--name must not be empty") }
            if name.unicodeScalars.count > 64 { throw ValidationError("--name is \(name.unicodeScalars.count) characters; at most 64 (Unicode code points)") }
            if name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
                throw ValidationError("--name must not contain control characters")
            }
        }
    }

    func run() async throws {
        let store = global.identityStore
        if store.exists {
            throw CLIError(.identity, "an identity already exists in \(store.home.path); Nearcard never overwrites keys (use another --home, or move that directory away)")
        }
        var passphrase: SecureBytes?
        if let passphraseFile {
            passphrase = try Passphrase.read(file: passphraseFile)
        } else if askPassphrase {
            guard let first = Passphrase.prompt("New passphrase: "), let second = Passphrase.prompt("Repeat passphrase: ") else {
                throw CLIError(.malformedInput, "--ask-passphrase needs a terminal; use --passphrase-file FILE instead")
            }
            guard first.count > 0 else { throw CLIError(.malformedInput, "the passphrase is empty") }
            guard first.constantTimeEquals(second) else { throw CLIError(.malformedInput, "the two passphrases differ; nothing was created") }
            passphrase = first
        }
        let identity = try store.create(name: name?.trimmingCharacters(in: .whitespaces), passphrase: passphrase)
        if json {
            Console.json(identity.json)
            return
        }
        Console.out("Created an identity in \(store.home.path)")
        Console.table(IdentityDisplay.rows(identity, sealed: passphrase != nil))
    }
}

/// How an identity is shown to people.
enum IdentityDisplay {
    static func rows(_ identity: PublicIdentity, sealed: Bool?) -> [(String, String)] {
        var rows: [(String, String)] = [("DID", identity.did)]
        rows.append(("Name", identity.name ?? "(none)"))
        rows.append(("Fingerprint", identity.fingerprint))
        rows.append(("pubKey", Base64.encode(identity.pubKey.rawRepresentation) + "  (X25519)"))
        rows.append(("signPubKey", Base64.encode(identity.signPubKey.rawRepresentation) + "  (Ed25519)"))
        if let sealed { rows.append(("Secret keys", sealed ? "sealed under a passphrase" : "not sealed (mode 0600)")) }
        return rows
    }
}

import Foundation
