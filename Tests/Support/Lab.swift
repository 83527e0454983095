import Foundation
import NearcardCrypto

/// A throw-away "laptop" for integration tests: a network namespace with its own D-Bus and
/// avahi-daemon (scripts/lab.sh), removed by name when the test ends.
public final class Lab: @unchecked Sendable {
    public let name: String
    private static let script = CLI.packageRoot.appendingPathComponent("scripts/lab.sh").path
    private static let counter = NSLock()
    nonisolated(unsafe) private static var next = 0
    private var processes: [Spawned] = []

    /// A unique, short namespace name (veth names derive from it and must stay under 16 characters).
    public static func uniqueName(_ tag: String) -> String {
        let n = counter.withLock { () -> Int in
            next += 1
            return next
        }
        return "n\(tag.prefix(2))\(getpid() % 100000)\(n)"
    }

    /// Creates the namespace; avahi is restricted to `interfaces` (default: its loopback).
    public init(_ tag: String, interfaces: [String] = []) throws {
        name = Lab.uniqueName(tag)
        let r = try CLI.run(executable: Lab.script, ["up", name] + interfaces)
        guard r.code == 0 else { throw LabError("lab.sh up \(name) failed: \(r.stderr)") }
    }

    /// Joins two labs with a veth pair: 10.77.0.1 (`a`, interface nc-A) and 10.77.0.2 (`b`).
    public static func link(_ a: Lab, _ b: Lab) throws {
        let r = try CLI.run(executable: script, ["link", a.name, b.name])
        guard r.code == 0 else { throw LabError("lab.sh link failed: \(r.stderr)") }
    }

    /// Two namespaces joined by a veth pair, each with its own avahi-daemon on its end of the pair.
    public static func pair() throws -> (Lab, Lab) {
        let an = uniqueName("a"), bn = uniqueName("b")
        let a = try Lab(named: an, interfaces: ["nc-\(an)"])
        let b = try Lab(named: bn, interfaces: ["nc-\(bn)"])
        try link(a, b)
        return (a, b)
    }

    private init(named: String, interfaces: [String]) throws {
        name = named
        let r = try CLI.run(executable: Lab.script, ["up", name] + interfaces)
        guard r.code == 0 else { throw LabError("lab.sh up \(name) failed: \(r.stderr)") }
    }

    /// Runs a command inside the namespace and waits for it.
    @discardableResult
    public func run(_ args: [String], stdin: String? = nil, env: [String: String] = [:]) throws -> CLI.Result {
        try CLI.run(executable: Lab.script, ["exec", name, "env"] + env.map { "\($0)=\($1)" } + args, stdin: stdin)
    }

    /// Runs `nearcard` inside the namespace with `home`.
    @discardableResult
    public func nearcard(_ args: [String], home: URL, stdin: String? = nil) throws -> CLI.Result {
        try run([CLI.executable.path] + args + ["--home", home.path], stdin: stdin)
    }

    /// Starts a long-running command inside the namespace; its output goes to `log`. It is killed
    /// when the lab goes.
    public func spawn(_ args: [String], log: URL) throws -> Spawned {
        let s = try Spawned(Lab.script, ["exec", name] + args, log: log)
        processes.append(s)
        return s
    }

    /// Starts `nearcard listen` for `home` and waits until it is listening and published; returns its port.
    public func listen(home: URL, _ args: [String] = [], log: URL) throws -> (Spawned, Int) {
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

    /// The namespace's IPv4 address on its veth end, when linked.
    public var vethIPv4: String { name.hasPrefix("na") ? "10.77.0.1" : "10.77.0.2" }

    deinit {
        for p in processes { p.kill(SIGKILL) }
        // What the nodes logged holds none of the secrets the tests know of.
        for p in processes {
            if let text = try? String(contentsOf: p.log, encoding: .utf8) {
                SecretWatch.shared.check(text, what: "the log \(p.log.lastPathComponent)")
            }
        }
        _ = try? CLI.run(executable: Lab.script, ["down", name])
    }
}

public struct LabError: Error, CustomStringConvertible {
    public let description: String
    public init(_ d: String) { description = d }
}

/// A Nearcard home with an identity and a card, for integration tests.
public struct TestPerson: Sendable {
    public let cli: CLI
    public var home: URL { cli.home }

    public init(name: String, card: [String] = []) throws {
        cli = try CLI()
        let i = try cli.run(["init", "--name", name])
        guard i.code == 0 else { throw LabError("init failed: \(i.stderr)") }
        if !card.isEmpty {
            let c = try cli.run(["card", "set", "--name", name] + card)
            guard c.code == 0 else { throw LabError("card set failed: \(c.stderr)") }
        }
    }

    public func contacts() throws -> [JSONValue] { try cli.run(["contacts", "--json"]).json.arrayValue ?? [] }
    public var did: String { (try? cli.run(["id", "--json"]).json["did"]?.stringValue) ?? "" }
    public var fingerprint: String { (try? cli.run(["id", "--json"]).json["fingerprint"]?.stringValue) ?? "" }
}
