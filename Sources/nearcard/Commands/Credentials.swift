import ArgumentParser
import Foundation
import NearcardCrypto
import NearcardModel
import NearcardNode
import NearcardQR

/// `nearcard credentials …`: imported verifiable credentials.
struct Credentials: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "credentials",
        abstract: t("List or show the verifiable credentials you imported."),
        subcommands: [List.self, Show.self], defaultSubcommand: List.self)

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: t("List imported credentials."))
        @OptionGroup var global: GlobalOptions
        @Flag(help: ArgumentHelp(t("Print as JSON."))) var json = false
        func run() async throws {
            let all = try global.existingDatabase().credentials()
            if json {
                Console.json(.array(all.map(\.json)))
                return
            }
            if all.isEmpty {
                Console.out(t("No credentials."))
                return
            }
            ContactDisplay.columns(
                [t("ID"), t("TYPE"), t("ISSUER"), t("STATUS"), t("EXPIRES")],
                all.map { c in
                    [String(c.id.prefix(24)), c.types.last ?? "", String(c.issuer.prefix(30)) + "…", c.status.rawValue, c.expiresAt.map(ISO8601.string) ?? "-"]
                })
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "show", abstract: t("Show one credential."))
        @OptionGroup var global: GlobalOptions
        @Argument(help: ArgumentHelp(t("The credential id (or a unique part of it)."))) var id: String
        @Flag(help: ArgumentHelp(t("Print as JSON."))) var json = false
        func run() async throws {
            let c = try global.existingDatabase().credential(id)
            if json {
                Console.json(c.json)
                return
            }
            Console.table([
                (t("ID"), c.id), (t("Types"), c.types.joined(separator: ", ")), (t("Issuer"), c.issuer), (t("Subject"), c.subject ?? "-"),
                (t("Status"), "\(c.status.rawValue): \(c.reason)"), (t("Issued"), c.issuedAt.map(ISO8601.string) ?? "-"),
                (t("Expires"), c.expiresAt.map(ISO8601.string) ?? "-"), (t("Imported"), ISO8601.string(c.importedAt)),
            ])
        }
    }
}
