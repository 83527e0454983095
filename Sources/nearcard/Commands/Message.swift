import ArgumentParser
import Foundation
import NearcardCrypto
import NearcardDiscovery
import NearcardModel
import NearcardNode
import NearcardStore

/// `nearcard message CONTACT TEXT`: a private, end-to-end encrypted follow-up message.
struct Message: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Send a private follow-up message to a contact you exchanged cards with.",
        discussion: """
        The message goes end to end encrypted to the contact's own node, which must prove the key \
        pinned when you exchanged cards. If the contact is on the LAN now it is delivered at once; \
        otherwise it waits in your outbox and a running `nearcard listen` delivers it when the contact \
        appears (see `nearcard outbox`). Exit 0 when delivered or queued.
        """)

    @OptionGroup var global: GlobalOptions

    @Argument(help: "The contact: id (or its first characters), name, or DID.")
    var contact: String

    @Argument(help: "The message (at most 4096 bytes).")
    var text: String

    @Option(help: "Seconds to look for the contact on the LAN before leaving the message queued.")
    var wait: Double = 5

    @Flag(help: "Print the message's outbox entry as JSON.")
    var json = false

    func validate() throws {
        if let problem = MessageEnvelope.textProblem(text) { throw ValidationError(problem) }
        if wait < 0 || wait > 3600 { throw ValidationError("--wait must be between 0 and 3600 seconds") }
    }

    func run() async throws {
        let context = try NodeSetup.context(global, consent: DeclineAll(reason: "not listening"))
        let found = try context.database.findContact(contact)
        // Looks for the contact's node for up to --wait seconds (by its fingerprint), then tries it and its hints.
        let item = try await NodeRuntime.open(context: context).send(message: text, to: found.id, wait: wait)
        if json {
            Console.json(item.json)
            return
        }
        switch item.state {
        case .delivered:
            Console.out("Delivered to \(found.name).")
        case .queued:
            let why = item.lastError.map { " (\($0))" } ?? ""
            Console.out("Queued for \(found.name)\(why). A running `nearcard listen` delivers it when they are on the LAN; see `nearcard outbox`.")
        case .failed:
            throw CLIError(.checkFailed, "not delivered to \(found.name): \(item.lastError ?? "refused")")
        }
    }
}

/// `nearcard inbox`: messages received from contacts.
struct Inbox: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show the follow-up messages your contacts sent you (newest first).")
    @OptionGroup var global: GlobalOptions
    @Option(help: "Only messages from this contact (id, name or DID).") var contact: String?
    @Flag(help: "Print the messages as a JSON array.") var json = false

    func run() async throws {
        let db = try global.database()
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

/// `nearcard outbox`: messages not yet delivered.
struct Outbox: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show follow-up messages waiting to be delivered, or that failed.")
    @OptionGroup var global: GlobalOptions
    @Flag(help: "Also list delivered messages.") var all = false
    @Flag(help: "Print the messages as a JSON array.") var json = false
    @Flag(help: "Try to deliver every queued message now (looking for the contacts on the LAN for --wait seconds).")
    var send = false
    @Option(help: "With --send: seconds to look for the contacts on the LAN.")
    var wait: Double = 3

    func run() async throws {
        if send {
            let context = try NodeSetup.context(global, consent: DeclineAll(reason: "not listening"))
            let sent = await NodeRuntime.open(context: context).deliverQueued(wait: wait)
            if !json { Console.out("Tried \(sent.count) message(s): \(sent.filter { $0.state == .delivered }.count) delivered.") }
        }
        let items = try global.database().outbox(all: all)
        if json {
            Console.json(.array(items.map(\.json)))
            return
        }
        if items.isEmpty {
            Console.out(all ? "No messages sent." : "Nothing waiting: every message was delivered.")
            return
        }
        ContactDisplay.columns(["STATE", "TO", "ATTEMPTS", "CREATED", "DETAIL", "TEXT"], items.map { m in
            let detail: String
            switch m.state {
            case .queued: detail = "next try \(ISO8601.string(m.nextAttemptAt))" + (m.lastError.map { " — \($0)" } ?? "")
            case .delivered: detail = "delivered \(m.deliveredAt.map(ISO8601.string) ?? "")"
            case .failed: detail = m.lastError ?? ""
            }
            return [m.state.rawValue, m.contactName, String(m.attempts), ISO8601.string(m.createdAt), detail, String(m.text.prefix(40))]
        })
    }
}
