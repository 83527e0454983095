import Foundation

/// One value as both backends store it: SQLite's storage classes, which PostgreSQL's columns map to
/// (BIGINT, DOUBLE PRECISION, TEXT, BYTEA). The store's statements bind and read only these.
enum SQLValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])
}

/// A Swift value a statement can bind.
protocol SQLBindable: Sendable {
    var sqlValue: SQLValue { get }
}

extension String: SQLBindable { var sqlValue: SQLValue { .text(self) } }
extension Int: SQLBindable { var sqlValue: SQLValue { .integer(Int64(self)) } }
extension Int64: SQLBindable { var sqlValue: SQLValue { .integer(self) } }
extension Double: SQLBindable { var sqlValue: SQLValue { .real(self) } }
extension Data: SQLBindable { var sqlValue: SQLValue { .blob([UInt8](self)) } }
extension Array: SQLBindable where Element == UInt8 { var sqlValue: SQLValue { .blob(self) } }
extension Optional: SQLBindable where Wrapped: SQLBindable { var sqlValue: SQLValue { self?.sqlValue ?? .null } }
extension SQLValue: SQLBindable { var sqlValue: SQLValue { self } }

/// A Swift value a column can be read as. A column that holds something else is a damaged database:
/// reading it throws (never traps), so a bad row costs one answer, not the node.
protocol SQLReadable {
    static func read(_ value: SQLValue) -> Self?
}

extension String: SQLReadable {
    static func read(_ value: SQLValue) -> String? {
        if case .text(let s) = value { return s }
        return nil
    }
}
extension Double: SQLReadable {
    static func read(_ value: SQLValue) -> Double? {
        switch value {
        case .real(let d): d
        case .integer(let i): Double(i)
        default: nil
        }
    }
}
extension Int64: SQLReadable {
    static func read(_ value: SQLValue) -> Int64? {
        switch value {
        case .integer(let i): i
        case .real(let d): Int64(exactly: d)
        default: nil
        }
    }
}
extension Int: SQLReadable {
    static func read(_ value: SQLValue) -> Int? { Int64.read(value).flatMap { Int(exactly: $0) } }
}
extension Array: SQLReadable where Element == UInt8 {
    static func read(_ value: SQLValue) -> [UInt8]? {
        if case .blob(let b) = value { return b }
        return nil
    }
}
extension Optional: SQLReadable where Wrapped: SQLReadable {
    static func read(_ value: SQLValue) -> Wrapped?? {
        if case .null = value { return .some(nil) }
        return Wrapped.read(value).map { .some($0) }
    }
}

/// One result row: its values by position, and by column name (any case: PostgreSQL folds the
/// unquoted names the schema uses to lower case).
struct SQLRow: Sendable {
    let names: [String]
    let values: [SQLValue]

    /// The value of a column, as `T`.
    subscript<T: SQLReadable>(_ column: String) -> T {
        get throws {
            let key = column.lowercased()
            guard let index = names.firstIndex(of: key) else {
                throw StoreError(.database, Phrase("the database has no column %1$@ where Nearcard expects one; it is damaged or from another program", column))
            }
            return try self[index, column]
        }
    }

    /// The value at a position, as `T`.
    subscript<T: SQLReadable>(_ index: Int) -> T {
        get throws { try self[index, "#\(index + 1)"] }
    }

    private subscript<T: SQLReadable>(index: Int, what: String) -> T {
        get throws {
            guard index < values.count else {
                throw StoreError(.database, Phrase("a query returned %1$@ columns, not %2$@", String(values.count), String(index + 1)))
            }
            guard let value = T.read(values[index]) else {
                throw StoreError(
                    .database, Phrase("column %1$@ holds %2$@ where Nearcard expects %3$@; the database is damaged", what, "\(values[index].kind)", "\(T.self)")
                )
            }
            return value
        }
    }
}

extension SQLValue {
    /// What kind of value this is, for error messages (never the value: it may be personal data).
    var kind: String {
        switch self {
        case .null: "NULL"
        case .integer: "an integer"
        case .real: "a number"
        case .text: "text"
        case .blob: "bytes"
        }
    }
}
