import Foundation
import NearcardTestSupport
import Testing

/// How a failure reads: one line that names the input and the way out, the exit code README lists,
/// and with --verbose what lay beneath.
@Suite struct ErrorReportingTests {
    @Test func anUnreachablePeerIsOneLineAndVerboseAddsTheCause() throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        try cli.run(["init", "--name", "Ada"])
        // Port 1 on loopback: nothing listens, the connection is refused at once.
        let plain = try cli.run(["exchange", "127.0.0.1:1", "--yes"])
        #expect(plain.code == 8, "a peer nobody answers for has its own exit code: \(plain.stderr)")
        let lines = plain.stderr.split(separator: "\n")
        #expect(
            lines.count == 1 && lines[0] == "nearcard: cannot connect to 127.0.0.1:1: nothing accepts connections there (connection refused)",
            "the address once: \(plain.stderr)")

        let verbose = try cli.run(["exchange", "127.0.0.1:1", "--yes", "--verbose"])
        #expect(verbose.code == 8)
        let detail = verbose.stderr.split(separator: "\n")
        #expect(detail.first == lines.first, "the same one line first: \(verbose.stderr)")
        #expect(verbose.stderr.contains("NodeError") && verbose.stderr.contains("exit 8"), "the kind of error is named: \(verbose.stderr)")
        // The cause here (the refused address) is in the line already: --verbose does not say it twice.
        #expect(
            !detail.dropFirst().contains { $0.contains("caused by") && lines[0].contains($0.replacingOccurrences(of: "  caused by: ", with: "")) },
            "\(verbose.stderr)")
    }

    /// Text shaped like HOST:PORT that is not one is said to be malformed (exit 2), not looked up as a
    /// peer's name on the LAN.
    /// A port someone else holds: the person reads what happened and what to do, not the library's
    /// `bind(descriptor:…)` and errno.
    /// A mistyped command is named with the command it most likely meant (exit 64), not read as
    /// stray arguments; a mistyped subcommand is not handed to the default one.
    /// `listen` without an identity says only that (and how to make one), not first how requests would
    /// be answered by a node that cannot start.
    @Test func listenWithoutAnIdentitySaysOnlyThat() throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        let r = try cli.run(["listen", "--no-discovery"])
        #expect(r.code == 3, "\(r.stderr)")
        #expect(r.stderr.split(separator: "\n").count == 1 && r.stderr.contains("no identity in") && !r.stderr.contains("no terminal"), "\(r.stderr)")
    }

    /// Issue 52: the help, an error and the parser's own words in the language the environment asks
    /// for (German and Arabic here, from the catalogs built into the binary); English in the C locale.
    @Test func helpAndErrorsSpeakTheLanguageAskedFor() throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        let help = try cli.run(["--help"], env: ["LANGUAGE": "de", "LC_ALL": "", "LANG": ""])
        #expect(help.code == 0)
        for words in [
            "ÜBERSICHT: Signierte Visitenkarten persönlich tauschen", "UNTERBEFEHLE:", "Karten mit einem Gegenüber im lokalen Netz tauschen.",
            "Hilfe anzeigen.",
        ] {
            #expect(help.stdout.contains(words), "\(words) in: \(help.stdout)")
        }
        #expect(!help.stdout.contains("OVERVIEW:") && !help.stdout.contains("Exchange cards with a peer"), "\(help.stdout)")
        let typo = try cli.run(["exchnage", "Bob"], env: ["LANGUAGE": "", "LC_ALL": "", "LANG": "de_DE.UTF-8"])
        #expect(
            typo.code == 64
                && typo.stderr == "nearcard: unbekannter Befehl \"exchnage\"; meinten Sie \"nearcard exchange\"? (nearcard --help listet sie auf)\n",
            "\(typo.stderr)")
        let usage = try cli.run(["exchange", "--yess", "Bob"], env: ["LANGUAGE": "de"])
        #expect(usage.code == 64 && usage.stderr.hasPrefix("Fehler:") && usage.stderr.contains("Aufruf:"), "\(usage.stderr)")
        let arabic = try cli.run(["--help"], env: ["LANGUAGE": "ar", "LC_ALL": "", "LANG": "ar_EG.UTF-8"])
        #expect(arabic.stdout.contains("الأوامر الفرعية:") && arabic.stdout.contains("تبادل البطاقات مع نظير على الشبكة المحلية."), "\(arabic.stdout)")
        // The pseudo-locale (every catalog message bracketed and accented): the top-level help and a
        // mistyped command have no English words left outside the brackets but names and options.
        for arguments in [["--help"], ["exchnage", "Bob"]] {
            let r = try cli.run(arguments, env: ["LANGUAGE": "qps"])
            let outside = (r.stdout + r.stderr).replacing(/⟦[^⟧]*⟧/, with: "")
            #expect(outside.firstMatch(of: /[A-Za-z]{2,} [A-Za-z]{2,}/) == nil, "\(arguments): words outside the catalogs: \(outside)")
            #expect((r.stdout + r.stderr).contains("⟦"), "\(arguments)")
        }
        // A locale set to C is English whatever LANGUAGE says (what scripts set); so is a language with no catalog.
        for env in [["LANGUAGE": "de", "LC_ALL": "C"], ["LANGUAGE": "", "LC_ALL": "", "LANG": "ja_JP.UTF-8"]] {
            let english = try cli.run(["--help"], env: env)
            #expect(english.stdout.hasPrefix("OVERVIEW: Exchange signed business cards in person"), "\(env): \(english.stdout)")
        }
    }

    @Test func aMistypedCommandSuggestsTheOneMeant() throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        try cli.run(["init", "--name", "Ada"])
        let cases: [([String], String)] = [
            (["exchnage", "Bob"], "nearcard: unknown command \"exchnage\"; did you mean \"nearcard exchange\"? (nearcard --help lists them)"),
            (
                ["contacts", "shwo", "Bob"],
                "nearcard: \"nearcard contacts\" has no subcommand \"shwo\"; did you mean \"nearcard contacts show\"? (nearcard contacts --help lists them)"
            ),
            (["--home", cli.home.path, "lisen"], "nearcard: unknown command \"lisen\"; did you mean \"nearcard listen\"? (nearcard --help lists them)"),
            (["qr", "mkae"], "nearcard: \"nearcard qr\" has no subcommand \"mkae\"; did you mean \"nearcard qr make\"? (nearcard qr --help lists them)"),
        ]
        for (arguments, line) in cases {
            let r = try cli.run(arguments)
            #expect(r.code == 64 && r.stderr == line + "\n", "\(arguments): \(r.code) \(r.stderr)")
        }
        let far = try cli.run(["frobnicate"])
        #expect(far.code == 64 && far.stderr.hasPrefix("nearcard: unknown command \"frobnicate\"; the commands are init, id, card, "), "\(far.stderr)")
        // Words a default subcommand reads, options and help are left to the parser as before.
        #expect(try cli.run(["contacts", "--json"]).code == 0)
        #expect(try cli.run(["help", "exchange"]).code == 0)
        #expect(try cli.run(["exchange", "--yess", "Bob"]).stderr.contains("Did you mean '--yes'?"))
    }

    /// §3: a presence period SHOULD NOT exceed 900 s; a longer one keeps a node linkable longer.
    @Test func aPresencePeriodOverFifteenMinutesIsRefused() throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        try cli.run(["init", "--name", "Ada"])
        let r = try cli.run(["listen", "--presence-rotation", "901", "--no-discovery"])
        #expect(r.code == 64 && r.stderr.contains("--presence-rotation must be between 1 and 900 seconds"), "\(r.stderr)")
    }

    /// Seconds are numbers: nan and the infinities, which Double's parser takes and every range check
    /// written as "below or above" lets through (`--presence-rotation nan` announced every 2 s), are
    /// refused wherever a number of seconds (or a time) is read, naming the option.
    @Test func nanAndInfinityAreNoNumberOfSeconds() throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        try cli.run(["init", "--name", "Ada"])
        let options: [([String], String)] = [
            (["listen", "--no-discovery", "--presence-rotation"], "--presence-rotation"),
            (["listen", "--no-discovery", "--consent-timeout"], "--consent-timeout"),
            (["listen", "--no-discovery", "--grace"], "--grace"), (["listen", "--no-discovery", "--probe-summary"], "--probe-summary"),
            (["bot", "--check", "--policy", "/dev/null", "--grace"], "--grace"), (["exchange", "Bob", "--timeout"], "--timeout"),
            (["exchange", "Bob", "--connect-budget"], "--connect-budget"), (["peers", "--wait"], "--wait"), (["doctor", "--timeout"], "--timeout"),
            (["message", "Bob", "hi", "--wait"], "--wait"), (["outbox", "--send", "--wait"], "--wait"),
            (["jwt", "verify", "x", "--leeway"], "--leeway"), (["jwt", "verify", "x", "--at"], "--at"),
            (["simulate", "--peers", "2", "--timeout"], "--timeout"), (["simulate", "--peers", "2", "--idle"], "--idle"),
        ]
        for (argv, option) in options {
            for value in ["nan", "inf", "-infinity"] {
                let r = try cli.run(argv + [value])
                #expect(r.code == 64 && r.stderr.contains(option), "\(argv) \(value): \(r.code) \(r.stderr)")
            }
        }
    }

    @Test func aTakenPortIsSaidInWords() throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        try cli.run(["init", "--name", "Ada"])
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = INADDR_ANY
        addr.sin_port = 0
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        try withUnsafeMutablePointer(to: &addr) { p in
            try p.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                guard bind(fd, sa, len) == 0, listen(fd, 1) == 0, getsockname(fd, sa, &len) == 0 else { throw POSIXError(.EADDRINUSE) }
            }
        }
        let port = Int(UInt16(bigEndian: addr.sin_port))
        let r = try cli.run(["listen", "--port", "\(port)", "--no-discovery", "--accept", "all"])
        #expect(r.code == 4, "\(r.stderr)")
        let last = r.stderr.split(separator: "\n").last.map(String.init)
        #expect(
            last == "nearcard: port \(port) is in use — another nearcard listen? Use --port to choose another (--port 0 picks a free one)",
            "\(r.stderr)")
        #expect(!r.stderr.contains("errno") && !r.stderr.contains("descriptor"))
        // The same port for --metrics: said in words too.
        let metrics = try cli.run(["listen", "--port", "0", "--no-discovery", "--accept", "all", "--metrics", "127.0.0.1:\(port)"])
        #expect(
            metrics.code == 4 && metrics.stderr.contains("cannot serve metrics on 127.0.0.1:\(port): the port is in use")
                && !metrics.stderr.contains("errno"), "\(metrics.stderr)")
        // What can never work is a usage error, said before anything starts.
        let bad = try cli.run(["listen", "--port", "0", "--no-discovery", "--accept", "all", "--metrics", "nope"])
        #expect(bad.code == 64 && bad.stderr.contains("--metrics nope is not HOST:PORT"), "\(bad.stderr)")
        // An interface this machine does not have (yet: a service may start before its Wi-Fi) is said.
        let missing = try cli.run(["listen", "--port", "\(port)", "--no-discovery", "--accept", "all", "--interface", "nosuchif0"])
        #expect(missing.stderr.contains("--interface nosuchif0: this machine has no such interface now"), "\(missing.stderr)")
    }

    @Test func malformedAddressesAreSaidToBe() throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        try cli.run(["init", "--name", "Ada"])
        for (text, says) in [
            ("1.2.3.4:99999", "port must be a number from 1 to 65535"), ("host:", "port must be"),
            (":7447", "no host before the colon"), ("[::1]7447", "[ADDRESS]:PORT"),
        ] {
            let r = try cli.run(["exchange", text, "--yes"])
            #expect(r.code == 2 && r.stderr.contains(says) && !r.stderr.contains("avahi"), "\(text): \(r.stderr)")
        }
    }

    /// A negative number given to a numeric option is read as its value and refused for its range, not
    /// taken for an option ("Missing value for '--timeout'").
    @Test func aNegativeNumberIsOutOfRangeNotMissing() throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        for (args, says) in [
            (["exchange", "127.0.0.1:7447", "--timeout", "-1"], "--timeout must be more than 0 and at most 600 seconds"),
            (["listen", "--consent-timeout", "-5"], "--consent-timeout must be more than 0"),
            (["simulate", "--peers", "-3"], "--peers"),
        ] {
            let r = try cli.run(args)
            #expect(r.code == 64 && r.stderr.contains(says) && !r.stderr.contains("Missing value"), "\(args): \(r.stderr)")
        }
    }

    /// A card field in another encoding than UTF-8 is refused, naming the option, not stored with
    /// replacement characters.
    @Test func argumentsThatAreNotUTF8AreRefused() throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        try cli.run(["init", "--name", "Ada"])
        let script = """
            import subprocess, sys
            r = subprocess.run([sys.argv[1], "card", "set", "--name", b"Ren\\xe9e"], capture_output=True, text=True)
            print(r.returncode); print(r.stderr.strip())
            """
        let r = try CLI.run(executable: CLI.python, ["-c", script, CLI.executable.path], env: ["NEARCARD_HOME": cli.home.path])
        let lines = r.stdout.split(separator: "\n").map(String.init)
        #expect(
            lines.first == "2" && lines.last?.contains("the value of --name") == true && lines.last?.contains("not valid UTF-8") == true,
            "\(r.stdout) \(r.stderr)")
        #expect(try cli.run(["card", "show"]).code != 0 || !(try cli.run(["card", "show"]).stdout.contains("Ren")), "nothing was stored")
    }

    /// An input echoed in an error reaches the terminal without its control characters: an escape
    /// sequence (retitling the window, recolouring text) is shown as its code, never sent.
    @Test func controlCharactersInAnEchoedInputAreShownNotSent() throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        try cli.run(["init", "--name", "Ada"])
        let script = """
            import subprocess, sys
            r = subprocess.run([sys.argv[1], "qr", "scan", b"\\xff\\x1b]0;PWNED\\x07\\x1b[31mred"], capture_output=True)
            print(r.returncode, b"\\x1b" in r.stderr, b"\\x07" in r.stderr, b"\\\\x1b]0;PWNED" in r.stderr)
            """
        let r = try CLI.run(executable: CLI.python, ["-c", script, CLI.executable.path], env: ["NEARCARD_HOME": cli.home.path])
        #expect(r.stdout == "2 False False True\n", "\(r.stdout) \(r.stderr)")
    }
}
