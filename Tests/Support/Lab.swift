public import Foundation
public import NearcardCrypto
public import NearcardProcess
public import NearcardSimulation

#if canImport(Glibc)
    import Glibc
#endif

/// A throw-away "laptop" for integration tests: a network namespace with its own D-Bus and
/// avahi-daemon (NearcardSimulation's NetLab, the lab `simulate` and the benchmarks use), removed with
/// everything started in it when the test lets go of it.
public final class Lab: @unchecked Sendable {
    /// The namespaces a lab (or a pair of labs) lives in: torn down, directory and all, with the last lab.
    final class Net: @unchecked Sendable {
        let lab: NetLab
        let root: String
        init(_ tag: String) throws {
            let unique = Lab.uniqueName(tag)
            root = FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-lab-\(unique)").path
            try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
            lab = NetLab(tag: unique, root: root)
        }
        deinit {
            lab.tearDown()
            try? FileManager.default.removeItem(atPath: root)
        }
    }

    private let net: Net
    public let space: NetLab.Space
    public var name: String { space.name }
    private let lock = NSLock()
    private var processes: [ChildProcess] = []
    private static let counter = NSLock()
    nonisolated(unsafe) private static var next = 0

    /// A unique, short tag (interface names derive from it and must stay under 16 characters).
    public static func uniqueName(_ tag: String) -> String {
        let n = counter.withLock { () -> Int in
            next += 1
            return next
        }
        return "n\(tag.prefix(2))\(getpid() % 100000)\(n)"
    }

    private init(net: Net, space: NetLab.Space) {
        self.net = net
        self.space = space
    }

    /// One namespace whose avahi-daemon serves its loopback (`publishesAddresses`: false for the
    /// doctor's privacy fix, `publish-addresses=no`).
    public convenience init(_ tag: String, publishesAddresses: Bool = true) throws {
        let net = try Net(tag)
        self.init(net: net, space: try net.lab.loopbackSpace(publishesAddresses: publishesAddresses))
    }

    /// Two namespaces joined by a veth pair (interfaces `nc-NAME`, 10.77.0.1 and 10.77.0.2), each with its
    /// own avahi-daemon on its end of the pair: two laptops on one cable.
    /// `family` restricts both to IPv4 (IPv6 disabled) or IPv6 (no IPv4 on the cable; fd77::1 and fd77::2).
    public static func pair(family: NetLab.Family = .both) throws -> (Lab, Lab) {
        let net = try Net("p")
        let (a, b) = try net.lab.pairedSpaces(family: family)
        return (Lab(net: net, space: a), Lab(net: net, space: b))
    }

    /// `count` namespaces on one bridge (addresses 10.99.0.1, 10.99.0.2, …, interface `sim0`), each with
    /// its own avahi-daemon on it: machines on one LAN segment.
    public static func bridged(_ count: Int) throws -> [Lab] {
        let net = try Net("b")
        return try net.lab.bridgedSpaces(count).map { Lab(net: net, space: $0) }
    }

    /// The command prefix that runs a program inside the namespace with its avahi-daemon reachable
    /// (for the Python drivers' --wrap).
    public var execPrefix: [String] { space.execPrefix }

    /// Runs a command inside the namespace and waits for it.
    @discardableResult
    public func run(_ args: [String], stdin: String? = nil, env: [String: String] = [:]) throws -> CLI.Result {
        try CLI.run(executable: execPrefix[0], Array(execPrefix.dropFirst()) + env.map { "\($0)=\($1)" } + args, stdin: stdin)
    }

    /// Runs `nearcard` inside the namespace with `home`.
    @discardableResult
    public func nearcard(_ args: [String], home: URL, stdin: String? = nil) throws -> CLI.Result {
        try run([CLI.executable.path] + args + ["--home", home.path], stdin: stdin)
    }

    /// Starts a long-running command inside the namespace; its output goes to `log`. It is killed
    /// when the lab goes.
    public func spawn(_ args: [String], log: URL) throws -> ChildProcess {
        let child = try ChildProcess(execPrefix[0], Array(execPrefix.dropFirst()) + args, log: log)
        lock.withLock { processes.append(child) }
        return child
    }

    /// Kills (SIGKILL) every process called `command` running inside this namespace, and no other: the
    /// pids come from `ip netns pids`, so labs of tests running at once are left alone.
    public func kill(named command: String) throws {
        let pids = try CLI.run(executable: NetLab.tool("ip"), ["netns", "pids", name]).stdout.split(whereSeparator: \.isNewline)
        for pid in pids {
            let comm = (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
            if comm == command, let p = Int32(pid) { Glibc.kill(p, SIGKILL) }
        }
    }

    /// Starts a long-running command inside the namespace with a stdin to write and a stdout to read
    /// (its stderr goes to `log`), e.g. `listen --jsonl`. It is killed when the lab goes.
    public func converse(_ args: [String], log: URL) throws -> ChildProcess {
        SecretWatch.shared.learn(arguments: args, environment: [:])
        let child = try ChildProcess(execPrefix + args, environment: CLI.englishEnvironment, log: log.path, pipes: true)
        lock.withLock { processes.append(child) }
        return child
    }

    /// Starts `nearcard listen` for `home` and waits until it is listening and published; returns its port.
    public func listen(home: URL, _ args: [String] = [], log: URL) throws -> (ChildProcess, Int) {
        let p = try spawn([CLI.executable.path, "listen", "--home", home.path, "--port", "0"] + args, log: log)
        let deadline = Date().addingTimeInterval(15)
        var port: Int?
        while Date() < deadline {
            let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            if port == nil, let range = text.range(of: "Listening on port ") {
                port = Int(text[range.upperBound...].prefix { $0.isNumber })
            }
            if let port, args.contains("--no-discovery") || text.contains("Published on the LAN") { return (p, port) }
            if !p.isRunning { throw LabError("listen exited: \(text)") }
            usleep(50_000)
        }
        throw LabError("listen did not start: \((try? String(contentsOf: log, encoding: .utf8)) ?? "")")
    }

    /// Starts `nearcard ui` for `home` and waits until it serves; returns the address it printed (with
    /// its token).
    public func ui(home: URL, port: Int, log url: URL, _ extra: [String] = []) throws -> String {
        let p = try spawn([CLI.executable.path, "ui", "--home", home.path, "--no-browser", "--port", "0", "--ui-port", String(port)] + extra, log: url)
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            let text = (try? String(contentsOf: url, encoding: .utf8)) ?? ""
            if let range = text.range(of: "Nearcard's page: ") {
                return String(text[range.upperBound...].prefix { !$0.isNewline })
            }
            if !p.isRunning { throw LabError("ui exited: \(text)") }
            usleep(100_000)
        }
        throw LabError("ui did not start: \((try? String(contentsOf: url, encoding: .utf8)) ?? "")")
    }

    /// The port in the JSON-lines `started` event a node (`bot`, `listen --jsonl`) wrote to `log`,
    /// waiting up to `timeout` seconds for it.
    public static func startedPort(in log: URL, timeout: TimeInterval = 15) throws -> Int {
        let deadline = Date().addingTimeInterval(timeout)
        repeat {
            for line in ((try? String(contentsOf: log, encoding: .utf8)) ?? "").split(separator: "\n") where line.hasPrefix("{") {
                if let e = try? JSONParser.parse(String(line)), e["event"] == "started", let port = e["port"]?.integerValue { return Int(port) }
            }
            usleep(50_000)
        } while Date() < deadline
        throw LabError("the node did not start within \(Int(timeout)) s: \((try? String(contentsOf: log, encoding: .utf8)) ?? "")")
    }

    /// The namespace's IPv4 address on its veth end (a pair's), or 127.0.0.1.
    public var vethIPv4: String { space.ipv4 ?? "127.0.0.1" }

    deinit {
        let running = lock.withLock { processes }
        for p in running { p.kill(SIGKILL) }
        // What the nodes logged holds none of the secrets the tests know of.
        for p in running {
            if let text = try? String(contentsOfFile: p.log, encoding: .utf8) {
                SecretWatch.shared.check(text, what: "the log \(URL(fileURLWithPath: p.log).lastPathComponent)")
            }
        }
        // The namespaces go with the last lab that shares them (a pair's two): Net's deinit.
    }
}

extension ChildProcess {
    /// A long-running command with its output (stdout and stderr) to `log`.
    public convenience init(_ path: String, _ args: [String], log: URL) throws {
        SecretWatch.shared.learn(arguments: args, environment: [:])
        try self.init([path] + args, environment: CLI.englishEnvironment, log: log.path, pipes: false)
    }

    /// Sends it a signal if it still runs.
    public func kill(_ signal: Int32 = SIGTERM) { self.signal(signal) }
}

public struct LabError: Error, CustomStringConvertible {
    public let description: String
    public init(_ d: String) { description = d }
}

/// A Nearcard home with an identity and a card, for integration tests.
public struct TestPerson: Sendable {
    public let cli: CLI
    public var home: URL { cli.home }

    /// The identity `init` made (read once, right after it).
    public let did: String
    public let fingerprint: String

    public init(name: String, card: [String] = []) throws {
        cli = try CLI()
        let i = try cli.run(["init", "--name", name])
        guard i.code == 0 else { throw LabError("init failed: \(i.stderr)") }
        if !card.isEmpty {
            let c = try cli.run(["card", "set", "--name", name] + card)
            guard c.code == 0 else { throw LabError("card set failed: \(c.stderr)") }
        }
        let id = try cli.run(["id", "--json"])
        guard id.code == 0, let did = id.json["did"]?.stringValue, let fingerprint = id.json["fingerprint"]?.stringValue else {
            throw LabError("id --json failed (exit \(id.code)): \(id.stderr)")
        }
        self.did = did
        self.fingerprint = fingerprint
    }

    /// The contact book as `contacts --json` lists it. A listing that fails throws: it is never an
    /// empty book, so "nothing was stored" can only pass when the command says so.
    public func contacts() throws -> [JSONValue] {
        let r = try cli.run(["contacts", "--json"])
        guard r.code == 0, let list = r.json.arrayValue else {
            throw LabError("contacts --json failed (exit \(r.code)): \(r.stderr.isEmpty ? r.stdout : r.stderr)")
        }
        return list
    }
}
