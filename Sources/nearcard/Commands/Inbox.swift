import ArgumentParser
import Foundation
import NearcardCrypto
import NearcardDiscovery
import NearcardModel
import NearcardNode
import NearcardStore

/// `nearcard inbox`: messages received from contacts.
struct Inbox: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show the follow-up messages your contacts sent you (newest first).")
    @OptionGroup var global: GlobalOptions
    @Option(help: "Only messages from this contact (id, name or DID).") var contact: String?
    @Flag(help: "Print the messages as a JSON array.") var json = false

    func run() async throws {
        let db = try global.existingDatabase()
        let did = try contact.map { try db.findContact($0).didPublicKey ?? "" }
        let items = try db.inbox(contactDID: did)
        if json {
            Console.json(.array(items.map(\.json)))
            return
        }
        if items.isEmpty {
            Console.out("No messages.")
            return
        }
        for m in items {
            let keys = m.keysMatched ? "keys match the contact" : "KEYS DO NOT MATCH the contact's current keys"
            Console.out("\(ISO8601.string(m.receivedAt))  \(m.contactName ?? m.fromDID)  (\(keys))")
            Console.out("    \(m.text.replacingOccurrences(of: "\n", with: "\n    "))")
        }
    }
}
