import Foundation
import NearcardProcess

#if canImport(Glibc)
    import Glibc
#endif

/// A throw-away PostgreSQL server for a simulated fleet (`simulate --bots N` without `--bots-store`),
/// from the machine's PostgreSQL packages: `initdb` into a folder of its own, `pg_ctl start` listening
/// on a Unix socket in that folder only (no TCP port: nothing reaches the network), trust
/// authentication for one user, no fsync. It holds nothing worth keeping and is removed by `stop()`.
/// PostgreSQL refuses to run as root: under root, the server runs as `nobody`.
public final class PostgresLab: @unchecked Sendable {
    public let directory: String
    let binaries: String
    let user = "nearcard"
    let port = 5432
    private var running = false

    /// Where PostgreSQL's server programs are (`/usr/lib/postgresql/VERSION/bin`, the newest), nil when
    /// the server is not installed.
    public static func binaries() -> String? {
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).compactMap(Int.init).sorted(by: >)
        for v in versions where access("\(root)/\(v)/bin/initdb", X_OK) == 0 { return "\(root)/\(v)/bin" }
        return nil
    }

    /// Makes and starts a server in a new folder under /tmp (the socket's path must stay short).
    public init() throws {
        guard let bin = Self.binaries() else {
            throw NetLab.Failure(
                description: "--bots needs a PostgreSQL book: PostgreSQL's server is not installed (apt-get install postgresql), or give --bots-store URL")
        }
        binaries = bin
        directory = "/tmp/nearcard-sim-pg-\(getpid())-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        if geteuid() == 0 { _ = try? ChildProcess.run([NetLab.tool("chown"), "nobody:nogroup", directory]) }
        do {
            try run([bin + "/initdb", "-D", directory + "/data", "-U", user, "--auth=trust", "--no-sync", "-E", "UTF8", "--no-instructions"], "initdb")
            let options =
                "-k \(directory) -p \(port) -c listen_addresses='' -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
            try run([bin + "/pg_ctl", "-D", directory + "/data", "-o", options, "-l", directory + "/server.log", "-w", "-t", "60", "start"], "pg_ctl start")
            running = true
            try run(
                [bin + "/psql", "-h", directory, "-p", "\(port)", "-U", user, "-d", "postgres", "-v", "ON_ERROR_STOP=1", "-qc", "CREATE DATABASE fleet"], "psql"
            )
        } catch {
            stop()
            throw error
        }
    }

    /// The book's URL: the database `fleet` over the socket.
    public var url: String { "postgres://\(user)@/fleet?host=\(directory)&port=\(port)" }

    /// Stops the server at once and removes its folder.
    public func stop() {
        if running { _ = try? run([binaries + "/pg_ctl", "-D", directory + "/data", "-m", "immediate", "-w", "stop"], "pg_ctl stop") }
        running = false
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Runs a server program (as `nobody` under root); throws with its output when it fails.
    private func run(_ argv: [String], _ what: String) throws {
        var command = argv
        if geteuid() == 0 { command = [NetLab.tool("setpriv"), "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"] + argv }
        var environment = ProcessInfo.processInfo.environment
        environment["LC_ALL"] = "C.UTF-8"
        let (code, output) = try ChildProcess.run(command, environment: environment)
        guard code == 0 else {
            let log = (try? String(contentsOfFile: directory + "/server.log", encoding: .utf8)) ?? ""
            throw NetLab.Failure(
                description: "the simulation's PostgreSQL server: \(what) failed: \(output.trimmingCharacters(in: .whitespacesAndNewlines)) \(log.suffix(400))")
        }
    }
}
