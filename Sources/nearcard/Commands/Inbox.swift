import ArgumentParser
import Foundation
import NearcardCrypto
import NearcardDiscovery
import NearcardModel
import NearcardNode

/// `nearcard inbox`: messages received from contacts.
struct Inbox: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inbox",
        abstract: t("Show the follow-up messages your contacts sent you (newest first), or delete them."),
        subcommands: [List.self, Delete.self], defaultSubcommand: List.self)

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "delete", abstract: t("Delete received messages: one by id, all of one contact, or every one."))
        @OptionGroup var global: GlobalOptions
        @Argument(help: ArgumentHelp(t("The message id (from inbox --json)."))) var id: String?
        @Option(help: ArgumentHelp(t("Every message from this contact (id, name or DID)."))) var contact: String?
        @Flag(help: ArgumentHelp(t("Every message in the inbox."))) var all = false

        func validate() throws {
            let given = [id != nil, contact != nil, all].filter({ $0 }).count
            if given == 0 { throw ValidationError(t("give one of: a message id, --contact REF, or --all")) }
            if given > 1 { throw ValidationError(t("give only one of: a message id, --contact REF, or --all")) }
        }

        func run() async throws {
            let db = try global.existingDatabase()
            let n: Int
            if let id {
                n = try db.deleteReceived(id: id)
                if n == 0 { throw CLIError(.notFound, t("no received message has the id %1$@; list them with: nearcard inbox --json", id)) }
            } else if let contact {
                let did = try db.findContact(contact).didPublicKey ?? ""
                n = try db.deleteReceived(fromDID: did)
            } else {
                n = try db.deleteReceived()
            }
            Console.out(t.plural("Deleted %1$ld message(s).", "Deleted %1$ld message(s).", count: n, String(n)))
        }
    }
}

extension Inbox {
    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: t("Show the follow-up messages your contacts sent you (newest first)."))
        @OptionGroup var global: GlobalOptions
        @Option(help: ArgumentHelp(t("Only messages from this contact (id, name or DID)."))) var contact: String?
        @Flag(help: ArgumentHelp(t("Print the messages as a JSON array."))) var json = false

        func run() async throws {
            let db = try global.existingDatabase()
            let did = try contact.map { try db.findContact($0).didPublicKey ?? "" }
            let items = try db.inbox(contactDID: did)
            if json {
                Console.json(.array(items.map(\.json)))
                return
            }
            if items.isEmpty {
                Console.out(t("No messages."))
                return
            }
            for m in items {
                let keys = m.keysMatched ? t("keys match the contact") : t("KEYS DO NOT MATCH the contact's current keys")
                Console.out("\(ISO8601.string(m.receivedAt))  \(m.contactName ?? m.fromDID)  (\(keys))")
                Console.out("    \(m.text.replacingOccurrences(of: "\n", with: "\n    "))")
            }
        }
    }
}
