import ArgumentParser
import Foundation
import NearcardCrypto

/// `nearcard did …`: did:key tools.
struct DID: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "did",
        abstract: t("Work with did:key identifiers."),
        subcommands: [Resolve.self])

    /// `nearcard did resolve DID`.
    struct Resolve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "resolve",
            abstract: t("Resolve a did:key (P-256 zDn…, Ed25519 z6Mk…, X25519 z6LS…; also P-384, P-521) to its DID document."),
            discussion:
                t(
                    "A malformed or unsupported did:key exits with code 2 and names the did:key specification's error (invalidDid, invalidPublicKeyLength, invalidPublicKey, unsupportedPublicKeyType)."
                )
        )

        /// (Accepted like everywhere, README: resolving reads no home.)
        @OptionGroup var global: GlobalOptions

        @Argument(help: ArgumentHelp(t("The did:key to resolve.")))
        var did: String

        @Option(help: ArgumentHelp(t("Verification-method format: Multikey or JsonWebKey2020.")))
        var format: DIDKey.DocumentFormat = .multikey

        func run() async throws {
            let key = try DIDKey(parsing: did.trimmingCharacters(in: .whitespacesAndNewlines))
            Console.json(key.document(format: format))
        }
    }
}
