import ArgumentParser
import Foundation
import NearcardCrypto
import NearcardModel
import NearcardNode
import NearcardQR

/// `nearcard trust …`: issuers whose signatures make a scanned card verified.
struct Trust: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trust",
        abstract: t("Manage trusted issuers (their signed cards and credentials scan as verified)."),
        discussion: t("Contacts you exchanged with in person are trusted without being listed here."),
        subcommands: [Add.self, Remove.self, List.self], defaultSubcommand: List.self)

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "add", abstract: t("Trust a DID as an issuer."))
        @OptionGroup var global: GlobalOptions
        @Argument(help: ArgumentHelp(t("The issuer's did:key."))) var did: String
        @Option(help: ArgumentHelp(t("A note (who this is)."))) var note: String?
        func run() async throws {
            _ = try DIDKey(parsing: did)
            try global.database().addTrustAnchor(did, note: note)
            Console.out(t("Trusted %1$@", did))
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "remove", abstract: t("Stop trusting a DID."))
        @OptionGroup var global: GlobalOptions
        @Argument(help: ArgumentHelp(t("The issuer's did:key."))) var did: String
        func run() async throws {
            guard try global.database().removeTrustAnchor(did) else { throw CLIError(.notFound, t("%1$@ is not in your trust list", did)) }
            Console.out(t("No longer trusted: %1$@", did))
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: t("List trusted issuers."))
        @OptionGroup var global: GlobalOptions
        @Flag(help: ArgumentHelp(t("Print as JSON."))) var json = false
        func run() async throws {
            let anchors = try global.existingDatabase().trustAnchors()
            if json {
                Console.json(
                    .array(
                        anchors.map { ["did": .string($0.did), "addedAt": .string(ISO8601.string($0.addedAt)), "note": $0.note.map { .string($0) } ?? .null] }))
            } else if anchors.isEmpty {
                Console.out(t("No trusted issuers (contacts met in person count as trusted anyway)."))
            } else {
                for a in anchors { Console.out("\(a.did)\(a.note.map { "  — \($0)" } ?? "")") }
            }
        }
    }
}
