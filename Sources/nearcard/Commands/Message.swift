import ArgumentParser
import Foundation
import NearcardControl
import NearcardCrypto
import NearcardDiscovery
import NearcardModel
import NearcardNode

/// `nearcard message CONTACT TEXT`: a private, end-to-end encrypted follow-up message.
struct Message: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "message",
        abstract: t("Send a private follow-up message to a contact you exchanged cards with."),
        discussion: t(
            """
            The message goes end to end encrypted to the contact's own node, which must prove the key \
            pinned when you exchanged cards. If the contact is on the LAN now it is delivered at once; \
            otherwise it waits in your outbox and a running `nearcard listen` delivers it when the contact \
            appears (see `nearcard outbox`). Exit 0 when delivered or queued, 1 when it failed for good. \
            Another node answering at the contact's address costs an attempt, not the message. \
            With --expire the message disappears from both nodes after that time (delivered or not).
            """
        ))

    @OptionGroup var global: GlobalOptions

    @Argument(help: ArgumentHelp(t("The contact: id (or its first characters), name, or DID.")), completion: ContactCompletion.kind)
    var contact: String

    @Argument(help: ArgumentHelp(t("The message (at most 4096 bytes).")))
    var text: String

    @Option(parsing: .unconditional, help: ArgumentHelp(t("Seconds to look for the contact on the LAN before leaving the message queued.")))
    var wait: Double = 5

    @Option(help: ArgumentHelp(t("Delete the message from both nodes after this long: 30s, 5m, 1h, 7d (at most 365d)."), valueName: "DURATION"))
    var expire: String?

    @Flag(help: ArgumentHelp(t("Print the message's outbox entry as JSON.")))
    var json = false

    func validate() throws {
        if let problem = MessageEnvelope.textProblemPhrase(text) { throw ValidationError(t.say(problem)) }
        if !(wait >= 0 && wait <= 3600) { throw ValidationError(t("--wait must be between 0 and 3600 seconds")) }
        if let expire { _ = try Durations.parse(expire) }
    }

    func run() async throws {
        let lifetime = try expire.map { Int64(try Durations.parse($0)) }
        let found: Contact
        let item: OutboxItem
        if let node = RunningNode.link(global) {
            // One process decides for a home: the running node sends it (its view of the LAN, its outbox).
            let db = try global.readingDatabase()
            found = try db.findContact(contact)
            var command: JSONObject = ["cmd": "message", "contact": .string(found.id), "text": .string(text), "wait": .number(wait)]
            if let lifetime { command["expiresIn"] = .number(Double(lifetime)) }
            let reply = try await RunningNode.call(node, command)
            guard let id = reply["message"]?["id"]?.stringValue, let kept = try db.outboxItem(id: id) else { throw RunningNode.failure(reply) }
            item = kept
        } else {
            let context = try NodeSetup.context(global, consent: DeclineAll(reason: "not listening"))
            found = try context.book.findContact(contact)
            // Looks for the contact's node for up to --wait seconds (by their presence tag), then tries it and its hints.
            item = try await NodeRuntime.open(context).send(message: text, to: found.id, wait: wait, expiresIn: lifetime)
        }
        if json {
            Console.json(item.json)
            // Exit 0 means delivered or queued, with --json too.
            if item.state == .failed { throw CLIError(.checkFailed, t("not delivered to %1$@: %2$@", found.name, item.lastError ?? t("refused"))) }
            return
        }
        switch item.state {
        case .delivered:
            Console.out(t("Delivered to %1$@.", found.name))
        case .queued:
            Console.out(
                item.lastError.map {
                    t("Queued for %1$@ (%2$@). A running `nearcard listen` delivers it when they are on the LAN; see `nearcard outbox`.", found.name, $0)
                } ?? t("Queued for %1$@. A running `nearcard listen` delivers it when they are on the LAN; see `nearcard outbox`.", found.name))
        case .failed:
            throw CLIError(.checkFailed, t("not delivered to %1$@: %2$@", found.name, item.lastError ?? t("refused")))
        }
    }
}
