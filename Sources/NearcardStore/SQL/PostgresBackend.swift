import Foundation
internal import Logging
internal import NIOCore
internal import NIOPosix
internal import NIOSSL
import NearcardModel
internal import PostgresNIO
import Synchronization

/// The fleet backend: a PostgreSQL database through postgres-nio, shared by several bots.
///
/// The store's API is synchronous (SQLite's is), so this backend blocks its caller on each round
/// trip, on a semaphore rather than NIO's `wait()`: callers may be event-loop threads of the node,
/// and the connections run on a loop of their own. A few connections are pooled. A connection lost
/// (the server restarted, the network dropped) is replaced and the whole transaction run again, for
/// up to `retryWindow`; so is one PostgreSQL aborted as a serialization failure or deadlock. Every
/// write the store makes is keyed (a DID, a message id), so running one again never doubles it.
final class PostgresBackend: StoreBackend, @unchecked Sendable {
    let location: StoreLocation.Postgres
    let name: String
    var dialect: SQLDialect { .postgres }
    /// How long a store call keeps trying to reach the server before it fails.
    let retryWindow: TimeInterval
    /// The longest one round trip may take before its connection counts as lost.
    static let roundTripTimeout: TimeInterval = 30

    /// This round trip's limit: `roundTripTimeout`, or less when an exchange's deadline comes sooner.
    static var roundTripLimit: TimeInterval {
        guard let phase = NearcardDatabase.commitDeadline else { return roundTripTimeout }
        return max(0.05, min(roundTripTimeout, phase.timeIntervalSinceNow))
    }
    private let configuration: PostgresConnection.Configuration
    private let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    private let logger: Logger
    private let report: @Sendable (StoreEvent) -> Void
    private let condition = NSCondition()
    private var idle: [PostgresConnection] = []
    private var open = 0
    private var nextID = 1
    private var closed = false
    /// A connection was lost and none has worked since (reported once each way).
    private var disconnected = false
    private let placeholders = Mutex<[String: String]>([:])

    init(_ location: StoreLocation.Postgres, retryWindow: TimeInterval = 30, report: @escaping @Sendable (StoreEvent) -> Void) throws(StoreError) {
        self.location = location
        self.name = location.redacted
        self.retryWindow = retryWindow
        self.report = report
        var logger = Logger(label: "nearcard.store.postgres")
        logger.logLevel = .critical
        self.logger = logger
        var config: PostgresConnection.Configuration
        if let socket = location.socketPath {
            config = .init(unixSocketPath: socket, username: location.user, password: location.password, database: location.database)
        } else {
            config = .init(
                host: location.host, port: location.port, username: location.user, password: location.password,
                database: location.database, tls: try Self.tls(location))
        }
        config.options.connectTimeout = .seconds(Int64(min(retryWindow, 10).rounded(.up)))
        self.configuration = config
    }

    deinit {
        close()
        // Not the blocking shutdown: the last reference may go on any thread, that loop's own included.
        group.shutdownGracefully { _ in }
    }

    /// postgres-nio's TLS for the URL's `sslmode`.
    static func tls(_ location: StoreLocation.Postgres) throws(StoreError) -> PostgresConnection.Configuration.TLS {
        var config = TLSConfiguration.makeClientConfiguration()
        switch location.tls {
        case .disable:
            return .disable
        case .prefer, .require:
            config.certificateVerification = .none
        case .verify(let root, let hostname):
            config.certificateVerification = hostname ? .fullVerification : .noHostnameVerification
            if let root {
                guard FileManager.default.isReadableFile(atPath: root) else {
                    throw StoreError(.invalidInput, Phrase("--store: sslrootcert %1$@ cannot be read", root))
                }
                config.trustRoots = .file(root)
            }
        }
        let context: NIOSSLContext
        do { context = try NIOSSLContext(configuration: config) } catch {
            throw StoreError(.invalidInput, Phrase("--store: cannot set up TLS (%1$@); check sslrootcert", "\(error)"))
        }
        return location.tls == .prefer ? .prefer(context) : .require(context)
    }

    // MARK: StoreBackend

    func read<T>(_ body: (any SQLConnection) throws -> T) throws(StoreError) -> T {
        try withConnection { connection in try body(connection) }
    }

    func write<T>(_ body: (any SQLConnection) throws -> T) throws(StoreError) -> T {
        try transaction(window: retryWindow, body)
    }

    private func transaction<T>(window: TimeInterval, _ body: (any SQLConnection) throws -> T) throws(StoreError) -> T {
        // A COMMIT sent whose answer never came may have landed (a frozen server commits when it wakes).
        var commitUnanswered = false
        do {
            return try withConnection(window: window) { connection in
                _ = try connection.execute("BEGIN", [])
                do {
                    let value = try body(connection)
                    do { _ = try connection.execute("COMMIT", []) } catch {
                        if classify(error) == .connectionLost { commitUnanswered = true }
                        throw error
                    }
                    return value
                } catch {
                    _ = try? connection.execute("ROLLBACK", [])
                    throw error
                }
            }
        } catch  where commitUnanswered && [.database, .pastDeadline].contains(error.kind) {
            throw StoreError(
                .inDoubt,
                Phrase(
                    "%1$@ did not answer the commit before the exchange's deadline: whether it kept the exchange is settled with the peer when it asks",
                    name))
        }
    }

    /// How long opening the store waits for the server: a command fails fast when there is none; a
    /// running bot rides out a restart for the whole `retryWindow`.
    static let openWindow: TimeInterval = 5

    func migrate(_ migrations: [Migration]) throws(StoreError) {
        try transaction(window: min(retryWindow, Self.openWindow)) { db in
            // One bot migrates; the others wait here, then find the schema current.
            try db.execute("SELECT pg_advisory_xact_lock(7447)")
            try db.execute("CREATE TABLE IF NOT EXISTS nearcard_migrations (identifier TEXT PRIMARY KEY, appliedAt DOUBLE PRECISION NOT NULL)")
            let applied = Set(try db.values("SELECT identifier FROM nearcard_migrations", []) as [String])
            let known = Set(migrations.map(\.id))
            if !applied.isSubset(of: known) {
                throw StoreError(
                    .database,
                    Phrase(
                        "%1$@ holds a newer Nearcard schema (%2$@); upgrade this Nearcard to use it (the other bots already run a newer one)", name,
                        applied.subtracting(known).sorted().joined(separator: ", "))
                )
            }
            for migration in migrations where !applied.contains(migration.id) {
                for statement in migration.statements(.postgres) { try db.execute(statement, []) }
                try db.execute("INSERT INTO nearcard_migrations (identifier, appliedAt) VALUES (?, ?)", migration.id, Date().timeIntervalSince1970)
            }
        }
    }

    func checkWritable() throws(StoreError) {
        let readOnly: Int? = try read { db in try db.value("SELECT pg_is_in_recovery()") }
        if readOnly == 1 { throw StoreError(.database, Phrase("%1$@ is a read-only standby: nothing can be stored there; point --store at the primary", name)) }
    }

    func integrityCheck() throws(StoreError) -> String {
        let tables: Int? = try read { db in
            try db.value(
                "SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name IN ('contact', 'outboxmessage', 'inboxmessage')"
            )
        }
        return tables == 3 ? "ok" : "the Nearcard tables are missing from \(name)"
    }

    func compact() {}

    func close() {
        condition.lock()
        closed = true
        let connections = idle
        idle.removeAll()
        condition.unlock()
        for connection in connections {
            let closing: EventLoopFuture<Void> = connection.close()
            if (try? block(closing, timeout: 2)) == nil { Self.keepUntilClosed(connection, closing) }
        }
    }

    // MARK: connections

    /// Runs `body` on a pooled connection; a lost connection (or an aborted transaction PostgreSQL
    /// asks to retry) runs it again on a new one until `retryWindow` has passed.
    private func withConnection<T>(window: TimeInterval? = nil, _ body: (Connection) throws -> T) throws(StoreError) -> T {
        let window = window ?? retryWindow
        // An exchange's deadline (NearcardDatabase.committing(by:)) ends the retries sooner.
        let phase = NearcardDatabase.commitDeadline
        let deadline = min(Date().addingTimeInterval(window), phase ?? .distantFuture)
        func failed(_ error: any Error) -> StoreError {
            if let phase, Date() >= phase, !(error is StoreError) { return NearcardDatabase.pastDeadline }
            return storeError(error, window: window)
        }
        var attempt = 0
        while true {
            attempt += 1
            let connection: PostgresConnection
            do { connection = try acquire(until: deadline) } catch {
                // A refused connection may be a server starting; a refused login or certificate is final.
                if Date() < deadline, case .unreachable(let cause) = error, Self.mayComeBack(cause) {
                    noteLost()
                    pause(attempt)
                    continue
                }
                throw failed(error)
            }
            do {
                let value = try body(Connection(backend: self, connection: connection))
                release(connection, broken: false)
                noteWorking()
                return value
            } catch {
                let failure = classify(error)
                release(connection, broken: failure == .connectionLost)
                if failure == .connectionLost { noteLost() }
                guard Date() < deadline else { throw failed(error) }
                switch failure {
                case .connectionLost, .retryable:
                    pause(attempt)
                case .final:
                    throw failed(error)
                }
            }
        }
    }

    /// A connection was found lost (a failed call, a pooled one the server closed, no answer).
    private func noteLost() {
        condition.lock()
        let first = !disconnected
        disconnected = true
        condition.unlock()
        if first { report(.connectionLost) }
    }

    private func noteWorking() {
        condition.lock()
        let back = disconnected
        disconnected = false
        condition.unlock()
        if back { report(.reconnected) }
    }

    private func pause(_ attempt: Int) {
        Thread.sleep(forTimeInterval: min(0.05 * Double(1 << min(attempt, 6)), 1.0))
    }

    private enum AcquireError: Error {
        case unreachable(any Error)
        case closed, busy
    }

    /// The largest number of connections one process opens.
    static let maxConnections = 4

    private func acquire(until deadline: Date) throws(AcquireError) -> PostgresConnection {
        condition.lock()
        while true {
            if closed {
                condition.unlock()
                throw .closed
            }
            if let connection = idle.popLast() {
                if connection.isClosed {
                    open -= 1
                    condition.unlock()
                    noteLost()
                    condition.lock()
                    continue
                }
                condition.unlock()
                return connection
            }
            if open < Self.maxConnections { break }
            if !condition.wait(until: deadline) {
                condition.unlock()
                throw .busy
            }
        }
        open += 1
        let id = nextID
        nextID += 1
        condition.unlock()
        let connecting = PostgresConnection.connect(on: group.next(), configuration: configuration, id: id, logger: logger)
        do {
            return try block(connecting, timeout: Self.roundTripLimit)
        } catch {
            // One that arrives after this stopped waiting (a server that froze mid-login) is closed, not dropped.
            connecting.whenSuccess { Self.keepUntilClosed($0, $0.close()) }
            condition.lock()
            open -= 1
            condition.signal()
            condition.unlock()
            throw .unreachable(error)
        }
    }

    /// Holds a connection until its close completes: one given up on a frozen server closes only when
    /// the server answers again, and a connection must not go away while it is still closing.
    static func keepUntilClosed(_ connection: PostgresConnection, _ closing: EventLoopFuture<Void>) {
        closing.whenComplete { _ in withExtendedLifetime(connection) {} }
    }

    private func release(_ connection: PostgresConnection, broken: Bool) {
        condition.lock()
        if broken || closed || connection.isClosed {
            open -= 1
            Self.keepUntilClosed(connection, connection.close())
        } else {
            idle.append(connection)
        }
        condition.signal()
        condition.unlock()
    }

    /// Waits for a future off the event loops (a semaphore, not NIO's `wait()`, which refuses any
    /// event-loop thread); a round trip that takes longer than `timeout` counts as a lost connection.
    private func block<T: Sendable>(_ future: EventLoopFuture<T>, timeout: TimeInterval) throws -> T {
        let done = DispatchSemaphore(value: 0)
        let result = Mutex<Result<T, any Error>?>(nil)
        future.whenComplete { outcome in
            result.withLock { $0 = outcome }
            done.signal()
        }
        if done.wait(timeout: .now() + timeout) == .timedOut {
            throw RoundTripTimeout()
        }
        return try result.withLock { $0! }.get()
    }

    struct RoundTripTimeout: Error {}

    private enum Failure { case connectionLost, retryable, final }

    /// Whether a failed connection attempt may succeed later: not a TLS failure, and not the server
    /// refusing the login (a wrong password, an unknown database or role).
    static func mayComeBack(_ error: any Error) -> Bool {
        guard let e = error as? PSQLError else { return true }
        if e.code == .sslUnsupported || e.underlying is NIOSSLError || e.underlying is BoringSSLError { return false }
        if let state = e.serverInfo?[.sqlState] {
            // cannot_connect_now (starting up), too_many_connections, admin/crash shutdown: later.
            return ["57P03", "53300", "57P01", "57P02"].contains(state)
        }
        return true
    }

    private func classify(_ error: any Error) -> Failure {
        if error is RoundTripTimeout { return .connectionLost }
        if error is RetryTransaction { return .retryable }
        // A certificate that does not check out will not check out on a second try.
        if let e = error as? PSQLError, e.code == .sslUnsupported || e.underlying is NIOSSLError || e.underlying is BoringSSLError { return .final }
        guard let e = error as? PSQLError else { return .final }
        if let state = e.serverInfo?[.sqlState] {
            // serialization_failure, deadlock_detected: PostgreSQL asks the client to run it again;
            // admin_shutdown, crash_shutdown, cannot_connect_now: the server is going away or starting.
            switch state {
            case "40001", "40P01": return .retryable
            case "57P01", "57P02", "57P03": return .connectionLost
            default: return .final
            }
        }
        switch e.code {
        case .serverClosedConnection, .connectionError, .uncleanShutdown, .clientClosedConnection, .messageDecodingFailure,
            .unexpectedBackendMessage:
            return .connectionLost
        default:
            return .final
        }
    }

    private func storeError(_ error: any Error, window: TimeInterval) -> StoreError {
        switch error {
        case let e as StoreError: return e
        case AcquireError.closed: return StoreError(.database, Phrase("%1$@: the store was closed", name))
        case AcquireError.busy:
            return StoreError(
                .database, Phrase("%1$@: all %2$@ connections stayed busy for %3$@ s; try again", name, String(Self.maxConnections), String(Int(window))))
        case AcquireError.unreachable(let cause) where !Self.mayComeBack(cause):
            return StoreError(
                .database,
                Phrase(
                    "PostgreSQL at %1$@ refused the connection: %2$@; fix --store (user, database, sslmode, sslrootcert) or $PGPASSWORD", name,
                    Self.reason(cause)))
        case AcquireError.unreachable(let cause):
            return StoreError(
                .database,
                Phrase(
                    "cannot reach PostgreSQL at %1$@ (tried for %2$@ s): %3$@; start the server or fix --store", name, String(Int(window)),
                    Self.reason(cause)))
        case is RoundTripTimeout:
            return StoreError(
                .database, Phrase("%1$@ did not answer within %2$@ s; is the server overloaded or stopped?", name, String(Int(Self.roundTripTimeout))))
        default: return StoreError(.database, Phrase("%1$@: %2$@", name, Self.reason(error)))
        }
    }

    /// What a postgres-nio error says, in one line, never the query's bound values.
    static func reason(_ error: any Error) -> Phrase {
        guard let e = error as? PSQLError else {
            if let io = error as? IOError { return Phrase(verbatim: String(cString: strerror(io.errnoCode))) }
            return Phrase(verbatim: "\(error)")
        }
        if e.code == .sslUnsupported { return Phrase("the server does not offer TLS (sslmode asks for it)") }
        if let tls = e.underlying as? NIOSSLError { return Phrase("TLS failed (%1$@); check the server's certificate and sslrootcert", "\(tls)") }
        if let tls = e.underlying as? BoringSSLError { return Phrase("TLS failed (%1$@); check the server's certificate and sslrootcert", "\(tls)") }
        if let message = e.serverInfo?[.message] {
            guard let state = e.serverInfo?[.sqlState] else { return Phrase(verbatim: message) }
            return Phrase("%1$@ (SQLSTATE %2$@)", message, state)
        }
        if let underlying = e.underlying {
            if let io = underlying as? IOError { return Phrase(verbatim: String(cString: strerror(io.errnoCode))) }
            if let connect = underlying as? NIOConnectionError, let first = connect.connectionErrors.first {
                if let io = first.error as? IOError { return Phrase(verbatim: String(cString: strerror(io.errnoCode))) }
                return Phrase(verbatim: "\(first.error)")
            }
            return Phrase(verbatim: "\(underlying)")
        }
        return Phrase(verbatim: "\(e.code)")
    }

    /// `?` placeholders numbered `$1…` (outside quoted literals), cached per statement.
    func numbered(_ sql: String) -> String {
        if let hit = placeholders.withLock({ $0[sql] }) { return hit }
        var out = ""
        var n = 0
        var quoted = false
        for ch in sql {
            if ch == "'" { quoted.toggle() }
            if ch == "?" && !quoted {
                n += 1
                out += "$\(n)"
            } else {
                out.append(ch)
            }
        }
        placeholders.withLock { $0[sql] = out }
        return out
    }

    struct Connection: SQLConnection {
        let backend: PostgresBackend
        let connection: PostgresConnection
        var dialect: SQLDialect { .postgres }

        func execute(_ sql: String, _ arguments: [SQLValue]) throws -> Int {
            let result = try backend.block(connection.query(query(sql, arguments), logger: backend.logger), timeout: PostgresBackend.roundTripLimit)
            return result.metadata.rows ?? 0
        }

        func rows(_ sql: String, _ arguments: [SQLValue]) throws -> [SQLRow] {
            let result = try backend.block(connection.query(query(sql, arguments), logger: backend.logger), timeout: PostgresBackend.roundTripLimit)
            var names: [String]? = nil
            return try result.rows.map { row in
                var values: [SQLValue] = []
                var columns: [String] = []
                for cell in row {
                    values.append(try Self.value(cell))
                    if names == nil { columns.append(cell.columnName.lowercased()) }
                }
                if names == nil { names = columns }
                return SQLRow(names: names ?? columns, values: values)
            }
        }

        private func query(_ sql: String, _ arguments: [SQLValue]) -> PostgresQuery {
            var binds = PostgresBindings(capacity: arguments.count)
            for argument in arguments {
                switch argument {
                case .null: binds.appendNull()
                case .integer(let i): binds.append(i)
                case .real(let d): binds.append(d)
                case .text(let s): binds.append(s)
                case .blob(let b): binds.append(ByteBuffer(bytes: b))
                }
            }
            return PostgresQuery(unsafeSQL: backend.numbered(sql), binds: binds)
        }

        static func value(_ cell: PostgresCell) throws -> SQLValue {
            guard cell.bytes != nil else { return .null }
            switch cell.dataType {
            case .int2, .int4, .int8, .oid: return .integer(try cell.decode(Int64.self))
            case .float4, .float8: return .real(try cell.decode(Double.self))
            case .bool: return .integer(try cell.decode(Bool.self) ? 1 : 0)
            case .bytea: return .blob(Array(buffer: try cell.decode(ByteBuffer.self)))
            case .numeric: return .real(Double(try cell.decode(String.self)) ?? .nan)
            default: return .text(try cell.decode(String.self))
            }
        }
    }
}

extension PostgresBackend {
    /// Listens on `channel` on a connection of its own (not the pool's: a listening connection is held
    /// for as long as the watch runs), handing each notification's payload to `handler`. A lost
    /// connection is made again every second; once listening again, `handler(nil)` says that changes
    /// may have been missed meanwhile.
    func watch(channel: String, listening: @escaping @Sendable (Bool) -> Void, _ handler: @escaping @Sendable (String?) -> Void) -> Task<Void, Never> {
        let configuration = self.configuration
        let group = self.group
        let logger = self.logger
        return Task {
            var again = false
            while !Task.isCancelled {
                var held: PostgresConnection?
                do {
                    let connection = try await PostgresConnection.connect(on: group.next(), configuration: configuration, id: 0, logger: logger)
                    held = connection
                    try await connection.listen(on: channel) { notifications in
                        listening(true)
                        if again { handler(nil) }
                        again = true
                        for try await n in notifications { handler(n.payload) }
                    }
                } catch {}
                listening(false)
                try? await held?.close()
                try? await Task.sleep(nanoseconds: 1_000_000_000)
            }
        }
    }
}
