import ArgumentParser
import NearcardNode

#if canImport(Glibc)
    import Glibc
#endif

/// `nearcard`: exchange signed business cards in person, on the local network.
struct Nearcard: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "nearcard",
        abstract: t("Exchange signed business cards in person, on the local network."),
        discussion: t("Start with `nearcard init --name \"Your Name\"`. Data lives in $NEARCARD_HOME (default ~/.local/share/nearcard).")
            + "\n\n"
            + t(
                "Exit codes: 0 ok · 1 a check failed · 2 malformed input, or a name that matches no contact or several · 3 identity problem (none, exists, wrong passphrase, damaged key file) · 4 environment (avahi-daemon, D-Bus, a port) · 5 storage · 6 not found (no card, group, credential) · 7 declined · 8 peer unreachable · 9 connection lost · 10 timed out · 11 unconfirmed (the other node has not yet confirmed it kept your card) · 12 a server answered but not usably (an address book's: it failed, is full, or sent too much or not CardDAV) · 64 usage · 70 internal error · 130 interrupted."
            ),
        version: version,
        subcommands: [
            Init.self, Id.self, CardCommand.self, Share.self, Listen.self, Bot.self, Simulate.self, Peers.self, Exchange.self, Contacts.self,
            Message.self, Inbox.self, Outbox.self, QR.self, Present.self, Trust.self, Credentials.self, Group.self, Semaphore.self, DID.self, JWT.self,
            DoctorCommand.self, UICommand.self, StoreCommand.self, AddressBookCommand.self,
        ]
    )

    /// What `--version` says.
    static let version = "0.1.0"
}

@main
enum Main {
    static func main() async {
        // A closed pipe is an EPIPE from write (handled in Console), not a signal that kills us mid-line.
        signal(SIGPIPE, SIG_IGN)
        // Everything Nearcard writes is the user's alone unless a command says otherwise.
        umask(0o077)
        // `nearcard --version` alone answers before the command tree is built (what a script's check
        // runs; docs/PERFORMANCE.md "Commands": the tree's reflection was a quarter of it).
        if CommandLine.arguments.count == 2 && CommandLine.arguments[1] == "--version" {
            Console.out(Nearcard.version)
            exit(0)
        }
        EventLoops.sizeToAllowedCPUs()
        do {
            try refuseInvalidUTF8Arguments()
            let arguments = globalOptionsMoved(Array(CommandLine.arguments.dropFirst()))
            if let problem = CommandSuggestion.problem(in: arguments, root: Nearcard.self) {
                Console.err("nearcard: " + problem)
                exit(ExitCode.validationFailure.rawValue)
            }
            var command = try Nearcard.parseAsRoot(arguments)
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let error as CLIError where error.code == .ok {
            exit(0)
        } catch let error as ExitCode {
            exit(error.rawValue)
        } catch let error where error is CLIError || !isArgumentParserError(error) {
            let (code, _) = classify(error)
            let message = Console.visible(said(error))
            Console.err("nearcard: \(message)")
            // --verbose (anywhere on the line): what lay beneath, one line each.
            if CommandLine.arguments.dropFirst().contains("--verbose") {
                // (A cause the message already says is not said again.)
                for cause in causes(of: error).map(Console.visible) where !message.contains(cause) { Console.err("  " + t("caused by: %1$@", cause)) }
                Console.err("  " + t("(%1$@, exit %2$@)", String(reflecting: type(of: error)), String(code.rawValue)))
            }
            exit(code.rawValue)
        } catch {
            // ArgumentParser's help, version and usage errors, with its own words in the person's language.
            let text = HelpWords.translated(Nearcard.fullMessage(for: error))
            let code = Nearcard.exitCode(for: error)
            if !text.isEmpty {
                if code == .success { Console.out(text) } else { Console.err(text) }
            }
            exit(code.rawValue)
        }
    }

    /// Arguments reach Swift with invalid UTF-8 silently replaced (U+FFFD): a card field typed in another
    /// encoding would be stored changed. Such an argument is refused, naming it.
    static func refuseInvalidUTF8Arguments() throws {
        for i in 1..<Int(CommandLine.argc) {
            guard let raw = CommandLine.unsafeArgv[i], String(validatingCString: raw) == nil else { continue }
            let shown = String(CommandLine.arguments[i].prefix(40))
            let previous = i > 1 ? CommandLine.arguments[i - 1] : ""
            throw CLIError(
                .malformedInput,
                previous.hasPrefix("--")
                    ? t("the value of %1$@ (\"%2$@\") is not valid UTF-8 text: give it in UTF-8 (check the terminal's or file's encoding)", previous, shown)
                    : t("argument %1$@ (\"%2$@\") is not valid UTF-8 text: give it in UTF-8 (check the terminal's or file's encoding)", String(i), shown))
        }
    }

    /// `nearcard --home DIR --verbose contacts …` as well as `nearcard contacts … --home DIR`: the options
    /// every command takes may come before the subcommand too; they are moved to where the command reads
    /// them (the end, or before a `--` that ends the options).
    static func globalOptionsMoved(_ arguments: [String]) -> [String] {
        var rest = arguments[...]
        var global: [String] = []
        while let first = rest.first {
            if first == "--verbose" || first.hasPrefix("--home=") || first.hasPrefix("--store=") {
                global.append(first)
                rest = rest.dropFirst()
            } else if first == "--home" || first == "--store", rest.count >= 2 {
                global += rest.prefix(2)
                rest = rest.dropFirst(2)
            } else {
                break
            }
        }
        guard !global.isEmpty else { return arguments }
        var out = Array(rest)
        out.insert(contentsOf: global, at: out.firstIndex(of: "--") ?? out.endIndex)
        return out
    }

    /// ArgumentParser's own errors (help, version, usage) print their own text.
    static func isArgumentParserError(_ error: any Error) -> Bool {
        let type = String(reflecting: Swift.type(of: error))
        return type.hasPrefix("ArgumentParser.") || error is ValidationError || error is CleanExit
    }
}
