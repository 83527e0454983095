/// Which languages a person asked for, as gettext reads the environment: `LANGUAGE` (a colon-separated
/// list of preferences), which counts only when the locale is not "C"/"POSIX"; else the first of
/// `LC_ALL`, `LC_MESSAGES`, `LANG`. Each locale name is tried as given and then by its language alone
/// (`de_AT.UTF-8@euro` → `de_AT`, `de`). Empty: English, the source language.
public enum Languages {
    public static func preferred(_ environment: [String: String]) -> [String] {
        let locale = ["LC_ALL", "LC_MESSAGES", "LANG"].lazy.compactMap { environment[$0] }.first { !$0.isEmpty } ?? ""
        let base = strip(locale)
        if base.isEmpty || base == "C" || base == "POSIX" { return [] }
        let asked = (environment["LANGUAGE"].flatMap { $0.isEmpty ? nil : $0 }?.split(separator: ":").map(String.init)) ?? [locale]
        var out: [String] = []
        for name in asked {
            let b = strip(name)
            guard !b.isEmpty, b != "C", b != "POSIX" else { continue }
            for candidate in [b, String(b.prefix { $0 != "_" })] where !out.contains(candidate) { out.append(candidate) }
        }
        return out
    }

    /// A locale name without its encoding and modifier: `de_AT.UTF-8@euro` → `de_AT`.
    static func strip(_ name: String) -> String {
        String(name.prefix { $0 != "." && $0 != "@" })
    }
}
