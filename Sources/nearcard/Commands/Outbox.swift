import ArgumentParser
import Foundation
import NearcardCrypto
import NearcardDiscovery
import NearcardModel
import NearcardNode
import Synchronization

/// `nearcard outbox`: messages not yet delivered.
struct Outbox: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "outbox",
        abstract: t("Show follow-up messages waiting to be delivered, or that failed; clear the sent ones."),
        subcommands: [List.self, Clear.self], defaultSubcommand: List.self)

    struct Clear: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "clear", abstract: t("Remove delivered and failed messages (queued ones stay)."))
        @OptionGroup var global: GlobalOptions
        func run() async throws {
            let n = try global.existingDatabase().clearOutbox()
            Console.out(t.plural("Removed %1$ld message(s).", "Removed %1$ld message(s).", count: n, String(n)))
        }
    }
}

extension Outbox {
    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: t("Show follow-up messages waiting to be delivered, or that failed."))
        @OptionGroup var global: GlobalOptions
        /// What the TEXT column shows for a delivered message, whose text the store no longer keeps.
        static let removedText = t("(text removed after delivery)")

        @Flag(help: ArgumentHelp(t("Also list delivered messages (their text is not kept after delivery)."))) var all = false
        @Flag(help: ArgumentHelp(t("Print the messages as a JSON array."))) var json = false
        @Flag(help: ArgumentHelp(t("Try to deliver every queued message now (looking for the contacts on the LAN for --wait seconds).")))
        var send = false
        @Option(parsing: .unconditional, help: ArgumentHelp(t("With --send: seconds to look for the contacts on the LAN.")))
        var wait: Double = 3

        func validate() throws {
            // Written so that nan fails it too (every comparison with nan is false).
            if !(wait >= 0 && wait <= 3600) { throw ValidationError(t("--wait must be between 0 and 3600 seconds")) }
        }

        func run() async throws {
            if send, let node = RunningNode.link(global) {
                // The running node sends them, from its own view of the LAN (one sender per home).
                let reply = try await RunningNode.call(node, ["cmd": "outbox.send"])
                try RunningNode.check(reply)
                let sent = reply["messages"]?.arrayValue ?? []
                if !json {
                    for s in reply["settled"]?.arrayValue ?? [] {
                        Console.out(SessionStory.settled(name: s["name"]?.stringValue ?? "?", kept: s["kept"]?.boolValue ?? false))
                    }
                    Console.out(
                        t.plural(
                            "Tried %1$ld message(s): %2$@ delivered.", "Tried %1$ld message(s): %2$@ delivered.", count: sent.count, String(sent.count),
                            String(sent.filter { $0["state"] == "delivered" }.count)))
                }
            } else if send {
                let context = try NodeSetup.context(global, consent: DeclineAll(reason: "not listening"))
                // Unconfirmed exchanges are settled on the same pass: each one settled is said.
                let settled = Mutex<[String]>([])
                context.events.observe { event in
                    if case .exchangeSettled(_, let name, let kept) = event { settled.withLock { $0.append(SessionStory.settled(name: name, kept: kept)) } }
                }
                let sent = await NodeRuntime.open(context).deliverQueued(wait: wait)
                if !json {
                    for line in settled.withLock({ $0 }) { Console.out(line) }
                    Console.out(
                        t.plural(
                            "Tried %1$ld message(s): %2$@ delivered.", "Tried %1$ld message(s): %2$@ delivered.", count: sent.count, String(sent.count),
                            String(sent.filter { $0.state == .delivered }.count)))
                }
            }
            let items = try global.existingDatabase().outbox(all: all)
            if json {
                Console.json(.array(items.map(\.json)))
                return
            }
            if items.isEmpty {
                Console.out(all ? t("No messages sent.") : t("Nothing waiting: every message was delivered."))
                return
            }
            ContactDisplay.columns(
                [t("STATE"), t("TO"), t("ATTEMPTS"), t("CREATED"), t("DETAIL"), t("TEXT")],
                items.map { m in
                    let detail: String
                    switch m.state {
                    case .queued:
                        let next = ISO8601.string(m.nextAttemptAt)
                        detail = m.lastError.map { t("next try %1$@ — %2$@", next, $0) } ?? t("next try %1$@", next)
                    case .delivered: detail = t("delivered %1$@", m.deliveredAt.map(ISO8601.string) ?? "")
                    case .failed: detail = m.lastError ?? ""
                    }
                    return [
                        m.state.rawValue, m.contactName, String(m.attempts), ISO8601.string(m.createdAt), detail,
                        m.text.map { String($0.prefix(40)) } ?? Self.removedText,
                    ]
                })
        }
    }
}
