package import Foundation
import Metrics
import NearcardAddressBook
import NearcardModel
import NearcardStore

/// Keeps the address books (`nearcard addressbook add`) in step while a node runs: every `interval`
/// it looks, without the network, for contacts to write or delete, and syncs an account that has some
/// (or has not synced for `refresh`, to see the person's edits there). A failed pass is tried again
/// after a back-off (2 s, 4 s … at most 5 minutes), the contacts waiting in the book meanwhile, like the
/// outbox's messages. It runs beside the sessions and never holds one up.
package struct AddressBookWorker: Sendable {
    let context: NodeContext
    /// One sync at a time per node: the worker's passes and a command's `addressbook sync` (through the
    /// control socket) never write the same account at once.
    let gate: SyncGate

    /// How often the book is looked at.
    package static let interval: TimeInterval = 2
    /// How often an account is synced with nothing to write (to read the person's edits there).
    package static let refresh: TimeInterval = 600
    /// The longest wait between tries while a server is down.
    package static let longestBackoff: TimeInterval = 300

    package init(context: NodeContext, gate: SyncGate = SyncGate()) {
        self.context = context
        self.gate = gate
    }

    package static func backoff(failures: Int) -> TimeInterval { min(pow(2, Double(max(1, failures))), longestBackoff) }

    package func run() async {
        while !Task.isCancelled {
            await gate.run { await pass() }
            try? await Task.sleep(nanoseconds: UInt64(Self.interval * 1e9))
        }
    }

    /// One look at every account; syncs those due.
    package func pass(now: Date = Date()) async {
        guard let accounts = try? context.database.addressBooks(), !accounts.isEmpty else { return }
        for account in accounts where account.nextAttemptAt <= now {
            let stale = account.lastSyncAt.map { now.timeIntervalSince($0) > Self.refresh } ?? true
            guard stale || account.lastError != nil || Self.hasWork(account, context.database) else { continue }
            let retry = Date().addingTimeInterval(Self.backoff(failures: account.failures + 1))
            do {
                let report = try await AddressBookSync.sync(account, database: context.database, retryAt: retry)
                Counter(label: "nearcard_addressbook_cards_total", dimensions: [("event", "written")]).increment(by: report.created + report.updated)
                Counter(label: "nearcard_addressbook_cards_total", dimensions: [("event", "deleted")]).increment(by: report.deleted)
            } catch {
                Counter(label: "nearcard_addressbook_syncs_total", dimensions: [("event", "failed")]).increment()
                // Said once when a server stops working, not at every retry.
                if account.lastError == nil {
                    let next =
                        "; tried again in \(Int(Self.backoff(failures: account.failures + 1))) s, then less often (at most every \(Int(Self.longestBackoff / 60)) minutes)"
                    context.events.emit(.error(message: "address book: \(error.message)\(next)"))
                }
            }
        }
    }

    static func hasWork(_ account: AddressBookAccount, _ database: NearcardDatabase) -> Bool {
        guard let p = try? AddressBookSync.pending(account, database: database) else { return false }
        return p.toWrite + p.toDelete > 0
    }
}

/// Runs one body at a time, in the order they came (an async mutex).
package actor SyncGate {
    private var busy = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    package init() {}

    package func run<T: Sendable>(_ body: @Sendable () async -> T) async -> T {
        if busy {
            await withCheckedContinuation { waiting.append($0) }
        } else {
            busy = true
        }
        defer {
            if waiting.isEmpty { busy = false } else { waiting.removeFirst().resume() }
        }
        return await body()
    }
}
