internal import CSQLite
import Foundation
internal import GRDB
import Synchronization

/// The embedded backend: one SQLite file in WAL mode through GRDB (the default; no server).
final class SQLiteBackend: StoreBackend {
    let path: String
    /// A pool (readers beside one writer) for a node that serves; one connection for a command that
    /// runs once (`singleConnection`), read-only for one that only reads (`readOnly`).
    let pool: any DatabaseWriter
    let busyTimeout: TimeInterval
    /// Opened to read only: never writes a byte (no WAL set-up, no checkpoint when it closes).
    let readOnly: Bool
    /// One connection for a command that runs once and writes: commits synced to the WAL as they are
    /// made, the WAL left as it is at close (no checkpoint on the command's way out).
    let keepsWAL: Bool
    var name: String { path }
    var dialect: SQLDialect { .sqlite }

    /// `singleConnection`: one connection for a command that runs once and exits (`exchange`, `message`),
    /// instead of a pool of readers beside the writer for a node that serves.
    init(path: String, busyTimeout: TimeInterval, readOnly: Bool = false, singleConnection: Bool = false) throws(StoreError) {
        self.path = path
        self.busyTimeout = busyTimeout
        self.readOnly = readOnly
        keepsWAL = singleConnection && !readOnly
        try FileIO.makeDirectory(FileIO.directoryName(path), mode: 0o700)
        // The database and its WAL and SHM exist 0600 before SQLite opens them: SQLite gives the WAL
        // and SHM the database file's mode, and a file made later under a loose umask would be readable.
        // Tightening takes group and others away, never adds: a database its owner made read-only stays
        // so (and is refused for writing, saying why), and a file that is not a database keeps its mode.
        if !FileManager.default.fileExists(atPath: path) {
            let fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
            if fd >= 0 { _ = Glibc.close(fd) }
        }
        if Self.isDatabaseOrEmpty(path) {
            FileIO.takeAwayGroupAndOthers(path)
            // The WAL and SHM follow the database's mode, as SQLite means them to: made while it was
            // read-only, they would stay so after its owner made it writable again.
            var st = stat()
            if lstat(path, &st) == 0 {
                for file in [path + "-wal", path + "-shm"] { Self.setMode(file, st.st_mode & 0o600, owner: st.st_uid) }
            }
        }
        var config = Configuration()
        config.busyMode = .timeout(busyTimeout)
        let single = singleConnection && !readOnly
        config.prepareDatabase { db in
            if single {
                // A new book is made in WAL mode, as GRDB's pool makes it, without the pool's own set-up
                // write. Each commit is synced to the WAL as it is made (FULL), and the connection
                // leaves the WAL as it is when it closes: the command's exchange is durable the moment
                // it is stored, and the command does not also fold the WAL into the database at exit
                // (two fdatasyncs more, and two when the next command re-creates the WAL). The WAL is
                // folded in by SQLite's automatic checkpoint (every 1,000 pages) or by a node as it
                // closes (docs/PERFORMANCE.md "Commands").
                try db.execute(sql: "PRAGMA journal_mode = WAL")
                try db.execute(sql: "PRAGMA synchronous = FULL")
                let rc = nearcard_sqlite_no_checkpoint_on_close(db.sqliteConnection)
                guard rc == SQLITE_OK else { throw DatabaseError(resultCode: ResultCode(rawValue: rc)) }
            }
            try db.execute(sql: "PRAGMA foreign_keys = ON")
            // A deleted row's bytes are overwritten, not left in free pages.
            try db.execute(sql: "PRAGMA secure_delete = ON")
        }
        // A command that only reads opens one read-only connection: GRDB's pool makes sure a WAL file
        // with a frame exists as it opens (a small write, with fdatasyncs) and SQLite then checkpoints it
        // at exit (more of them) — a third of `nearcard contacts`' time, for nothing it needed. SQLite
        // reads a WAL database read-only with its -wal and -shm as they are (docs/PERFORMANCE.md "Commands").
        config.readonly = readOnly
        // A command that runs once and writes (an exchange) opens one connection, too: the pool's set-up
        // write cost two fdatasyncs at every start, a quarter of `nearcard exchange HOST:PORT` beyond
        // the protocol.
        do {
            pool = readOnly || singleConnection ? try DatabaseQueue(path: path, configuration: config) : try DatabasePool(path: path, configuration: config)
        } catch {
            throw Self.storeError(error, path: path, busyTimeout: busyTimeout)
        }
    }

    func read<T>(_ body: (any SQLConnection) throws -> T) throws(StoreError) -> T {
        do { return try pool.read { db in try body(Connection(db: db)) } } catch { throw mapped(error) }
    }

    /// One write transaction (BEGIN IMMEDIATE … COMMIT, rolled back on any error), as GRDB's `write`
    /// runs it, with its two statements prepared once per connection rather than on every call: an
    /// exchange's store is a transaction of a few statements, and compiling these two was a tenth of it.
    func write<T>(_ body: (any SQLConnection) throws -> T) throws(StoreError) -> T {
        do {
            return try pool.writeWithoutTransaction { db in
                try db.cachedStatement(sql: "BEGIN IMMEDIATE TRANSACTION").execute()
                do {
                    let result = try body(Connection(db: db))
                    try db.cachedStatement(sql: "COMMIT TRANSACTION").execute()
                    return result
                } catch {
                    // Also after a failed COMMIT (a full disk): SQLite may have rolled back already, and
                    // GRDB's rollback then does nothing.
                    try? db.rollback()
                    throw error
                }
            }
        } catch {
            throw mapped(error)
        }
    }

    func migrate(_ migrations: [Migration]) throws(StoreError) {
        var migrator = DatabaseMigrator()
        for migration in migrations {
            migrator.registerMigration(migration.id) { db in
                for statement in migration.statements(.sqlite) { try db.execute(sql: statement) }
            }
        }
        do {
            // A read first: when the schema is current (the usual case) opening takes no write lock,
            // so commands can read while a running node writes.
            let applied = try pool.read { db in try Set(migrator.appliedIdentifiers(db)) }
            let known = Set(migrations.map(\.id))
            if !applied.isSubset(of: known) {
                throw StoreError(
                    .database,
                    Phrase(
                        "%1$@ was written by a newer Nearcard (schema %2$@); upgrade Nearcard to use it", path,
                        applied.subtracting(known).sorted().joined(separator: ", "))
                )
            }
            if applied != known {
                // A read-only store cannot bring the schema up to date: whoever opened it opens it to write.
                if readOnly { throw StoreError(.schemaBehind, Self.schemaBehind) }
                // One process at a time: two commands opening a new book at once would both find it
                // empty and both create its tables (the second failing: "table … already exists").
                // The lock is an flock on the book's directory (not on the file: closing another
                // descriptor of the file would drop SQLite's own locks); the second process then finds
                // the schema current and migrates nothing.
                let directory = open(
                    (path as NSString).deletingLastPathComponent.isEmpty ? "." : (path as NSString).deletingLastPathComponent,
                    O_RDONLY | O_DIRECTORY | O_CLOEXEC)
                if directory >= 0 { flock(directory, LOCK_EX) }
                defer { if directory >= 0 { _ = Glibc.close(directory) } }
                try migrator.migrate(pool)
            }
        } catch {
            throw mapped(error)
        }
        FileIO.takeAwayGroupAndOthers(path)
    }

    /// What a read-only store throws when the schema needs a migration (`NearcardDatabase(reading:)` then
    /// opens it to write).
    static let schemaBehind = Phrase("the book's schema is older than this Nearcard: it must be opened to write once")

    /// A regular file that is empty or starts as an SQLite database does (never waiting on a FIFO).
    static func isDatabaseOrEmpty(_ path: String) -> Bool {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else { return false }
        defer { _ = Glibc.close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG else { return false }
        var header = [UInt8](repeating: 0, count: 16)
        let n = Glibc.read(fd, &header, 16)
        return n == 0 || (n == 16 && header == Array("SQLite format 3\0".utf8))
    }

    /// Gives a regular file of `owner`'s this mode, when it has another.
    static func setMode(_ path: String, _ mode: mode_t, owner: uid_t) {
        var st = stat()
        guard lstat(path, &st) == 0, st.st_mode & S_IFMT == S_IFREG, st.st_uid == owner, st.st_mode & 0o777 != mode else { return }
        _ = chmod(path, mode)
    }

    /// Why this database cannot be written, when the file system says so: a read-only mount, a full disk,
    /// a home or file this user may not write. Nil when none of these holds.
    static func unwritable(_ path: String) -> StoreError? {
        let directory = FileIO.directoryName(path)
        var fs = statvfs()
        if statvfs(directory, &fs) == 0 {
            if fs.f_flag & UInt(ST_RDONLY) != 0 {
                return StoreError(.io, Phrase("%1$@ is on a read-only file system: nothing can be stored there; use a writable --home", directory))
            }
            let free = UInt64(fs.f_bavail) * UInt64(fs.f_frsize)
            if free < NearcardDatabase.minimumFreeBytes {
                return StoreError(
                    .io,
                    Phrase(
                        "the disk holding %1$@ is full (%2$@ KiB free, %3$@ KiB needed); free some space", directory, String(free / 1024),
                        String(NearcardDatabase.minimumFreeBytes / 1024)))
            }
        }
        for file in [directory, path] where access(file, F_OK) == 0 && access(file, W_OK) != 0 {
            // access(2): EPERM for a file marked immutable; no chmod helps there, not even root's.
            if errno == EPERM {
                return StoreError(
                    .io,
                    Phrase(
                        "%1$@ is marked immutable (see: lsattr %1$@): nothing can be stored there; its owner must run chattr -i %1$@ as root, or use another --home",
                        file))
            }
            if let mode = FileIO.mode(file) {
                return StoreError(
                    .io,
                    Phrase(
                        "%1$@ is not writable by this user (mode %2$@): nothing was changed; make it writable (chmod u+w %1$@) or use another --home",
                        file, String(mode & 0o777, radix: 8)))
            }
            return StoreError(
                .io, Phrase("%1$@ is not writable by this user: nothing was changed; make it writable (chmod u+w %1$@) or use another --home", file))
        }
        return nil
    }

    func checkWritable() throws(StoreError) {
        if let problem = Self.unwritable(path) { throw problem }
        do {
            try pool.writeWithoutTransaction { db in
                try db.execute(sql: "BEGIN IMMEDIATE")
                try db.execute(sql: "ROLLBACK")
            }
        } catch {
            throw mapped(error)
        }
    }

    func integrityCheck() throws(StoreError) -> String {
        do { return try pool.read { db in try String.fetchAll(db, sql: "PRAGMA integrity_check").joined(separator: "; ") } } catch { throw mapped(error) }
    }

    func close() {
        // A command's connection leaves its synced WAL for later (`keepsWAL`); a deletion has already
        // compacted what it must (`compact`), whatever the connection.
        if !keepsWAL { compact() }
        try? pool.close()
    }

    func compact() {
        guard !readOnly else { return }
        _ = try? pool.writeWithoutTransaction { db in try db.checkpoint(.truncate) }
    }

    private func mapped(_ error: any Error) -> StoreError {
        if let e = error as? StoreError { return e }
        return Self.storeError(error, path: path, busyTimeout: busyTimeout)
    }

    static func storeError(_ error: any Error, path: String, busyTimeout: TimeInterval) -> StoreError {
        guard let e = error as? DatabaseError else { return StoreError(.database, Phrase("%1$@: %2$@", path, "\(error)")) }
        switch e.resultCode.primaryResultCode {
        case .SQLITE_BUSY, .SQLITE_LOCKED:
            return StoreError(.database, Phrase("%1$@ is locked by another process (waited %2$@ s); try again when it is done", path, "\(busyTimeout)"))
        case .SQLITE_NOTADB, .SQLITE_CORRUPT:
            return StoreError(.database, Phrase("%1$@ is not a Nearcard database or is damaged; it was left untouched (move it away to start a new one)", path))
        case .SQLITE_CANTOPEN, .SQLITE_PERM, .SQLITE_READONLY, .SQLITE_IOERR, .SQLITE_FULL:
            // SQLite's words ("disk I/O error", "attempt to write a readonly database") say what failed,
            // not why nor what to do: the file system usually can.
            return unwritable(path) ?? StoreError(.io, Phrase("%1$@: %2$@", path, e.message ?? "\(e.resultCode)"))
        default:
            return StoreError(.database, Phrase("%1$@: %2$@", path, e.message ?? "\(e.resultCode)"))
        }
    }

    /// GRDB's connection, as the store speaks to it. Every statement is cached: the store's are few,
    /// and the exchange path runs the same ones again and again.
    struct Connection: SQLConnection {
        let db: GRDB.Database
        var dialect: SQLDialect { .sqlite }

        func execute(_ sql: String, _ arguments: [SQLValue]) throws -> Int {
            try Self.prepared(sql, arguments, db).execute()
            return db.changesCount
        }

        func rows(_ sql: String, _ arguments: [SQLValue]) throws -> [SQLRow] {
            let statement = try Self.prepared(sql, arguments, db)
            let names = Self.columnNames(sql, statement)
            let cursor = try Row.fetchCursor(statement)
            var out: [SQLRow] = []
            while let row = try cursor.next() {
                out.append(SQLRow(names: names, values: (0..<row.count).map { Self.value(row[$0] as DatabaseValue) }))
            }
            return out
        }

        /// The cached statement with its arguments bound. The store's SQL is its own, with one argument
        /// per placeholder (a mismatch would fail every test that runs the statement): bound without
        /// GRDB's per-call check of the arguments against the statement.
        private static func prepared(_ sql: String, _ arguments: [SQLValue], _ db: GRDB.Database) throws -> Statement {
            let statement = try db.cachedStatement(sql: sql)
            let bound = Self.arguments(arguments)
            assert((try? statement.validateArguments(bound)) != nil, "\(arguments.count) arguments do not fit: \(sql)")
            statement.setUncheckedArguments(bound)
            return statement
        }

        /// A statement's column names, lowercased, kept per SQL text: the store's queries are few and run
        /// again and again (an exchange's reads among them).
        private static let names = Mutex<[String: [String]]>([:])

        private static func columnNames(_ sql: String, _ statement: Statement) -> [String] {
            if let known = names.withLock({ $0[sql] }) { return known }
            let lowered = statement.columnNames.map { $0.lowercased() }
            // Bounded: the store's own statements are a few dozen; SQL made from input never reaches here.
            names.withLock { if $0.count < 512 { $0[sql] = lowered } }
            return lowered
        }

        /// Arguments as GRDB binds them. (Built from optionals of the existential: GRDB's initializer for a
        /// sequence of a concrete convertible type goes through a key path per value, several times slower.)
        static func arguments(_ values: [SQLValue]) -> StatementArguments {
            StatementArguments(
                values.map { value -> (any DatabaseValueConvertible)? in
                    switch value {
                    case .null: nil
                    case .integer(let i): i
                    case .real(let d): d
                    case .text(let s): s
                    case .blob(let b): Data(b)
                    }
                })
        }

        static func value(_ v: DatabaseValue) -> SQLValue {
            switch v.storage {
            case .null: .null
            case .int64(let i): .integer(i)
            case .double(let d): .real(d)
            case .string(let s): .text(s)
            case .blob(let b): .blob([UInt8](b))
            }
        }
    }
}
