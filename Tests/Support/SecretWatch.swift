import Foundation
import NearcardCrypto
import Testing

/// Watches everything the tests make `nearcard` print for secrets: after every run, the secret keys
/// of every home seen so far (read from their unsealed key files) and every passphrase handed over
/// in a `--passphrase-file` are looked for, in base64url, base64 and hex, in that run's stdout and
/// stderr, and in the logs of the nodes a lab started. A hit is a test failure naming the secret's
/// home or file, never the secret.
public final class SecretWatch: @unchecked Sendable {
    public static let shared = SecretWatch()
    private let lock = NSLock()
    private var secrets: [String: String] = [:] // encoding → where it came from

    /// Learns the secrets a command's arguments and environment point at (its home's key file, a passphrase file).
    public func learn(arguments: [String], environment: [String: String]) {
        var homes: [String] = []
        if let h = environment["NEARCARD_HOME"] { homes.append(h) }
        for (i, a) in arguments.enumerated() {
            if a == "--home", i + 1 < arguments.count { homes.append(arguments[i + 1]) }
            if a.hasPrefix("--home=") { homes.append(String(a.dropFirst(7))) }
            if a == "--passphrase-file", i + 1 < arguments.count { learnPassphrase(file: arguments[i + 1]) }
        }
        if let f = environment["NEARCARD_PASSPHRASE_FILE"] { learnPassphrase(file: f) }
        for home in homes { learnKeys(home: home) }
    }

    func learnKeys(home: String) {
        guard let data = FileManager.default.contents(atPath: home + "/secret-keys.json"),
            let json = try? JSONParser.parse(Array(data)), json["protection"]?.stringValue == "none",
            let keys = json["keys"]?.objectValue
        else { return }
        for (name, value) in keys {
            guard let text = value.stringValue, let bytes = try? Base64.urlDecode(text), bytes.count >= 16 else { continue }
            add(bytes, from: "the \(name) key of \(home)")
        }
    }

    func learnPassphrase(file: String) {
        guard let data = FileManager.default.contents(atPath: file) else { return }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .newlines)
        guard text.count >= 8 else { return } // too short to search for without false alarms
        lock.withLock { secrets[text] = "the passphrase in \(file)" }
    }

    func add(_ bytes: [UInt8], from origin: String) {
        // A 24-character prefix of each encoding: long enough never to occur by chance.
        let encodings = [Base64.urlEncode(bytes), Base64.encode(bytes), Hex.encode(bytes)].map { String($0.prefix(24)) }
        lock.withLock { for e in encodings { secrets[e] = origin } }
    }

    /// Records a test failure for every known secret in `text`.
    public func check(_ text: String, what: String) {
        let known = lock.withLock { secrets }
        for (secret, origin) in known where text.contains(secret) {
            Issue.record("\(what) contains \(origin)")
        }
    }
}
