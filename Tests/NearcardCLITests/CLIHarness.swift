import Foundation
import NearcardCrypto
import Testing

/// Runs the real `nearcard` executable (built next to the test bundle) in a throw-away home.
struct CLI {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The built executable: in the same directory as the test bundle.
    static let executable: URL = {
        let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var dir = bundle.deletingLastPathComponent()
        if dir.lastPathComponent == "MacOS" { dir = dir.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent() }
        return dir.appendingPathComponent("nearcard")
    }()

    /// The project's virtualenv Python (scripts/setup-python.sh makes it; `make test` runs that).
    static var python: String {
        let path = packageRoot.appendingPathComponent(".venv/bin/python3").path
        precondition(FileManager.default.isExecutableFile(atPath: path),
                     "no .venv: run scripts/setup-python.sh (make test does) before these tests")
        return path
    }

    struct Result {
        let code: Int32
        let stdout: String
        let stderr: String
        var json: JSONValue { (try? JSONParser.parse(stdout)) ?? .null }
    }

    let home: URL

    init() throws {
        home = FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-cli-\(UUID().uuidString)")
    }

    func cleanUp() { try? FileManager.default.removeItem(at: home) }

    var identityPath: String { home.appendingPathComponent("identity.json").path }
    var secretsPath: String { home.appendingPathComponent("secret-keys.json").path }

    @discardableResult
    func run(_ args: [String], stdin: String? = nil, env: [String: String] = [:]) throws -> Result {
        try CLI.run(executable: CLI.executable.path, args, stdin: stdin, env: ["NEARCARD_HOME": home.path].merging(env) { $1 })
    }

    static func run(executable: String, _ args: [String], stdin: String? = nil, env: [String: String] = [:]) throws -> Result {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: executable)
        p.arguments = args
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "NEARCARD_PASSPHRASE_FILE")
        for (k, v) in env { environment[k] = v }
        p.environment = environment
        let out = Pipe(), err = Pipe(), input = Pipe()
        p.standardOutput = out
        p.standardError = err
        p.standardInput = input
        try p.run()
        if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
        try input.fileHandleForWriting.close()
        // Read both pipes concurrently so a large output cannot block the child.
        nonisolated(unsafe) var errData = Data()
        let errReader = Thread { errData = err.fileHandleForReading.readDataToEndOfFile() }
        errReader.start()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        while errReader.isExecuting || !errReader.isFinished { usleep(1000) }
        return Result(code: p.terminationStatus, stdout: String(decoding: outData, as: UTF8.self), stderr: String(decoding: errData, as: UTF8.self))
    }

    func write(_ text: String, to name: String) throws -> String {
        try FileManager.default.createDirectory(at: home.deletingLastPathComponent().appendingPathComponent("aux-\(home.lastPathComponent)"), withIntermediateDirectories: true)
        let url = home.deletingLastPathComponent().appendingPathComponent("aux-\(home.lastPathComponent)").appendingPathComponent(name)
        try text.write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }
}

func fileMode(_ path: String) -> Int {
    (try? FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) ?? -1
}

func sha(_ path: String) -> String {
    Hex.encode(SHA256.hash([UInt8]((try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data())))
}
