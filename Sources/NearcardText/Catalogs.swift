import Foundation

/// Where Nearcard's catalogs come from: installed the Linux way (`share/locale/LANG/LC_MESSAGES/
/// nearcard.mo` under the binary's own prefix, then /usr/local and /usr, so a translator's freshly
/// built catalog wins), else the ones built into the binary (`EmbeddedCatalogs`, made from po/ by
/// scripts/po-embed.py), which a binary run from the build tree (tests, `make demo`) uses.
public enum Catalogs {
    /// The gettext domain: the catalogs' file name.
    public static let domain = "nearcard"

    /// The translator for a process with this environment (`Languages.preferred`): English in the C
    /// locale and when no asked-for language has a catalog.
    public static func translator(environment: [String: String], executable: String = CommandLine.arguments.first ?? "") -> Translator {
        translator(languages: Languages.preferred(environment), executable: executable)
    }

    /// The translator for the first of `languages` (locale names, most wanted first) that has a catalog.
    public static func translator(languages: [String], executable: String = CommandLine.arguments.first ?? "") -> Translator {
        guard !languages.isEmpty else { return .english }
        let roots = searchRoots(executable: executable)
        return Translator(languages: languages) { language in
            if language == "en" || language.hasPrefix("en_") { return englishCatalog }
            for root in roots {
                let path = "\(root)/\(language)/LC_MESSAGES/\(domain).mo"
                if let data = FileManager.default.contents(atPath: path), data.count <= MOCatalog.maximumLength { return Array(data) }
            }
            return EmbeddedCatalogs.catalog(language)
        }
    }

    /// English is the source language: asking for it (`LANGUAGE=en:de`) stops the search there.
    /// An empty `.mo` file (no messages: every text is its source).
    static let englishCatalog: [UInt8] = {
        // magic, revision 0, 0 messages, both tables and the hash table at 28, hash size 0.
        [0x9504_12de, 0, 0, 28, 28, 0, 28].flatMap { (w: UInt32) in (0..<4).map { UInt8(truncatingIfNeeded: w >> (8 * $0)) } }
    }()

    /// The `share/locale` directories searched, in order: the binary's prefix (`PREFIX/bin/nearcard`
    /// → `PREFIX/share/locale`), /usr/local/share/locale, /usr/share/locale.
    static func searchRoots(executable: String) -> [String] {
        var roots: [String] = []
        let exe = URL(fileURLWithPath: executable).resolvingSymlinksInPath()
        let bin = exe.deletingLastPathComponent()
        if bin.lastPathComponent == "bin" { roots.append(bin.deletingLastPathComponent().appendingPathComponent("share/locale").path) }
        for r in ["/usr/local/share/locale", "/usr/share/locale"] where !roots.contains(r) { roots.append(r) }
        return roots
    }

    /// The languages with a catalog built into the binary.
    public static var embeddedLanguages: [String] { EmbeddedCatalogs.languages }
}
