import Foundation
import NearcardText

/// The words of this process: the first language the person asked for (`LANGUAGE`, `LC_ALL`,
/// `LC_MESSAGES`, `LANG`) that Nearcard has a catalog for, else English. A sentence the CLI prints for
/// a person goes through it, called as `t` or `t.plural` with the English text first (scripts/po-
/// extract.py collects those into po/nearcard.pot); JSON output, JSON lines, logs and the wire stay
/// English (machine-read).
let t = Words(Catalogs.translator(environment: ProcessInfo.processInfo.environment))

/// The process's translator as the CLI's files call it (`Translator`, without each file importing it).
struct Words: Sendable {
    let translator: Translator

    init(_ translator: Translator) { self.translator = translator }

    /// The language spoken (nil: English, the source).
    var language: String? { translator.language }

    func callAsFunction(_ id: String, context: String? = nil, _ arguments: String...) -> String {
        translator.text(id, context: context, arguments: arguments)
    }

    /// A sentence made below the CLI (an error's phrase) in the person's language.
    func say(_ phrase: Phrase) -> String { translator.say(phrase) }

    func plural(_ singular: String, _ plural: String, count: Int, context: String? = nil, _ arguments: String...) -> String {
        translator.plural(singular, plural, count: count, context: context, arguments: arguments)
    }
}

/// ArgumentParser's own words in a help text or usage error — headings, its built-in options, "default" —
/// in the person's language; a command's own words are translated where they are written.
enum HelpWords {
    static func translated(_ text: String) -> String {
        guard t.language != nil else { return text }
        var lines: [String] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            var l = line
            for (english, translated) in headings where l == english || l.hasPrefix(english + " ") {
                l = translated + l.dropFirst(english.count)
            }
            for (english, translated) in phrases { l = l.replacingOccurrences(of: english, with: translated) }
            for (pattern, template) in sentences {
                l = l.replacing(pattern) { match in
                    let values = (1..<match.output.count).map { match.output[$0].substring.map(String.init) ?? "" }
                    return t.translator.text(template, arguments: values)
                }
            }
            lines.append(l)
        }
        return lines.joined(separator: "\n")
    }

    static let headings: [(String, String)] = [
        ("OVERVIEW:", t("OVERVIEW:")), ("USAGE:", t("USAGE:")), ("ARGUMENTS:", t("ARGUMENTS:")), ("OPTIONS:", t("OPTIONS:")),
        ("SUBCOMMANDS:", t("SUBCOMMANDS:")), ("Error:", t("Error:")), ("Help:", t("Help:")), ("Usage:", t("Usage:")),
    ]

    /// ArgumentParser's usage errors, each with its values (an option, an argument) as placeholders.
    nonisolated(unsafe) static let sentences: [(Regex<AnyRegexOutput>, String)] = [
        (#"See '(.+)' for more information\.$"#, N_("See '%1$@' for more information.")),
        (#"Unknown option '(.+)'$"#, N_("Unknown option '%1$@'")),
        (#"Missing value for '(.+)'$"#, N_("Missing value for '%1$@'")),
        (#"Unexpected argument '(.+)'$"#, N_("Unexpected argument '%1$@'")),
        (#"(\d+) unexpected arguments: '(.+)'$"#, N_("%1$@ unexpected arguments: '%2$@'")),
        (#"Missing expected argument '(.+)'$"#, N_("Missing expected argument '%1$@'")),
        (#"Missing one of: '(.+)'$"#, N_("Missing one of: '%1$@'")),
        (#"The value '(.+)' is invalid for '(.+?)'(.*)$"#, N_("The value '%1$@' is invalid for '%2$@'%3$@")),
        (#"Missing required subcommand\.$"#, N_("Missing required subcommand.")),
    ].map { (try! Regex($0.0), $0.1) }

    static let phrases: [(String, String)] = [
        ("Show help information.", t("Show help information.")),
        ("Show the version.", t("Show the version.")),
        ("See 'nearcard help <subcommand>' for detailed help.", t("See 'nearcard help <subcommand>' for detailed help.")),
        ("<subcommand>", t("<subcommand>")),
        ("(default: ", t("(default: ")),
        ("(values: ", t("(values: ")),
        ("(default)", t("(default)")),
    ]
}
