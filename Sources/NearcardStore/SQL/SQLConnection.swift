import Foundation

/// The SQL the store speaks differs between its two backends in a few places only; a statement
/// that must differ asks its connection's dialect.
enum SQLDialect: Sendable {
    case sqlite, postgres
}

/// One connection inside one transaction (or one read), as both backends give it to the store.
/// Statements use `?` placeholders and the SQL both engines accept (upserts with `ON CONFLICT`,
/// `RETURNING`, `COALESCE`, `lower()`); the PostgreSQL backend numbers the placeholders.
protocol SQLConnection {
    var dialect: SQLDialect { get }
    /// Runs one statement; returns the number of rows it changed.
    @discardableResult func execute(_ sql: String, _ arguments: [SQLValue]) throws -> Int
    /// Runs one query; returns its rows.
    func rows(_ sql: String, _ arguments: [SQLValue]) throws -> [SQLRow]
}

/// Thrown inside a transaction that must run again from the start (another writer got there first);
/// the PostgreSQL backend retries it like a serialization failure.
struct RetryTransaction: Error {}

extension SQLConnection {
    @discardableResult
    func execute(_ statement: (sql: String, arguments: [SQLValue])) throws -> Int {
        try execute(statement.sql, statement.arguments)
    }

    /// Runs data-modifying statements that do not depend on one another; returns the rows the first
    /// changed. PostgreSQL gets them as one statement (data-modifying CTEs: one round trip); SQLite
    /// runs them in order.
    func executeAll(_ statements: [(sql: String, arguments: [SQLValue])]) throws -> Int {
        guard let first = statements.first else { return 0 }
        guard dialect == .postgres, statements.count > 1 else {
            let changed = try execute(first.sql, first.arguments)
            for s in statements.dropFirst() { try execute(s.sql, s.arguments) }
            return changed
        }
        // `?` placeholders are numbered left to right, so the arguments simply follow one another.
        var sql = "WITH s0 AS (\(first.sql) RETURNING 1)"
        for (i, s) in statements.dropFirst().enumerated() { sql += ", s\(i + 1) AS (\(s.sql))" }
        sql += " SELECT COUNT(*) FROM s0"
        return try value(sql, statements.flatMap(\.arguments)) ?? 0
    }

    @discardableResult
    func execute(_ sql: String, _ arguments: any SQLBindable...) throws -> Int {
        try execute(sql, arguments.map { $0.sqlValue })
    }

    func rows(_ sql: String, _ arguments: any SQLBindable...) throws -> [SQLRow] {
        try rows(sql, arguments.map { $0.sqlValue })
    }

    func row(_ sql: String, _ arguments: any SQLBindable...) throws -> SQLRow? {
        try rows(sql, arguments.map { $0.sqlValue }).first
    }

    /// The first column of the first row, or nil when there is no row (or the value is NULL).
    func value<T: SQLReadable>(_ sql: String, _ arguments: any SQLBindable...) throws -> T? {
        try value(sql, arguments.map { $0.sqlValue })
    }

    func value<T: SQLReadable>(_ sql: String, _ arguments: [SQLValue]) throws -> T? {
        guard let row = try rows(sql, arguments).first else { return nil }
        let value: T? = try row[0]
        return value
    }

    /// The first column of every row.
    func values<T: SQLReadable>(_ sql: String, _ arguments: [SQLValue]) throws -> [T] {
        try rows(sql, arguments).map { try $0[0] }
    }

    /// Serialises writers that decide by reading first (an upsert keyed by a DID): on PostgreSQL a
    /// transaction-scoped advisory lock on the key, so two bots meeting one visitor at once make one
    /// contact; SQLite has one writer at a time already.
    func lock(_ key: String) throws {
        guard dialect == .postgres else { return }
        try execute("SELECT pg_advisory_xact_lock(hashtextextended(?, 0))", key)
    }
}

/// A backend: where the book lives. It hands out connections, maps its own errors to `StoreError`,
/// and retries what it safely can (PostgreSQL: a lost connection or a serialization failure).
protocol StoreBackend: Sendable {
    /// The store as a user names it (a path, or the URL without its password).
    var name: String { get }
    var dialect: SQLDialect { get }
    func read<T>(_ body: (any SQLConnection) throws -> T) throws(StoreError) -> T
    func write<T>(_ body: (any SQLConnection) throws -> T) throws(StoreError) -> T
    /// The schema versions applied, and applies the missing ones (refusing a newer schema).
    func migrate(_ migrations: [Migration]) throws(StoreError)
    /// Checks a write would land now (disk, permissions, locks, the server).
    func checkWritable() throws(StoreError)
    /// The engine's own consistency check: "ok" when sound.
    func integrityCheck() throws(StoreError) -> String
    /// Removes what deleted rows leave in the engine's files (SQLite: checkpoint and truncate the WAL).
    func compact()
    func close()
}

/// One schema version: its identifier (never changed once shipped) and its statements, written
/// once for both engines (`REAL`, `INTEGER` and `BLOB` become `DOUBLE PRECISION`, `BIGINT` and
/// `BYTEA` on PostgreSQL).
struct Migration: Sendable {
    let id: String
    let sql: String

    /// The statements for a dialect, one by one (the schema's SQL has no `;` inside a literal).
    func statements(_ dialect: SQLDialect) -> [String] {
        var text = sql
        if dialect == .postgres {
            for (from, to) in [("REAL", "DOUBLE PRECISION"), ("INTEGER", "BIGINT"), ("BLOB", "BYTEA")] {
                text = text.replacingOccurrences(of: "\\b\(from)\\b", with: to, options: .regularExpression)
            }
        }
        return text.split(separator: ";").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.filter { !$0.isEmpty }
    }
}
