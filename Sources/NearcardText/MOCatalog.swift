/// A compiled gettext catalog (a GNU `.mo` file, as `msgfmt` writes it): each message's translation,
/// or its plural forms, and the catalog's plural rule. Read whole; nothing in it is trusted: a file
/// that is not a well-formed `.mo` is refused, never half read.
public struct MOCatalog: Sendable {
    /// Translations by key: `msgid`, or `msgctxt` U+0004 `msgid`. A plural message has its forms in order.
    let messages: [String: [String]]
    public let plural: PluralRule

    /// The most bytes a catalog may have (a complete catalog of Nearcard's strings is well under 1 MiB).
    public static let maximumLength = 8 << 20

    public struct Malformed: Error, Sendable, Equatable {
        public let why: String
    }

    public init(_ bytes: [UInt8]) throws(Malformed) {
        guard bytes.count >= 28, bytes.count <= Self.maximumLength else { throw Malformed(why: "not a .mo file (\(bytes.count) bytes)") }
        func word(_ at: Int, big: Bool) -> UInt32? {
            guard at >= 0, at + 4 <= bytes.count else { return nil }
            let b = bytes[at..<at + 4].map(UInt32.init)
            return big ? b[0] << 24 | b[1] << 16 | b[2] << 8 | b[3] : b[3] << 24 | b[2] << 16 | b[1] << 8 | b[0]
        }
        let big: Bool
        switch word(0, big: false) {
        case 0x9504_12de: big = false
        case 0xde12_0495: big = true
        default: throw Malformed(why: "not a .mo file (no magic number)")
        }
        guard let revision = word(4, big: big), revision >> 16 <= 1, let count = word(8, big: big), let originals = word(12, big: big),
            let translations = word(16, big: big), count <= 1 << 20
        else { throw Malformed(why: "an unknown .mo revision or a damaged header") }
        func string(table: UInt32, index: Int) throws(Malformed) -> [String] {
            let entry = Int(table) + index * 8
            guard let length = word(entry, big: big), let offset = word(entry + 4, big: big), Int(offset) + Int(length) <= bytes.count
            else { throw Malformed(why: "a string lies outside the file") }
            let raw = bytes[Int(offset)..<Int(offset) + Int(length)]
            guard let text = String(validating: raw, as: UTF8.self) else { throw Malformed(why: "a string is not UTF-8") }
            return text.split(separator: "\u{0}", omittingEmptySubsequences: false).map(String.init)
        }
        var messages: [String: [String]] = [:]
        var header = ""
        for i in 0..<Int(count) {
            let id = try string(table: originals, index: i)
            let forms = try string(table: translations, index: i)
            // The singular msgid (with its context) keys the message; the plural msgid is only the source's.
            guard let key = id.first else { continue }
            if key.isEmpty { header = forms.first ?? "" } else { messages[key] = forms }
        }
        self.messages = messages
        plural = try PluralRule(header: header)
    }

    /// The translation of `id` (in `context`), or nil when the catalog has none (or an empty one).
    public func text(_ id: String, context: String? = nil) -> String? {
        guard let t = messages[Self.key(id, context)]?.first, !t.isEmpty else { return nil }
        return t
    }

    /// The form for `n` of a plural message, or nil when the catalog has none.
    public func text(_ id: String, plural: String, count n: Int, context: String? = nil) -> String? {
        guard let forms = messages[Self.key(id, context)] else { return nil }
        let index = self.plural.form(for: n)
        guard index < forms.count, !forms[index].isEmpty else { return nil }
        return forms[index]
    }

    static func key(_ id: String, _ context: String?) -> String { context.map { $0 + "\u{4}" + id } ?? id }

    /// Every message without a context and its translation (a plural one's first form): what a page's
    /// script looks its words up in.
    public var singulars: [String: String] {
        var out: [String: String] = [:]
        for (key, forms) in messages where !key.contains("\u{4}") {
            if let first = forms.first, !first.isEmpty { out[key] = first }
        }
        return out
    }
}
