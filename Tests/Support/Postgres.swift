import Foundation
import NearcardProcess
import NearcardSimulation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A throw-away PostgreSQL server for the tests, from Debian's packages: `initdb` into a temporary
/// folder, `pg_ctl start` on a Unix socket in that folder (and a TCP address when asked), the server
/// run as the unprivileged test account when the tests have root (PostgreSQL refuses root). Trust
/// authentication for the one superuser `nearcard`, no fsync: it holds nothing worth keeping, and is
/// stopped and removed when the test process exits.
public final class TestPostgres: @unchecked Sendable {
    public let directory: String
    public let socketDirectory: String
    public let port: Int
    public let listenAddress: String?
    public let superuser = "nearcard"
    /// The server's certificate (PEM), when started with `tls`.
    public var certificate: String { directory + "/server.crt" }
    let binaries: String
    let netns: String?
    /// The server's options, for a start after `halt()`.
    private var options = ""

    /// The server the store's suite shares (one per test process; each test makes its own database).
    public static let shared: TestPostgres = {
        do { return try TestPostgres() } catch { fatalError("cannot start the tests' PostgreSQL server: \(error)") }
    }()

    /// Starts a server. `listen` adds a TCP address (e.g. a veth's inside `netns`) beside the socket,
    /// and `clients` the network allowed to connect to it (trust, as the socket).
    /// With `tls`, the server has a self-signed certificate for `localhost`/127.0.0.1 (`certificate`)
    /// and accepts TCP connections over TLS only.
    public init(listen: String? = nil, port: Int = 5432, netns: String? = nil, clients: String? = nil, tls: Bool = false) throws {
        guard let bin = Self.findBinaries() else {
            throw LabError("PostgreSQL's server is not installed (initdb, pg_ctl); run scripts/install-deps.sh")
        }
        binaries = bin
        self.listenAddress = listen
        self.port = port
        self.netns = netns
        directory = "/tmp/nearcard-pg-\(getpid())-\(UUID().uuidString.prefix(8))"
        socketDirectory = directory
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        TestAccount.give(directory)
        let initdb = try run([bin + "/initdb", "-D", directory + "/data", "-U", superuser, "--auth=trust", "--no-sync", "-E", "UTF8", "--no-instructions"])
        guard initdb.code == 0 else { throw LabError("initdb failed: \(initdb.output)") }
        if let clients {
            let hba = directory + "/data/pg_hba.conf"
            let text = ((try? String(contentsOfFile: hba, encoding: .utf8)) ?? "") + "host all all \(clients) trust\n"
            try text.write(toFile: hba, atomically: false, encoding: .utf8)
        }
        var options = "-k \(socketDirectory) -p \(port) -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        if tls {
            let made = try ChildProcess.run([
                "/usr/bin/openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                "-days", "2", "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
                "-keyout", certificate + ".key", "-out", certificate,
            ])
            guard made.code == 0 else { throw LabError("openssl req: \(made.output)") }
            chmod(certificate + ".key", 0o600)
            TestAccount.give(certificate + ".key")
            TestAccount.give(certificate)
            options += " -c ssl=on -c ssl_cert_file=\(certificate) -c ssl_key_file=\(certificate).key"
            // TCP only over TLS: every `host` line becomes `hostssl`.
            let hba = directory + "/data/pg_hba.conf"
            let text = ((try? String(contentsOfFile: hba, encoding: .utf8)) ?? "").split(separator: "\n", omittingEmptySubsequences: false)
                .map { $0.hasPrefix("host ") ? "hostssl" + $0.dropFirst(4) : String($0) }.joined(separator: "\n")
            try text.write(toFile: hba, atomically: false, encoding: .utf8)
        }
        options += " -c listen_addresses='\(listen ?? "")' -c max_connections=60"
        self.options = options
        let start = try run([bin + "/pg_ctl", "-D", directory + "/data", "-o", options, "-l", directory + "/server.log", "-w", "-t", "60", "start"])
        guard start.code == 0 else {
            let log = (try? String(contentsOfFile: directory + "/server.log", encoding: .utf8)) ?? ""
            throw LabError("PostgreSQL did not start: \(start.output) \(log.suffix(600))")
        }
        Self.started.withLock { $0.append(self) }
        Self.registerCleanup
    }

    /// `postgres://` URL of a database on this server (over the Unix socket unless `host` is given).
    public func url(database: String, host: String? = nil) -> String {
        if let host { return "postgres://\(superuser)@\(host):\(port)/\(database)" }
        return "postgres://\(superuser)@/\(database)?host=\(socketDirectory)&port=\(port)"
    }

    /// Makes a new, empty database and returns its URL.
    public func freshDatabase(host: String? = nil) throws -> String {
        let name = "t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(16).lowercased()
        try sql("CREATE DATABASE \(name)")
        return url(database: name, host: host)
    }

    /// Runs SQL through psql on the socket, as the superuser; returns its output.
    @discardableResult
    public func sql(_ statement: String, database: String = "postgres") throws -> String {
        let r = try ChildProcess.run([
            binaries + "/psql", "-h", socketDirectory, "-p", "\(port)", "-U", superuser, "-d", database,
            "-v", "ON_ERROR_STOP=1", "-tAc", statement,
        ])
        guard r.code == 0 else { throw LabError("psql \(statement): \(r.output)") }
        return r.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Restarts the server (every client connection is cut), as an operator's restart would.
    public func restart() throws {
        let r = try run([binaries + "/pg_ctl", "-D", directory + "/data", "-m", "fast", "-w", "-t", "60", "restart"])
        guard r.code == 0 else { throw LabError("pg_ctl restart: \(r.output)") }
    }

    /// Stops the server (`pg_ctl stop -m fast`: open transactions rolled back, every connection cut)
    /// until `resume()`; the folder stays.
    public func halt() throws {
        let r = try run([binaries + "/pg_ctl", "-D", directory + "/data", "-m", "fast", "-w", "-t", "60", "stop"])
        guard r.code == 0 else { throw LabError("pg_ctl stop: \(r.output)") }
    }

    /// Starts the server `halt()` stopped, with its options.
    public func resume() throws {
        let r = try run([binaries + "/pg_ctl", "-D", directory + "/data", "-o", options, "-l", directory + "/server.log", "-w", "-t", "60", "start"])
        guard r.code == 0 else { throw LabError("pg_ctl start: \(r.output)") }
    }

    /// The server's processes: the postmaster (from postmaster.pid) and its children.
    func processes() -> [pid_t] {
        guard let text = try? String(contentsOfFile: directory + "/data/postmaster.pid", encoding: .utf8),
            let first = text.split(separator: "\n").first, let master = pid_t(first)
        else { return [] }
        var pids = [master]
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = pid_t(entry), let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { continue }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            if fields.count > 1, pid_t(fields[1]) == master { pids.append(pid) }
        }
        return pids
    }

    /// Freezes the server (SIGSTOP to every process of it): connections stay open and nothing answers,
    /// as a server whose machine hangs. `thaw()` lets it go on where it stopped.
    public func freeze() { for pid in processes() { kill(pid, SIGSTOP) } }

    public func thaw() { for pid in processes() { kill(pid, SIGCONT) } }

    /// Stops the server now and removes its folder.
    public func stop() {
        _ = try? run([binaries + "/pg_ctl", "-D", directory + "/data", "-m", "immediate", "-w", "stop"])
        try? FileManager.default.removeItem(atPath: directory)
        Self.started.withLock { $0.removeAll { $0 === self } }
    }

    /// Runs a server program as the test account (inside `netns` when given).
    func run(_ argv: [String]) throws -> (code: Int32, output: String) {
        var command = argv
        if TestAccount.isRoot, let account = try? TestAccount.ensure(TestAccount.name) {
            command = ["/usr/bin/setpriv"] + TestAccount.dropArguments(account) + command
        }
        if let netns { command = ["/usr/sbin/ip", "netns", "exec", netns] + command }
        // The server's messages in English whatever the runner's language (the tests read them): glibc's
        // gettext reads LANGUAGE in any locale but exactly C, and C.UTF-8 is not exactly C.
        var env = CLI.englishEnvironment
        env["LC_ALL"] = "C.UTF-8"
        return try ChildProcess.run(command, environment: env)
    }

    static func findBinaries() -> String? { PostgresLab.binaries() }

    private static let started = Mutex<[TestPostgres]>([])
    private static let registerCleanup: Void = {
        atexit { TestPostgres.stopAll() }
    }()

    static func stopAll() {
        for server in started.withLock({ $0 }) { server.stop() }
    }
}
