import Foundation

/// The words of one language: the first catalog of the languages a person asked for that exists, read
/// from where catalogs are installed (`share/locale/LANG/LC_MESSAGES/nearcard.mo`) or given whole (the
/// catalogs built into the binary); English — the source text — when there is none or a message is
/// not in it. Formats positional placeholders (`%1$@`, `%2$ld`), which translators may reorder.
public struct Translator: Sendable {
    public let language: String?
    let catalog: MOCatalog?

    public static let english = Translator(language: nil, catalog: nil)

    /// The language as a BCP 47 tag for a page's `lang` (`pt_BR` → `pt-BR`; English: `en`).
    public var languageTag: String { (language ?? "en").replacingOccurrences(of: "_", with: "-") }

    /// Whether the language is written right to left (Arabic, Hebrew, Persian, Urdu and their kin).
    public var isRightToLeft: Bool {
        let base = (language ?? "en").prefix { $0 != "_" && $0 != "-" }
        return ["ar", "he", "fa", "ur", "ps", "sd", "ug", "yi", "ckb", "dv"].contains(String(base))
    }

    /// Every message without a context and its translation (empty in English): a page's words.
    public var words: [String: String] { catalog?.singulars ?? [:] }

    public init(language: String?, catalog: MOCatalog?) {
        self.language = language
        self.catalog = catalog
    }

    /// The translator for `languages` (in order of preference), whose catalogs `load` returns by
    /// language (nil: none); a catalog that does not read is passed over, as if absent.
    public init(languages: [String], load: (String) -> [UInt8]?) {
        for language in languages {
            if let bytes = load(language), let catalog = try? MOCatalog(bytes) {
                self.init(language: language, catalog: catalog)
                return
            }
        }
        self = .english
    }

    /// `id` in this language, its placeholders filled with `arguments`.
    public func callAsFunction(_ id: String, context: String? = nil, _ arguments: String...) -> String {
        text(id, context: context, arguments: arguments)
    }

    /// `id` in this language, its placeholders filled with `arguments`.
    public func text(_ id: String, context: String? = nil, arguments: [String]) -> String {
        Self.format(catalog?.text(id, context: context) ?? id, arguments)
    }

    /// The form of `singular`/`plural` for `count` in this language (English's rule without a catalog),
    /// its placeholders filled with `arguments` (`%1$ld` is usually the count itself).
    public func plural(_ singular: String, _ plural: String, count: Int, context: String? = nil, _ arguments: String...) -> String {
        self.plural(singular, plural, count: count, context: context, arguments: arguments)
    }

    /// The form of `singular`/`plural` for `count`, its placeholders filled with `arguments`.
    public func plural(_ singular: String, _ plural: String, count: Int, context: String? = nil, arguments: [String]) -> String {
        let text = catalog?.text(singular, plural: plural, count: count, context: context) ?? (count == 1 ? singular : plural)
        return Self.format(text, arguments)
    }

    /// Fills `%N$@`, `%N$ld`, `%N$d`, `%N$s` with the N-th argument, and unnumbered `%@`, `%ld`, `%d`,
    /// `%s` with the next one; `%%` is a percent sign. A placeholder without an argument stays as it is
    /// (a catalog asking for more than the source gives shows it rather than failing).
    public static func format(_ text: String, _ arguments: [String]) -> String {
        var out = ""
        var next = 0
        var i = text.startIndex
        while i < text.endIndex {
            let c = text[i]
            guard c == "%", let j = text.index(i, offsetBy: 1, limitedBy: text.endIndex), j < text.endIndex else {
                out.append(c)
                i = text.index(after: i)
                continue
            }
            if text[j] == "%" {
                out.append("%")
                i = text.index(after: j)
                continue
            }
            // An optional position ("1$"), then a conversion: @, s, d, ld, lu, u.
            var k = j
            var position: Int?
            var digits = ""
            while k < text.endIndex, text[k].isASCII, text[k].isNumber {
                digits.append(text[k])
                k = text.index(after: k)
            }
            if !digits.isEmpty, k < text.endIndex, text[k] == "$" {
                position = Int(digits)
                k = text.index(after: k)
            } else {
                k = j
            }
            let rest = text[k...]
            guard let conversion = ["ld", "lu", "@", "s", "d", "u"].first(where: { rest.hasPrefix($0) }) else {
                out.append(c)
                i = j
                continue
            }
            let end = text.index(k, offsetBy: conversion.count)
            let index = position.map { $0 - 1 } ?? next
            if position == nil { next += 1 }
            if index >= 0, index < arguments.count { out += arguments[index] } else { out += text[i..<end] }
            i = end
        }
        return out
    }
}

/// Marks `message` for the catalogs where it is made, unchanged: it is translated where a face shows
/// it (the web app's script looks an error the node sent up in its words). gettext's `N_`, by its name.
// swift-format-ignore: AlwaysUseLowerCamelCase
public func N_(_ message: String) -> String { message }
