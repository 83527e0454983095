import Foundation
import NearcardCrypto
import NearcardTestSupport
import Testing

/// Issue 52: a walk of the CLI in the pseudo-locale `qps`, where every message of the catalogs comes out
/// bracketed and accented (⟦Ñó çárd ýét⟧). What is left outside the brackets was never put through the
/// catalogs: two English words in a row there are a sentence someone forgot. Names, options, commands in
/// backticks, paths and value lists are not words to translate and are passed over.
@Suite struct PseudoLocaleWalkTests {
    static let pseudo = ["LANGUAGE": "qps", "LC_ALL": "", "LANG": "C.UTF-8"]

    /// The lines of `text` that hold English outside the catalogs.
    static func untranslated(_ text: String) -> [String] {
        let outside = text.replacing(/⟦[^⟧]*⟧/, with: " ")
        return outside.split(separator: "\n").map(String.init).filter { line in
            // A usage line (`nearcard contacts list [--json]`) names the command and its options.
            if line.contains(/nearcard [a-z]/) { return false }
            let words =
                line
                .replacing(/`[^`]*`/, with: " ")
                .replacing(/(^|[\s("'])[-<\[$\/~][^\s]*/, with: " ")
            return words.contains(/[A-Za-z]{2,}\.? [A-Za-z]{2,}/)
        }
    }

    /// Every command's `--help` (the whole tree, as the parser dumps it).
    @Test func everyCommandsHelpIsInTheCatalogs() throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        let dump = try cli.run(["--experimental-dump-help"])
        var paths: [[String]] = []
        func walk(_ command: JSONValue, _ path: [String]) {
            paths.append(path)
            for sub in command["subcommands"]?.arrayValue ?? [] {
                if let name = sub["commandName"]?.stringValue { walk(sub, path + [name]) }
            }
        }
        walk(dump.json["command"] ?? .null, [])
        #expect(paths.count > 50, "the command tree: \(dump.stdout.prefix(300))")
        var left: [String] = []
        for path in paths {
            let r = try cli.run(path + ["--help"], env: Self.pseudo)
            #expect(r.code == 0, "\(path): \(r.stderr)")
            #expect(r.stdout.contains("⟦"), "\(path) --help is not in the pseudo-locale: \(r.stdout.prefix(200))")
            left += Self.untranslated(r.stdout + r.stderr).map { "nearcard \(path.joined(separator: " ")) --help: \($0)" }
        }
        #expect(left.isEmpty, "English outside the catalogs:\n\(left.joined(separator: "\n"))")
    }

    /// A person's first steps and the mistakes they make on the way: every line said is in the catalogs.
    @Test func aWalkThroughTheCommandsIsInTheCatalogs() throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        let garbage = try cli.write("not a card at all\n", to: "card.json")
        let steps: [[String]] = [
            ["card", "show"],
            ["init", "--name", "Ada"],
            ["init", "--name", "Ada"],
            ["id", "show"],
            ["card", "show"],
            ["card", "set", "--title", "Zeta9", "--email", "ada@example.org"],
            ["card", "show"],
            ["card", "set", "--email", "not-an-address"],
            ["card", "set", "--bogus", "x"],
            ["card", "fields"],
            ["card", "import", garbage],
            ["share"],
            ["share", "--fields", "name,title"],
            ["share", "--fields", "name,nonsense"],
            ["contacts", "list"],
            ["contacts", "add", "--name", "Grace"],
            ["contacts", "list"],
            ["contacts", "show", "Grace"],
            ["contacts", "show", "Nobody"],
            ["contacts", "--bogus"],
            ["message", "Grace", "hello"],
            ["outbox", "list"],
            ["inbox", "list"],
            ["trust", "list"],
            ["credentials", "list"],
            ["group", "list"],
            ["store", "info"],
            ["qr", "scan", "garbage-text"],
            ["exchange", "127.0.0.1:1", "--yes"],
            ["exchange", "192.0.2.1:70000", "--yes"],
            ["exchange", "[::1]"],
            ["did", "resolve", "did:key:zBogus"],
            ["jwt", "verify", "a.b.c"],
            ["exchnage", "Grace"],
        ]
        var left: [String] = []
        var said = 0
        for step in steps {
            let r = try cli.run(step, env: Self.pseudo)
            if (r.stdout + r.stderr).contains("⟦") { said += 1 }
            left += Self.untranslated(r.stdout + r.stderr).map { "nearcard \(step.joined(separator: " ")) (exit \(r.code)): \($0)" }
        }
        #expect(said >= steps.count - 2, "most steps say something in the pseudo-locale (\(said) of \(steps.count))")
        #expect(left.isEmpty, "English outside the catalogs:\n\(left.joined(separator: "\n"))")
    }
}
