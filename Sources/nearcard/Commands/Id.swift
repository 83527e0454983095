import ArgumentParser
import NearcardCrypto
import NearcardStore

/// `nearcard id`: show the identity (no passphrase needed).
struct Id: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show your DID, fingerprint and public keys.")

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
        let store = global.identityStore
        let identity = try store.loadPublic()
        if document {
            Console.json(identity.didKey.document(format: format))
        } else if json {
            Console.json(identity.json)
        } else {
            Console.table(IdentityDisplay.rows(identity, sealed: try? store.isSealed()) + [("Home", store.home.path)])
        }
    }
}
