import ArgumentParser
import Foundation
import NearcardCrypto
import NearcardModel
import NearcardNode

/// `nearcard id`: show the identity (no passphrase needed); `id rotate-presence`: a new presence key.
struct Id: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "id",
        abstract: "Show your DID, fingerprint and public keys; replace your presence key.",
        subcommands: [Show.self, RotatePresence.self], defaultSubcommand: Show.self)

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "show", abstract: "Show your DID, fingerprint and public keys.")

        @OptionGroup var global: GlobalOptions

        @Flag(help: "Print {did, publicKeyJwk, pubKey, signPubKey, fingerprint, name} as JSON.")
        var json = false

        @Flag(help: "Print the identity's W3C DID document.")
        var document = false

        @Option(help: "Verification-method format of --document: Multikey or JsonWebKey2020.")
        var format: DIDKey.DocumentFormat = .multikey

        func validate() throws {
            if json && document { throw ValidationError("use either --json or --document") }
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
                case .success(let sealed): state = sealed ? "sealed under a passphrase" : "not sealed (mode 0600)"
                case .failure: state = "DAMAGED (see below)"
                }
                Console.table(IdentityDisplay.rows(identity, secretKeys: state) + [("Home", home.path)])
                if case .failure(let problem) = secrets { throw problem }
            }
        }
    }

    /// `nearcard id rotate-presence`.
    struct RotatePresence: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rotate-presence",
            abstract: "Replace your presence key: your contacts stop recognising you on the LAN until you next exchange with them.",
            discussion: """
                Your node's announcements carry a tag that changes every few minutes and that only your \
                contacts can recognise, with the presence key you handed them in your last exchange. A new \
                key withdraws that: a node running on this home announces again with the new key before \
                this command returns (and one started later uses it from the start), and from then on nobody \
                recognises you until an exchange hands them the new key. Your identity, contacts and \
                messages are not changed.
                """)

        @OptionGroup var global: GlobalOptions

        @Flag(help: "Print {rotated, createdAt} as JSON.")
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
                Console.out("New presence key made: your contacts will not recognise you on the LAN until you next exchange cards with them.")
            }
        }
    }
}
