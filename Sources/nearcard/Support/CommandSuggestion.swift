import ArgumentParser
import NearcardModel

/// A mistyped command word (`nearcard exchnage Bob`, `nearcard contacts shwo Bob`) named as what it is,
/// with the command it most likely meant — ArgumentParser would read it as a stray argument ("2
/// unexpected arguments") or hand it to a default subcommand whose usage then makes no sense.
enum CommandSuggestion {
    /// The line to print for the first word of `arguments` that should name a subcommand and names
    /// none, or nil when the words are fine (or ArgumentParser should judge them: options, help).
    static func problem(in arguments: [String], root: any ParsableCommand.Type) -> String? {
        var command = root
        var path = [name(of: root)]
        for word in arguments {
            // Options, and what follows them, are ArgumentParser's to judge (it suggests option names).
            if word.hasPrefix("-") || word == "help" { return nil }
            let subcommands = command.configuration.subcommands
            guard !subcommands.isEmpty else { return nil }
            if let next = subcommands.first(where: { names(of: $0).contains(word) }) {
                command = next
                path.append(name(of: next))
                continue
            }
            let known = subcommands.map { name(of: $0) }
            let near = closest(to: word, among: subcommands.flatMap { names(of: $0) })
            // A command with a default subcommand hands it the words it does not know (`contacts`
            // is `contacts list`): only a near miss of a subcommand's name is a typo there.
            if command.configuration.defaultSubcommand != nil && near == nil { return nil }
            let typed = path.joined(separator: " ")
            if let near {
                let suggestion = (path + [near]).joined(separator: " ")
                return path.count == 1
                    ? t("unknown command \"%1$@\"; did you mean \"%2$@\"? (%3$@ --help lists them)", word, suggestion, typed)
                    : t("\"%1$@\" has no subcommand \"%2$@\"; did you mean \"%3$@\"? (%1$@ --help lists them)", typed, word, suggestion)
            }
            return path.count == 1
                ? t("unknown command \"%1$@\"; the commands are %2$@", word, known.joined(separator: ", "))
                : t("\"%1$@\" has no subcommand \"%2$@\"; the subcommands are %3$@", typed, word, known.joined(separator: ", "))
        }
        return nil
    }

    static func names(of command: any ParsableCommand.Type) -> [String] {
        [name(of: command)] + command.configuration.aliases
    }

    /// A command's name as ArgumentParser derives it: its configuration's, else its type's name in
    /// kebab case (`RotatePresence` is `rotate-presence`).
    static func name(of command: any ParsableCommand.Type) -> String {
        if let name = command.configuration.commandName { return name }
        var out = ""
        for c in String(describing: command) {
            if c.isUppercase, !out.isEmpty { out.append("-") }
            out += c.lowercased()
        }
        return out
    }

    /// The name nearest to `word` within two edits (a swap of neighbours counts as one), if any; ties
    /// go to the earlier name.
    static func closest(to word: String, among names: [String]) -> String? {
        let scored = names.map { (name: $0, distance: distance(word.lowercased(), $0)) }.filter { $0.distance <= 2 }
        return scored.min { $0.distance < $1.distance }?.name
    }

    /// Optimal string alignment distance (`Spelling.distance`, shared with the node's peer names).
    static func distance(_ a: String, _ b: String) -> Int { Spelling.distance(a, b) }
}
