/// Which languages a person asked for, as gettext reads the environment: `LANGUAGE` (a colon-separated
/// list of preferences), else the first of `LC_ALL`, `LC_MESSAGES`, `LANG`. A locale set to exactly "C"
/// or "POSIX" (`LC_ALL=C nearcard …`, what scripts do) means English whatever `LANGUAGE` says, as in
/// glibc's gettext (which honours `LANGUAGE` beside `C.UTF-8`); unlike it, `LANGUAGE` alone (no locale
/// set at all, as in a bare root shell) counts too: Nearcard writes UTF-8 either way. Each locale name is tried as given and then by its language alone
/// (`de_AT.UTF-8@euro` → `de_AT`, `de`). Empty: English, the source language.
public enum Languages {
    public static func preferred(_ environment: [String: String]) -> [String] {
        let locale = ["LC_ALL", "LC_MESSAGES", "LANG"].lazy.compactMap { environment[$0] }.first { !$0.isEmpty } ?? ""
        if locale == "C" || locale == "POSIX" { return [] }
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
