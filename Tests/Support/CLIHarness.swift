import Foundation
import NearcardCrypto

/// Runs the real `nearcard` executable (built next to the test bundle) in a throw-away home.
public struct CLI: Sendable {
    public static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The built executable: in the same directory as the test bundle.
    public static let executable: URL = {
        let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var dir = bundle.deletingLastPathComponent()
        if dir.lastPathComponent == "MacOS" { dir = dir.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent() }
        return dir.appendingPathComponent("nearcard")
    }()

    /// The project's virtualenv Python (scripts/setup-python.sh makes it; `make test` runs that).
    public static var python: String {
        let path = packageRoot.appendingPathComponent(".venv/bin/python3").path
        precondition(FileManager.default.isExecutableFile(atPath: path),
                     "no .venv: run scripts/setup-python.sh (make test does) before these tests")
        return path
    }

    public struct Result: Sendable {
        public let code: Int32
        public let stdout: String
        public let stderr: String
        public var json: JSONValue { (try? JSONParser.parse(stdout)) ?? .null }
    }

    public let home: URL

    public init() throws {
        home = FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-cli-\(UUID().uuidString)")
    }

    public func cleanUp() { try? FileManager.default.removeItem(at: home) }

    public var identityPath: String { home.appendingPathComponent("identity.json").path }
    public var secretsPath: String { home.appendingPathComponent("secret-keys.json").path }

    @discardableResult
    public func run(_ args: [String], stdin: String? = nil, env: [String: String] = [:]) throws -> Result {
        try CLI.run(executable: CLI.executable.path, args, stdin: stdin, env: ["NEARCARD_HOME": home.path].merging(env) { $1 })
    }

    public static func run(executable: String, _ args: [String], stdin: String? = nil, env: [String: String] = [:]) throws -> Result {
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "NEARCARD_PASSPHRASE_FILE")
        for (k, v) in env { environment[k] = v }
        SecretWatch.shared.learn(arguments: args, environment: env)
        let o = try Subprocess.run(executable, args, environment: environment, stdin: stdin.map { Array($0.utf8) })
        let result = Result(code: o.code, stdout: String(decoding: o.stdout, as: UTF8.self), stderr: String(decoding: o.stderr, as: UTF8.self))
        // A command that made or unsealed keys: learn them now, then look for every known secret in what it printed.
        SecretWatch.shared.learn(arguments: args, environment: env)
        SecretWatch.shared.check(result.stdout, what: "the output of `\(URL(fileURLWithPath: executable).lastPathComponent) \(args.first ?? "")`")
        SecretWatch.shared.check(result.stderr, what: "the errors of `\(URL(fileURLWithPath: executable).lastPathComponent) \(args.first ?? "")`")
        return result
    }

    public func write(_ text: String, to name: String) throws -> String {
        try FileManager.default.createDirectory(at: home.deletingLastPathComponent().appendingPathComponent("aux-\(home.lastPathComponent)"), withIntermediateDirectories: true)
        let url = home.deletingLastPathComponent().appendingPathComponent("aux-\(home.lastPathComponent)").appendingPathComponent(name)
        try text.write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }
}

public func fileMode(_ path: String) -> Int {
    (try? FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) ?? -1
}

public func sha(_ path: String) -> String {
    Hex.encode(SHA256.hash([UInt8]((try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data())))
}
