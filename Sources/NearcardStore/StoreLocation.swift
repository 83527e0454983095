public import Foundation

/// Where a node's book lives: the home's SQLite file (the default), another SQLite file, or a
/// PostgreSQL database a fleet of bots shares. Named by `--store` or `NEARCARD_STORE`:
/// `sqlite:PATH`, or `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE` (also `postgresql://`;
/// `?host=/run/postgresql` for a Unix socket, as libpq reads it; the password may come from
/// `PGPASSWORD` instead, which keeps it out of `ps`; `sslmode` and `sslrootcert` as libpq's).
public enum StoreLocation: Sendable, Equatable, CustomStringConvertible {
    case sqlite(path: String)
    case postgres(Postgres)

    public struct Postgres: Sendable, Equatable {
        public var user: String
        public var password: String?
        public var host: String
        public var port: Int
        public var database: String
        /// The Unix socket to connect through instead of TCP.
        public var socketPath: String?
        /// TLS, as libpq's `sslmode` names it.
        public var tls: TLS = .disable

        public enum TLS: Sendable, Equatable {
            /// No TLS (`disable`, `allow`).
            case disable
            /// TLS when the server offers it, no certificate check (`prefer`, libpq's default).
            case prefer
            /// TLS or no connection, no certificate check (`require`): safe from listeners, not from a man in the middle.
            case require
            /// TLS with the server's certificate checked against `rootCertificate` (a PEM file; the
            /// system's roots when nil): `verify-ca` checks the chain, `verify-full` the host name too.
            case verify(rootCertificate: String?, hostname: Bool)
        }

        /// The URL without its password (what errors and logs show).
        /// It reads back as the same store (`parse`): a socket's port, which names its file, included.
        public var redacted: String {
            let socketQuery = socketPath.map { "?host=\(FileIO.directoryName($0))&port=\(port)" } ?? ""
            let hostPart = socketPath == nil ? "\(host):\(port)" : ""
            return "postgres://\(user)@\(hostPart)/\(database)\(socketQuery)"
        }
    }

    public var description: String {
        switch self {
        case .sqlite(let path): "sqlite:\(path)"
        case .postgres(let p): p.redacted
        }
    }

    public var isPostgres: Bool { if case .postgres = self { true } else { false } }

    /// Reads a `--store` value; `environment` supplies `PGPASSWORD` and `USER` as libpq would.
    public static func parse(_ text: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws(StoreError) -> StoreLocation {
        let t = text.trimmingCharacters(in: .whitespaces)
        if t.hasPrefix("sqlite:") {
            let path = String(t.dropFirst("sqlite:".count))
            guard !path.isEmpty else { throw StoreError(.invalidInput, Phrase("--store sqlite: needs a path, e.g. sqlite:/var/lib/nearcard/book.sqlite")) }
            return .sqlite(path: path)
        }
        guard t.hasPrefix("postgres://") || t.hasPrefix("postgresql://") else {
            throw StoreError(.invalidInput, Phrase("--store \"%1$@\" is not a store: give sqlite:PATH or postgres://USER@HOST/DATABASE", Self.shown(t)))
        }
        guard let url = URLComponents(string: t), let scheme = url.scheme, scheme.hasPrefix("postgres") else {
            throw StoreError(.invalidInput, Phrase("--store %1$@ is not a valid URL: postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE", Self.shown(t)))
        }
        let query = Dictionary((url.queryItems ?? []).map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { $1 })
        for key in query.keys where !["host", "port", "user", "password", "dbname", "sslmode", "sslrootcert", "application_name"].contains(key) {
            throw StoreError(
                .invalidInput, Phrase("--store: the parameter %1$@ is not supported (host, port, user, password, dbname, sslmode, sslrootcert are)", key))
        }
        var tls: Postgres.TLS
        switch query["sslmode"] ?? "prefer" {
        case "disable", "allow": tls = .disable
        case "prefer": tls = .prefer
        case "require": tls = query["sslrootcert"] == nil ? .require : .verify(rootCertificate: query["sslrootcert"], hostname: false)
        case "verify-ca": tls = .verify(rootCertificate: query["sslrootcert"], hostname: false)
        case "verify-full": tls = .verify(rootCertificate: query["sslrootcert"], hostname: true)
        case let mode:
            throw StoreError(.invalidInput, Phrase("--store: sslmode=%1$@ is not one of disable, allow, prefer, require, verify-ca, verify-full", mode))
        }
        let user = query["user"] ?? url.user.flatMap { $0.isEmpty ? nil : $0 } ?? environment["PGUSER"] ?? environment["USER"] ?? "postgres"
        let password = query["password"] ?? url.password ?? environment["PGPASSWORD"]
        let database = query["dbname"] ?? String(url.path.drop(while: { $0 == "/" }))
        let portText = query["port"] ?? url.port.map(String.init) ?? "5432"
        guard let port = Int(portText), (1...65535).contains(port) else {
            throw StoreError(.invalidInput, Phrase("--store: port %1$@ is not a port number (1–65535)", portText))
        }
        var host = query["host"] ?? url.host ?? ""
        var socket: String? = nil
        if host.isEmpty { host = "/var/run/postgresql" }
        if host.hasPrefix("/") {
            socket = host.hasSuffix(".s.PGSQL.\(port)") ? host : "\(host)/.s.PGSQL.\(port)"
            host = "localhost"
        }
        // Over a Unix socket there is nothing to encrypt (libpq ignores sslmode there too).
        return .postgres(
            Postgres(
                user: user, password: password, host: host, port: port,
                database: database.isEmpty ? user : database, socketPath: socket, tls: socket == nil ? tls : .disable))
    }

    /// A store value as an error may repeat it: without a password.
    static func shown(_ text: String) -> String {
        guard var url = URLComponents(string: text), url.password != nil else { return text }
        url.password = "…"
        return url.string ?? "(the URL given)"
    }
}
