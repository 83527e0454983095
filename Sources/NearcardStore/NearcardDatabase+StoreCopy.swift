import Foundation
import NearcardCrypto
public import NearcardModel

extension NearcardDatabase {
    /// The book's tables in an order that satisfies their references, each with its primary key.
    static let bookTables: [(name: String, key: [String])] = [
        ("myCard", ["id"]), ("setting", ["key"]), ("contact", ["id"]), ("socialGraph", ["didHash"]),
        ("issuedRoute", ["mailboxToken"]), ("outboxMessage", ["id"]), ("inboxMessage", ["fromDID", "id"]),
        ("trustAnchor", ["did"]), ("credential", ["id"]), ("trustedGroup", ["root"]), ("invitation", ["id"]), ("exchange", ["id"]), ("webhookDelivery", ["id"]),
    ]

    /// Copies every row of this book into `target` in one transaction there. A target that already
    /// holds a book is refused unless `merge`: then a row whose key (or a contact whose DID) is there
    /// already stays as the target has it, and messages follow their contact's id in the target.
    /// Then checks each table: the rows written, read back from the target, hash as they did here.
    public func copy(to target: NearcardDatabase, merge: Bool, progress: (String) -> Void = { _ in }) throws(StoreError) -> [StoreCopyTable] {
        if !merge {
            let occupied: Int = try target.read { db in
                try db.value("SELECT (SELECT COUNT(*) FROM contact) + (SELECT COUNT(*) FROM myCard) + (SELECT COUNT(*) FROM outboxMessage)") ?? 0
            }
            if occupied > 0 {
                throw StoreError(
                    .invalidInput,
                    Phrase(
                        "%1$@ already holds a book (a card, contacts or messages); add --merge to add this one to it, keeping what is there", target.path))
            }
        }
        var source: [(name: String, key: [String], rows: [SQLRow])] = []
        for table in Self.bookTables {
            let rows = try read { db in try db.rows("SELECT * FROM \(table.name)") }
            source.append((table.name, table.key, rows))
        }
        // Written, by table: the rows as inserted (after following contact ids), for the checksums.
        let written: [String: [SQLRow]] = try target.write { db in
            var out: [String: [SQLRow]] = [:]
            var contactIDs: [String: String] = [:] // source contact id → the target's, for merged DIDs
            for (name, _, rows) in source {
                progress("\(name): \(rows.count) rows")
                var inserted: [SQLRow] = []
                for var row in rows {
                    if name == "contact", let did: String = try row["did"],
                        let there: String = try db.value("SELECT id FROM contact WHERE did = ?", did)
                    {
                        contactIDs[try row["id"]] = there
                        continue
                    }
                    if name == "outboxMessage" || name == "inboxMessage", let from: String = try row["contactID"], let to = contactIDs[from] {
                        row = row.replacing("contactid", with: .text(to))
                    }
                    let columns = row.names.joined(separator: ", ")
                    let marks = Array(repeating: "?", count: row.values.count).joined(separator: ", ")
                    let n = try db.execute("INSERT INTO \(name) (\(columns)) VALUES (\(marks)) ON CONFLICT DO NOTHING", row.values)
                    if n > 0 { inserted.append(row) }
                }
                out[name] = inserted
            }
            return out
        }
        var report: [StoreCopyTable] = []
        for (name, key, rows) in source {
            let mine = written[name] ?? []
            let keys = Set(mine.map { Self.keyText($0, key) })
            let there = try target.read { db in try db.rows("SELECT * FROM \(name)") }.filter { keys.contains(Self.keyText($0, key)) }
            report.append(
                StoreCopyTable(
                    table: name, rows: rows.count, copied: mine.count, alreadyThere: rows.count - mine.count,
                    sourceChecksum: Self.checksum(mine, key), targetChecksum: Self.checksum(there, key)))
        }
        return report
    }

    static func keyText(_ row: SQLRow, _ key: [String]) -> String {
        key.map { column -> String in
            guard let i = row.names.firstIndex(of: column.lowercased()) else { return "?" }
            return row.values[i].canonical
        }.joined(separator: "\u{1F}")
    }

    /// SHA-256 over rows sorted by key, each column by name: the same values hash the same on both engines.
    static func checksum(_ rows: [SQLRow], _ key: [String]) -> String {
        let lines = rows.map { row -> (String, String) in
            let columns = zip(row.names, row.values).sorted { $0.0 < $1.0 }.map { "\($0.0)=\($0.1.canonical)" }
            return (keyText(row, key), columns.joined(separator: "\u{1E}"))
        }.sorted { $0.0 < $1.0 }.map(\.1)
        return Hex.encode(SHA256.hash(Array(lines.joined(separator: "\n").utf8)))
    }
}

extension SQLRow {
    func replacing(_ column: String, with value: SQLValue) -> SQLRow {
        guard let i = names.firstIndex(of: column) else { return self }
        var values = self.values
        values[i] = value
        return SQLRow(names: names, values: values)
    }
}

extension SQLValue {
    /// A value as the checksums see it: a number the same whichever engine's type holds it.
    var canonical: String {
        switch self {
        case .null: "\u{0}"
        case .integer(let i): "n\(i)"
        case .real(let d): d.rounded() == d && abs(d) < 9e15 ? "n\(Int64(d))" : "n\(d)"
        case .text(let s): "t" + s
        case .blob(let b): "b" + Hex.encode(b)
        }
    }
}
