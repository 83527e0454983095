import ArgumentParser
import Foundation
import NearcardCrypto
import NearcardNode

/// `nearcard init`: create the identity (P-256 DID key, X25519 key, Ed25519 key).
///
/// Where the passphrase comes from, in order: `--passphrase-file`; `--ask-passphrase` (asked, must not
/// be empty); `--no-passphrase` (none); otherwise, at a terminal (standard input and standard error both
/// a terminal), asked with an empty answer meaning none, and a warning then; otherwise none, without
/// asking, as scripts and services have always had it.
struct Init: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init",
        abstract: t("Create your identity: a did:key (P-256), an X25519 key and an Ed25519 key."),
        discussion: t(
            """
            Refuses if an identity exists already; keys are never overwritten. Secret keys are written with mode 0600, \
            sealed under a passphrase when one is given.

            At a terminal (standard input and standard error both a terminal) and without a passphrase option, \
            init asks for a passphrase, twice, without echo (two that differ are asked again); an empty one leaves the keys unsealed (with a warning). \
            Not at a terminal (a script, a pipe, a service) nothing is asked and the keys are unsealed unless \
            --passphrase-file is given.
            """
        ))

    @OptionGroup var global: GlobalOptions

    @Option(help: ArgumentHelp(t("Your display name (shown to peers you exchange with).")))
    var name: String?

    @Option(help: ArgumentHelp(t("Seal the secret keys under the passphrase on this file's first line (Argon2id + XChaCha20-Poly1305)."), valueName: "FILE"))
    var passphraseFile: String?

    @Flag(help: ArgumentHelp(t("Seal the secret keys under a passphrase typed at the terminal (asked twice; must not be empty).")))
    var askPassphrase = false

    @Flag(help: ArgumentHelp(t("Do not seal the secret keys, and do not ask for a passphrase at a terminal.")))
    var noPassphrase = false

    @Flag(help: ArgumentHelp(t("Print the new identity as JSON (as `nearcard id --json`).")))
    var json = false

    func validate() throws {
        let given = [passphraseFile != nil ? "--passphrase-file" : nil, askPassphrase ? "--ask-passphrase" : nil, noPassphrase ? "--no-passphrase" : nil]
            .compactMap { $0 }
        if given.count > 1 { throw ValidationError(t("use one of %1$@, not several", given.joined(separator: ", "))) }
        if let name {
            if name.trimmingCharacters(in: .whitespaces).isEmpty { throw ValidationError(t("--name must not be empty")) }
            if name.unicodeScalars.count > 64 {
                throw ValidationError(t("--name is %1$@ characters; at most 64 (Unicode code points)", String(name.unicodeScalars.count)))
            }
            if name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
                throw ValidationError(t("--name must not contain control characters"))
            }
        }
    }

    func run() async throws {
        let home = global.resolvedHome
        if home.hasIdentity {
            throw CLIError(
                .identity, t("an identity already exists in %1$@; Nearcard never overwrites keys (use another --home, or move that directory away)", home.path))
        }
        var passphrase: SecureBytes?
        var warnUnsealed = false
        if let passphraseFile {
            passphrase = try Passphrase.read(file: passphraseFile)
        } else if askPassphrase {
            guard let typed = try Self.askTwice(t("New passphrase: "), allowEmpty: false) else {
                throw CLIError(.malformedInput, t("--ask-passphrase needs a terminal; use --passphrase-file FILE instead"))
            }
            passphrase = typed
        } else if !noPassphrase, Self.atTerminal, let typed = try Self.askTwice(t("New passphrase for your secret keys (empty for none): "), allowEmpty: true) {
            // (No controlling terminal to ask on, where the prompt gives nil, counts as not at a terminal.)
            passphrase = typed.count > 0 ? typed : nil
            warnUnsealed = passphrase == nil
        }
        // A home that cannot be made where the environment put it says how to choose another place.
        let identity = try home.createIdentity(name: name?.trimmingCharacters(in: .whitespaces), passphrase: passphrase)
        if warnUnsealed {
            Console.err("nearcard: " + t("warning: %1$@", Self.unsealedWarning(home)))
        }
        if json {
            Console.json(identity.json)
            return
        }
        Console.out(t("Created an identity in %1$@", home.path))
        Console.table(IdentityDisplay.rows(identity, sealed: passphrase != nil))
    }

    /// A new passphrase typed twice at the terminal: an empty one (when allowed) is not asked again; two
    /// that differ are asked again, three times in all. nil: no terminal to ask on.
    static func askTwice(_ prompt: String, allowEmpty: Bool, nothing: String = t("nothing was created")) throws -> SecureBytes? {
        for attempt in 1...3 {
            guard let first = Passphrase.prompt(prompt) else { return nil }
            if first.count == 0 {
                if allowEmpty { return first }
                Console.err("nearcard: " + t("the passphrase is empty; type one"))
                continue
            }
            guard let second = Passphrase.prompt(t("Repeat passphrase: ")) else {
                throw CLIError(.malformedInput, t("no answer to the second passphrase prompt; %1$@", nothing))
            }
            if first.constantTimeEquals(second) { return first }
            if attempt < 3 { Console.err("nearcard: " + t("the two passphrases differ; type it again")) }
        }
        throw CLIError(.malformedInput, t("the passphrases differed three times; %1$@", nothing))
    }

    /// Whether a person is there to answer: standard input and standard error both a terminal.
    static var atTerminal: Bool { Console.stdinIsTerminal && Console.stderrIsTerminal }

    /// Said (on standard error) when a passphrase was declined at the prompt.
    static func unsealedWarning(_ home: Home) -> String {
        t(
            "your secret keys are not sealed: %1$@ is stored unencrypted, readable by anyone who can read %2$@ as this user (or a copy of it); seal them whenever you like with: nearcard id passphrase",
            home.secretKeysPath, home.path)
    }
}

/// How an identity is shown to people.
enum IdentityDisplay {
    static func rows(_ identity: PublicIdentity, sealed: Bool?) -> [(String, String)] {
        rows(identity, secretKeys: sealed.map { $0 ? t("sealed under a passphrase") : t("not sealed (mode 0600)") })
    }

    static func rows(_ identity: PublicIdentity, secretKeys: String?) -> [(String, String)] {
        var rows: [(String, String)] = [("DID", identity.did)]
        rows.append((t("Name"), identity.name ?? t("(none)")))
        rows.append((t("Fingerprint"), identity.fingerprint))
        rows.append(("pubKey", Base64.encode(identity.pubKey.rawRepresentation) + "  (X25519)"))
        rows.append(("signPubKey", Base64.encode(identity.signPubKey.rawRepresentation) + "  (Ed25519)"))
        if let secretKeys { rows.append((t("Secret keys"), secretKeys)) }
        return rows
    }
}
