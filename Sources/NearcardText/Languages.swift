import Foundation

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

    /// The languages an HTTP `Accept-Language` header asks for, most wanted first (RFC 9110 §12.5.4:
    /// q-values, ties in the order given; `q=0` and `*` are not asked for), each as a locale name and
    /// then by its language alone (`de-AT` → `de_AT`, `de`). At most 16 are read.
    public static func accepted(_ header: String) -> [String] {
        var ranges: [(tag: String, q: Double, order: Int)] = []
        for (i, part) in header.split(separator: ",").prefix(16).enumerated() {
            let pieces = part.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let tag = pieces.first, !tag.isEmpty, tag != "*",
                tag.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") })
            else { continue }
            var q = 1.0
            for p in pieces.dropFirst() where p.lowercased().hasPrefix("q=") { q = Double(p.dropFirst(2)) ?? 0 }
            if q > 0 { ranges.append((tag, q, i)) }
        }
        var out: [String] = []
        for r in ranges.sorted(by: { ($0.q, -$0.order) > ($1.q, -$1.order) }) {
            let parts = r.tag.split(separator: "-")
            let language = parts[0].lowercased()
            let region = parts.dropFirst().first { $0.count == 2 }.map { "_" + $0.uppercased() } ?? ""
            for candidate in [language + region, language] where !out.contains(candidate) { out.append(candidate) }
        }
        return out
    }

    /// A language's name in that language, for a menu of languages (the code itself when unknown).
    public static func autonym(_ code: String) -> String {
        let names = [
            "ar": "العربية", "de": "Deutsch", "en": "English", "es": "Español", "fr": "Français", "he": "עברית", "it": "Italiano",
            "ja": "日本語", "nl": "Nederlands", "pl": "Polski", "pt": "Português", "pt_BR": "Português (Brasil)", "ru": "Русский",
            "tr": "Türkçe", "uk": "Українська", "zh_CN": "中文（简体）",
        ]
        return names[code] ?? code
    }

    /// A locale name without its encoding and modifier: `de_AT.UTF-8@euro` → `de_AT`.
    static func strip(_ name: String) -> String {
        String(name.prefix { $0 != "." && $0 != "@" })
    }
}
