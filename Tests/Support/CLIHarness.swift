public import Foundation
public import NearcardCrypto
import NearcardProcess
import NearcardSimulation

/// Runs the real `nearcard` executable (built next to the test bundle) in a throw-away home.
public struct CLI: Sendable {
    public static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// What the tests run as `nearcard`: as an unprivileged account when the tests have root
    /// (TestAccount), the built binary itself otherwise.
    public static var executable: URL { URL(fileURLWithPath: TestAccount.nearcardCommand) }

    /// The built executable: in the same directory as the test bundle. Run it directly only where root
    /// is the point (building namespaces: `simulate --netns`, the demo script that drops to its own users).
    public static let builtExecutable: URL = {
        let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var dir = bundle.deletingLastPathComponent()
        if dir.lastPathComponent == "MacOS" { dir = dir.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent() }
        return dir.appendingPathComponent("nearcard")
    }()

    /// The project's virtualenv Python (scripts/setup-python.sh makes it; `make test` runs that).
    public static var python: String {
        let path = packageRoot.appendingPathComponent(".venv/bin/python3").path
        precondition(
            FileManager.default.isExecutableFile(atPath: path),
            "no .venv: run scripts/setup-python.sh (make test does) before these tests")
        return path
    }

    public struct Result: Sendable {
        public let code: Int32
        public let stdout: String
        public let stderr: String
        public var json: JSONValue { (try? JSONParser.parse(stdout)) ?? .null }

        /// The JSON array a listing command printed (`contacts`, `peers`, `inbox`, `outbox --json`). A command
        /// that failed, or printed something else, throws: it is never an empty list, so a check that
        /// something is absent can only pass when the command said so.
        public func list() throws -> [JSONValue] {
            guard code == 0, let items = json.arrayValue else {
                throw CLIResultError("expected a JSON list (exit \(code)): \(stderr.isEmpty ? String(stdout.prefix(500)) : stderr)")
            }
            return items
        }
    }

    public struct CLIResultError: Error, CustomStringConvertible {
        public let description: String
        public init(_ d: String) { description = d }
    }

    public let home: URL

    public init() throws {
        home = FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-cli-\(UUID().uuidString)")
    }

    public func cleanUp() {
        try? FileManager.default.removeItem(at: home)
        try? FileManager.default.removeItem(at: home.deletingLastPathComponent().appendingPathComponent("aux-\(home.lastPathComponent)"))
    }

    public var identityPath: String { home.appendingPathComponent("identity.json").path }
    public var secretsPath: String { home.appendingPathComponent("secret-keys.json").path }

    @discardableResult
    public func run(_ args: [String], stdin: String? = nil, env: [String: String] = [:]) throws -> Result {
        try CLI.run(executable: CLI.executable.path, args, stdin: stdin, env: ["NEARCARD_HOME": home.path].merging(env) { $1 })
    }

    /// Runs the built binary itself, with this home, as whoever runs the tests: only for commands whose
    /// point is root's work (`simulate` building network namespaces).
    @discardableResult
    public func runBuilt(_ args: [String], env: [String: String] = [:]) throws -> Result {
        try CLI.run(executable: CLI.builtExecutable.path, args, env: ["NEARCARD_HOME": home.path].merging(env) { $1 })
    }

    /// This process's environment without the variables that choose a language: the words a test
    /// reads are English whatever the runner's language (issue 52: the suite passes in the C locale
    /// and in German); a test asks for another language through `env`.
    public static var englishEnvironment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        for k in ["LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"] { environment.removeValue(forKey: k) }
        return environment
    }

    public static func run(executable: String, _ args: [String], stdin: String? = nil, env: [String: String] = [:]) throws -> Result {
        var environment = englishEnvironment
        environment.removeValue(forKey: "NEARCARD_PASSPHRASE_FILE")
        for (k, v) in env { environment[k] = v }
        SecretWatch.shared.learn(arguments: args, environment: env)
        let o = try ChildProcess.capture([executable] + args, environment: environment, stdin: stdin.map { Array($0.utf8) })
        let result = Result(code: o.code, stdout: String(decoding: o.stdout, as: UTF8.self), stderr: String(decoding: o.stderr, as: UTF8.self))
        // A command that made or unsealed keys: learn them now, then look for every known secret in what it printed.
        SecretWatch.shared.learn(arguments: args, environment: env)
        SecretWatch.shared.check(result.stdout, what: "the output of `\(URL(fileURLWithPath: executable).lastPathComponent) \(args.first ?? "")`")
        SecretWatch.shared.check(result.stderr, what: "the errors of `\(URL(fileURLWithPath: executable).lastPathComponent) \(args.first ?? "")`")
        return result
    }

    /// A folder beside the home for the test's own files (inputs, `--out` targets); the node's account may write there.
    public var auxiliary: URL {
        let dir = home.deletingLastPathComponent().appendingPathComponent("aux-\(home.lastPathComponent)")
        if !FileManager.default.fileExists(atPath: dir.path) {
            try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            TestAccount.give(dir.path)
        }
        return dir
    }

    /// Writes a file the test's person owns, readable by them alone (as a passphrase file must be).
    public func write(_ text: String, to name: String) throws -> String {
        let url = auxiliary.appendingPathComponent(name)
        try text.write(to: url, atomically: true, encoding: .utf8)
        chmod(url.path, 0o600)
        TestAccount.give(url.path)
        return url.path
    }
}

public func fileMode(_ path: String) -> Int {
    (try? FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) ?? -1
}

public func sha(_ path: String) -> String {
    Hex.encode(SHA256.hash([UInt8]((try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data())))
}
