import Foundation
import NearcardCrypto
import NearcardTestSupport
import Testing

/// `make install` / `make deb` lay nearcard out as Linux tools are: a stripped binary, a man page per
/// command, completions where bash, zsh and fish look, the docs and the example units
/// (scripts/install.sh, run here on the test build into a scratch root).
@Suite struct InstallTests {
    @Test func installsTheBinaryManPagesCompletionsAndDocs() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-install-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        let generator = CLI.builtExecutable.deletingLastPathComponent().appendingPathComponent("generate-manual").path
        try #require(FileManager.default.isExecutableFile(atPath: generator), "build it first: swift build --product generate-manual (make test does)")
        let script = CLI.packageRoot.appendingPathComponent("scripts/install.sh").path
        let r = try CLI.run(executable: "/usr/bin/env", ["GENERATE_MANUAL=\(generator)", script, CLI.builtExecutable.path, root, "/usr"])
        try #require(r.code == 0, "\(r.stderr)")
        let usr = root + "/usr"
        let binary = usr + "/bin/nearcard"
        #expect(FileManager.default.isExecutableFile(atPath: binary))
        let sections = try CLI.run(executable: "/usr/bin/readelf", ["-S", "-W", binary]).stdout
        #expect(!sections.contains(".symtab") && !sections.contains(".debug_info"), "stripped")
        #expect(try CLI.run(executable: binary, ["--version"]).code == 0, "the stripped binary still runs")

        // A man page per command and subcommand, each one a page man renders.
        let pages = try FileManager.default.contentsOfDirectory(atPath: usr + "/share/man/man1")
        for page in ["nearcard.1.gz", "nearcard.exchange.1.gz", "nearcard.listen.1.gz", "nearcard.contacts.delete.1.gz", "nearcard.qr.make.1.gz"] {
            #expect(pages.contains(page), "\(page) among \(pages.count) pages")
        }
        let rendered = try CLI.run(executable: "/usr/bin/env", ["MANWIDTH=100", "man", "-l", usr + "/share/man/man1/nearcard.exchange.1.gz"])
        #expect(rendered.code == 0 && rendered.stdout.contains("--yes") && rendered.stdout.contains("--timeout"), "\(rendered.stderr)")
        // The top page: Nearcard's, not BSD's; the commands listed; each exit status on its own; no
        // literal backticks from the help text.
        let top = try CLI.run(executable: "/usr/bin/env", ["MANWIDTH=100", "man", "-l", usr + "/share/man/man1/nearcard.1.gz"])
        #expect(top.code == 0 && top.stdout.contains("Nearcard General Commands Manual") && !top.stdout.contains("BSD"), "\(top.stdout.prefix(300))")
        #expect(top.stdout.contains("COMMANDS") && top.stdout.contains("exchange      Exchange cards with a peer on the LAN."), "\(top.stdout)")
        #expect(top.stdout.contains("EXIT STATUS") && top.stdout.contains("10    timed out"), "\(top.stdout)")
        #expect(!top.stdout.contains("`") && !rendered.stdout.contains("`"), "backticks are bold, not printed")
        // The synopsis is the command as typed; NAME is the page's own name, which apropos indexes.
        #expect(rendered.stdout.contains("nearcard exchange ["), "the synopsis: \(rendered.stdout.prefix(600))")
        for page in pages where page.hasSuffix(".1.gz") {
            let whatis = try CLI.run(executable: "/usr/bin/lexgrog", [usr + "/share/man/man1/" + page])
            let name = page.dropLast(".1.gz".count)
            #expect(whatis.code == 0 && whatis.stdout.contains("\"\(name) - "), "\(page) has a whatis entry: \(whatis.stdout)\(whatis.stderr)")
        }

        // Completions in the places bash-completion, zsh and fish read.
        let bash = usr + "/share/bash-completion/completions/nearcard"
        #expect(try CLI.run(executable: "/bin/bash", ["-n", bash]).code == 0, "the bash completion parses")
        #expect(try String(contentsOfFile: bash, encoding: .utf8).contains("exchange"))
        #expect(try String(contentsOfFile: usr + "/share/zsh/vendor-completions/_nearcard", encoding: .utf8).hasPrefix("#compdef nearcard"))
        #expect(try String(contentsOfFile: usr + "/share/fish/vendor_completions.d/nearcard.fish", encoding: .utf8).contains("complete -c 'nearcard'"))

        // The docs and the example bot.
        let docs = try FileManager.default.contentsOfDirectory(atPath: usr + "/share/doc/nearcard")
        #expect(Set(["README.md", "PROTOCOL.md", "SECURITY.md", "examples"]).isSubset(of: Set(docs)), "\(docs)")
        #expect(FileManager.default.fileExists(atPath: usr + "/share/doc/nearcard/examples/nearcard-bot.service"))
        #expect(FileManager.default.fileExists(atPath: usr + "/share/doc/nearcard/examples/desktop/nearcard-ui.service"))
        // The bot's unit runs the binary this install put in place and points at its docs; with the
        // paths read inside the scratch root, systemd-analyze verifies it.
        let unit = try String(contentsOfFile: usr + "/share/doc/nearcard/examples/nearcard-bot.service", encoding: .utf8)
        #expect(!unit.contains("/usr/local/") && unit.contains("ExecStart=/usr/bin/nearcard bot"), "\(unit)")
        #expect(
            unit.contains("Documentation=file:///usr/share/doc/nearcard/JSONL.md")
                && FileManager.default.fileExists(atPath: usr + "/share/doc/nearcard/JSONL.md"))
        let staged = root + "/nearcard-bot.service"
        try unit.replacingOccurrences(of: "/usr/bin/nearcard", with: usr + "/bin/nearcard").write(toFile: staged, atomically: true, encoding: .utf8)
        let verify = try CLI.run(executable: "/usr/bin/systemd-analyze", ["verify", staged])
        #expect(verify.code == 0, "\(verify.stdout)\(verify.stderr)")
        #expect(FileManager.default.isExecutableFile(atPath: usr + "/share/doc/nearcard/examples/run-bot.sh"), "run-bot.sh runs as documented")
        // The menu entry runs the web app, with its icon where desktops look.
        let entry = (try? String(contentsOfFile: usr + "/share/applications/nearcard.desktop", encoding: .utf8)) ?? ""
        #expect(entry.contains("Exec=nearcard ui") && entry.contains("Icon=nearcard"))
        #expect(FileManager.default.fileExists(atPath: usr + "/share/icons/hicolor/scalable/apps/nearcard.svg"))
    }

    /// `contacts show <TAB>` (and `contacts delete`, `message`) completes the book's names and ids, as the
    /// installed completion scripts ask the binary for them.
    @Test func aContactCompletes() throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        try cli.run(["contacts", "add", "--name", "Grace Hopper"])
        try cli.run(["contacts", "add", "--name", "Ada Lovelace"])
        for command in [["contacts", "show"], ["contacts", "delete"], ["message"]] {
            let r = try cli.run(["---completion"] + command + ["--", "positional@0", String(command.count + 1), "2", "nearcard"] + command + ["Gr"])
            #expect(r.code == 0 && r.stdout.split(separator: "\n").map(String.init) == ["Grace Hopper"], "\(command): \(r.stdout) \(r.stderr)")
        }
        let scripts = try CLI.run(executable: CLI.builtExecutable.path, ["--generate-completion-script", "bash"]).stdout
        #expect(scripts.contains("---completion contacts show -- positional@0"), "the bash script asks the binary")
    }

    /// The example bot's script takes the home as its first argument only when it is not an option, and
    /// hands every option to `nearcard bot` (`--metrics` is an option, not a home directory).
    @Test func theExampleBotScriptPassesOptionsOn() throws {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-runbot-\(UUID().uuidString)").path
        let cwd = FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-runbot-cwd-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: cwd, withIntermediateDirectories: true)
        defer {
            try? FileManager.default.removeItem(atPath: home)
            try? FileManager.default.removeItem(atPath: cwd)
        }
        let script = CLI.packageRoot.appendingPathComponent("examples/bot/run-bot.sh").path
        // Serves until killed: `timeout` stops it once it is up (SIGTERM drains and exits).
        let r = try CLI.run(
            executable: "/usr/bin/env",
            [
                "NEARCARD=\(CLI.builtExecutable.path)", "NEARCARD_HOME=\(home)", "PORT=0", "/bin/sh", "-c",
                "cd \(cwd) && timeout -s TERM 4 \(script) --no-discovery --metrics 127.0.0.1:9477; echo exit=$?",
            ])
        #expect(FileManager.default.fileExists(atPath: home + "/identity.json"), "the home from $NEARCARD_HOME: \(r.stdout) \(r.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: cwd).isEmpty, "no directory made of an option")
        #expect(!r.stderr.contains("Error:") && !r.stderr.contains("Usage:"), "the options reached nearcard bot: \(r.stderr)")
    }

    /// The options every command takes may come before the subcommand too.
    @Test func globalOptionsBeforeTheSubcommand() throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        try cli.run(["init", "--name", "Ada"])
        let id = try CLI.run(executable: CLI.executable.path, ["--home", cli.home.path, "id", "--json"])
        #expect(id.code == 0 && id.json["name"] == "Ada", "\(id.stderr)")
        // Commands that read no home take the global options too (README).
        let did = try #require(id.json["did"]?.stringValue)
        let resolved = try CLI.run(executable: CLI.executable.path, ["--home", cli.home.path, "--verbose", "did", "resolve", did])
        #expect(resolved.code == 0 && resolved.json["id"]?.stringValue == did, "\(resolved.stderr)")
        let verbose = try CLI.run(executable: CLI.executable.path, ["--verbose", "--home=" + cli.home.path, "contacts", "show", "nobody"])
        #expect(verbose.code == 2 && verbose.stderr.contains("exit 2"), "--verbose before the subcommand adds the detail: \(verbose.stderr)")
    }
}
