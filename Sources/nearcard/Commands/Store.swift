import ArgumentParser
import Foundation
import NearcardCrypto
import NearcardModel
import NearcardNode

/// `nearcard store …`: where the book lives, and moving it between a node's SQLite file and a
/// fleet's PostgreSQL database.
struct StoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "store",
        abstract: t("Show where the book lives, or move it between SQLite and PostgreSQL."),
        discussion: t(
            """
            A node keeps its book (card, contacts, messages, trust) in the home's nearcard.sqlite; bots of a \
            fleet share one PostgreSQL database instead (--store postgres://USER@HOST/DATABASE, or \
            $NEARCARD_STORE). The identity key always stays in the home.
            """
        ),
        subcommands: [Info.self, Migrate.self], defaultSubcommand: Info.self)

    struct Info: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "info", abstract: t("Where the book lives and what it holds."))
        @OptionGroup var global: GlobalOptions
        @Flag(help: ArgumentHelp(t("Print as JSON."))) var json = false

        /// "1 exchange", "2 exchanges" ("outbox" and "inbox" stay as they are).
        static func count(_ name: String, _ n: Int) -> String {
            switch name {
            case "contacts": return t.plural("%1$@ contact", "%1$@ contacts", count: n, String(n))
            case "exchanges": return t.plural("%1$@ exchange", "%1$@ exchanges", count: n, String(n))
            case "outbox": return t.plural("%1$@ outbox", "%1$@ outbox", count: n, String(n))
            case "inbox": return t.plural("%1$@ inbox", "%1$@ inbox", count: n, String(n))
            default: break
            }
            var said = name
            if n == 1 && name.hasSuffix("s") { said.removeLast() }
            return "\(n) \(said)"
        }

        func run() async throws {
            let db = try global.existingDatabase()
            defer { db.close() }
            let numbers: [(String, Int)] = [
                ("contacts", try db.contacts().count), ("exchanges", try db.exchanges().count),
                ("outbox", try db.outbox(all: true).count), ("inbox", try db.inbox().count),
            ]
            let counts = JSONValue.object(JSONObject(numbers.map { ($0.0, JSONValue.number(Double($0.1))) }))
            let kind = db.isShared ? "postgres" : "sqlite"
            if json {
                Console.json([
                    "store": .string(db.location.description), "kind": .string(kind), "integrity": .string(try db.integrityCheck()), "counts": counts,
                ])
                return
            }
            let holds: String = numbers.map { (name: String, n: Int) -> String in Self.count(name, n) }.joined(separator: ", ")
            Console.table([
                (t("Store"), db.location.description), (t("Kind"), db.isShared ? t("PostgreSQL (shared by a fleet)") : t("SQLite (this node's)")),
                (t("Integrity"), try db.integrityCheck()),
                (t("Holds"), holds),
            ])
        }
    }

    struct Migrate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "migrate",
            abstract: t("Copy a book from one store to another, losing nothing (counts and checksums printed)."),
            discussion: t(
                """
                nearcard store migrate --to postgres://bot@db/fleet       moves this node's book into a fleet's database;
                nearcard store migrate --from postgres://bot@db/fleet --to sqlite:book.sqlite   and back.
                --from defaults to the current store (--store, $NEARCARD_STORE, else the home's file). The source is \
                only read. A target that already holds a book is refused unless --merge, which keeps what the target \
                has for a contact (same DID) or row it already holds. Exit 0 when every table's checksum matches, 5 \
                when one does not.
                """
            ))
        @OptionGroup var global: GlobalOptions
        @Option(help: ArgumentHelp(t("The store to copy from (sqlite:PATH or postgres://…; default: the current one)."), valueName: "STORE")) var from: String?
        @Option(help: ArgumentHelp(t("The store to copy into (sqlite:PATH or postgres://…)."), valueName: "STORE")) var to: String
        @Flag(help: ArgumentHelp(t("Add to a target that already holds a book, keeping what it has."))) var merge = false
        @Flag(help: ArgumentHelp(t("Print the report as JSON."))) var json = false

        func run() async throws {
            let home = global.resolvedHome
            let source = try from.map { try home.openBook(named: $0) } ?? global.existingDatabase()
            defer { source.close() }
            let target = try home.openBook(named: to)
            defer { target.close() }
            let targetLocation = target.location
            if targetLocation == source.location { throw CLIError(.malformedInput, t("--to names the store being copied from (%1$@)", "\(source.location)")) }
            let json = self.json
            if !json { Console.err(t("Copying %1$@ → %2$@…", "\(source.location)", "\(targetLocation)")) }
            let report = try source.copy(to: target, merge: merge) { line in if !json { Console.err("  " + line) } }
            let intact = report.allSatisfy(\.intact)
            if json {
                Console.json([
                    "from": .string(source.location.description), "to": .string(targetLocation.description), "intact": .bool(intact),
                    "tables": .array(
                        report.map { t in
                            [
                                "table": .string(t.table), "rows": .number(Double(t.rows)), "copied": .number(Double(t.copied)),
                                "alreadyThere": .number(Double(t.alreadyThere)), "sourceSHA256": .string(t.sourceChecksum),
                                "targetSHA256": .string(t.targetChecksum),
                            ]
                        }),
                ])
            } else {
                ContactDisplay.columns(
                    [t("TABLE"), t("ROWS"), t("COPIED"), t("ALREADY THERE"), t("SHA-256 (source = target)")],
                    report.map { t in
                        [
                            t.table, "\(t.rows)", "\(t.copied)", "\(t.alreadyThere)",
                            t.intact ? "\(t.sourceChecksum.prefix(16)) ✔" : "\(t.sourceChecksum.prefix(16)) ≠ \(t.targetChecksum.prefix(16)) ✘",
                        ]
                    })
                Console.out(
                    intact
                        ? t("Copied: every table's rows read back as written.")
                        : t("Some rows did not read back as written (✘ above); the source is unchanged."))
            }
            if !intact { throw ExitCode(Exit.storage.rawValue) }
        }
    }
}
