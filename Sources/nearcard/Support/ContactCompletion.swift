import ArgumentParser
import Foundation
import NearcardModel
import NearcardNode

/// Shell completion of a contact (`contacts show <TAB>`, `contacts delete`, `message`): the names and id
/// prefixes in the home's book — the `--home` on the line being completed, else $NEARCARD_HOME, else the
/// default. A home without a book completes nothing (and nothing is made in it).
enum ContactCompletion {
    static let kind = CompletionKind.custom { words, _, prefix in names(words: words, prefix: prefix) }

    static func names(words: [String], prefix: String) -> [String] {
        var explicit: String?
        if let i = words.firstIndex(of: "--home"), i + 1 < words.count { explicit = words[i + 1] }
        // The home's own file, read only (a shared store named in the environment is not dialled to complete a word).
        var environment = ProcessInfo.processInfo.environment
        environment["NEARCARD_STORE"] = nil
        let home = Home(explicit: explicit, store: nil, environment: environment)
        guard FileManager.default.fileExists(atPath: home.databasePath), let db = try? home.openBook(.reading),
            let contacts = try? db.contacts()
        else { return [] }
        defer { db.close() }
        let candidates = contacts.map(\.name) + contacts.map { String($0.id.prefix(8)) }
        return candidates.filter { prefix.isEmpty || $0.lowercased().hasPrefix(prefix.lowercased()) }
    }
}
