import Foundation
import NearcardImage

/// vCard 4.0 (RFC 6350) reading and writing for cards and contacts.
///
/// Read: FN (else N), the field table's properties (EMAIL, TEL, ORG, TITLE, PRONOUNS, …), social
/// profiles as RFC 9554's SOCIALPROFILE (`SERVICE-TYPE=` platform, `USERNAME=` handle, value URL, or
/// the handle with `VALUE=text`) or Apple's older X-SOCIALPROFILE (`TYPE=`, `X-USER=`), X-NEARCARD-SKILL,
/// NOTE; line folding, escapes and quoted parameters are handled. The first of each single-valued
/// property wins. Errors name the line.
///
/// Written besides the fields: N (the name split best effort: `structuredName`), and a URL for each
/// social profile that has one, which address books that know no SOCIALPROFILE show as a web page.
public enum VCard {
    /// Largest vCard file read.
    public static let maximumLength = 1 << 20

    public struct Entry: Sendable, Equatable {
        public var card: Card
        public var notes: String?

        public init(card: Card, notes: String? = nil) {
            self.card = card
            self.notes = notes
        }
    }

    /// Parses every vCard in `text`.
    public static func parse(_ text: String) throws(ModelError) -> [Entry] {
        guard text.utf8.count <= maximumLength else {
            throw ModelError(.limitExceeded, Phrase("the vCard file is larger than %1$@ bytes", String(maximumLength)))
        }
        // Unfold: a line beginning with a space or tab continues the previous one (RFC 6350 §3.2).
        var lines: [(number: Int, text: String)] = []
        var number = 0
        // "\r\n" is one Character in Swift, so split on both forms of line end.
        for raw in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\r\n" || $0 == "\n" || $0 == "\r" }) {
            number += 1
            let line = String(raw)
            if let first = line.first, first == " " || first == "\t", !lines.isEmpty {
                lines[lines.count - 1].text += line.dropFirst()
            } else if !line.isEmpty {
                lines.append((number, line))
            }
        }
        guard let first = lines.first, first.text.uppercased().hasPrefix("BEGIN:VCARD") else {
            throw ModelError(.invalidCard, Phrase("line %1$@: no BEGIN:VCARD here: this is not a vCard file", String(lines.first?.number ?? 1)))
        }
        var entries: [Entry] = []
        var current: [(Int, Property)]?
        for (n, line) in lines {
            let property = try parseLine(line, number: n)
            switch property.name {
            case "BEGIN":
                guard property.value.uppercased() == "VCARD" else {
                    throw ModelError(.invalidCard, Phrase("line %1$@: BEGIN:%2$@ is not BEGIN:VCARD", String(n), property.value))
                }
                guard current == nil else {
                    throw ModelError(.invalidCard, Phrase("line %1$@: BEGIN:VCARD inside another vCard (missing END:VCARD)", String(n)))
                }
                current = []
            case "END":
                guard let props = current else { throw ModelError(.invalidCard, Phrase("line %1$@: END without BEGIN:VCARD", String(n))) }
                entries.append(try build(props, endLine: n))
                current = nil
            default:
                guard current != nil else {
                    throw ModelError(.invalidCard, Phrase("line %1$@: \"%2$@\" outside BEGIN:VCARD … END:VCARD", String(n), property.name))
                }
                current!.append((n, property))
            }
        }
        if current != nil { throw ModelError(.invalidCard, Phrase("the last vCard has no END:VCARD (truncated file?)")) }
        guard !entries.isEmpty else { throw ModelError(.invalidCard, Phrase("no BEGIN:VCARD found: this is not a vCard file")) }
        return entries
    }

    struct Property {
        var name: String
        var parameters: [String: String]
        var value: String
    }

    static func parseLine(_ line: String, number n: Int) throws(ModelError) -> Property {
        // name *(;param) : value — a ':' inside a quoted parameter value does not end the name part.
        var inQuotes = false
        var colon: String.Index?
        for i in line.indices {
            let c = line[i]
            if c == "\"" {
                inQuotes.toggle()
            } else if c == ":" && !inQuotes {
                colon = i
                break
            }
        }
        guard let colon else { throw ModelError(.invalidCard, Phrase("line %1$@: no ':' between the property name and its value", String(n))) }
        let head = line[..<colon]
        let value = String(line[line.index(after: colon)...])
        var parts: [String] = []
        var part = ""
        inQuotes = false
        for c in head {
            if c == "\"" {
                inQuotes.toggle()
                continue
            }
            if c == ";" && !inQuotes {
                parts.append(part)
                part = ""
                continue
            }
            part.append(c)
        }
        parts.append(part)
        var name = parts[0].uppercased()
        if let dot = name.lastIndex(of: ".") { name = String(name[name.index(after: dot)...]) } // drop a group prefix
        guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" }) else {
            throw ModelError(.invalidCard, Phrase("line %1$@: \"%2$@\" is not a property name", String(n), parts[0]))
        }
        var params: [String: String] = [:]
        for p in parts.dropFirst() {
            let kv = p.split(separator: "=", maxSplits: 1).map(String.init)
            let key = kv[0].uppercased()
            let v = kv.count == 2 ? kv[1] : ""
            params[key] = params[key].map { $0 + "," + v } ?? v
        }
        return Property(name: name, parameters: params, value: value)
    }

    /// Undoes RFC 6350 §3.4 escaping.
    static func unescape(_ s: String) -> String {
        var out = ""
        var escaped = false
        for c in s {
            if escaped {
                switch c {
                case "n", "N": out.append("\n")
                default: out.append(c)
                }
                escaped = false
            } else if c == "\\" {
                escaped = true
            } else {
                out.append(c)
            }
        }
        return out
    }

    /// Splits a structured value on unescaped ';'.
    static func components(_ s: String) -> [String] {
        var out: [String] = []
        var cur = ""
        var escaped = false
        for c in s {
            if escaped {
                cur.append("\\")
                cur.append(c)
                escaped = false
                continue
            }
            if c == "\\" {
                escaped = true
                continue
            }
            if c == ";" {
                out.append(unescape(cur))
                cur = ""
                continue
            }
            cur.append(c)
        }
        out.append(unescape(cur))
        return out
    }

    /// The card's text fields by the vCard property that carries them.
    static let textField: [String: CardField] = Dictionary(uniqueKeysWithValues: CardField.textFields.map { ($0.vCardProperty, $0) })

    /// A text property's value as the card keeps it: ORG's first component (the organisation's name),
    /// TEL without a `tel:` scheme, others unescaped.
    static func textValue(_ field: CardField, _ raw: String) -> String {
        switch field.row.vCardForm {
        case .firstComponent: return components(raw).first ?? ""
        case .telephone:
            let v = unescape(raw)
            return v.lowercased().hasPrefix("tel:") ? String(v.dropFirst(4)) : v
        case .text: return unescape(raw)
        }
    }

    static func build(_ props: [(Int, Property)], endLine: Int) throws(ModelError) -> Entry {
        var texts: [CardField: String] = [:] // the first of each property wins
        var n: String?
        var note: String?
        var socials: [SocialProfile] = []
        // Apple's X-SOCIALPROFILE, read when the card has no SOCIALPROFILE (a card with both says the same twice).
        var olderSocials: [SocialProfile] = []
        var skills: [Skill] = []
        var photo: [UInt8]?
        var version: String?
        for (line, p) in props {
            if let field = textField[p.name] {
                if texts[field] == nil { texts[field] = textValue(field, p.value) }
                continue
            }
            switch p.name {
            case "VERSION": version = p.value
            case "N":
                let c = components(p.value)
                let given = c.count > 1 ? c[1] : ""
                let family = c[0]
                n = n ?? [given, family].filter { !$0.isEmpty }.joined(separator: " ")
            case "NOTE": note = note ?? unescape(p.value)
            case CardField.socialNetworks.vCardProperty:
                // RFC 9554: the URL as value (or the handle, VALUE=text); SERVICE-TYPE the platform.
                let value = unescape(p.value)
                let isText = p.parameters["VALUE"]?.lowercased() == "text"
                guard let platform = (p.parameters["SERVICE-TYPE"] ?? p.parameters["TYPE"])?.split(separator: ",").first.map(String.init) else {
                    throw ModelError(.invalidCard, Phrase("line %1$@: SOCIALPROFILE needs a SERVICE-TYPE= parameter naming the platform", String(line)))
                }
                let user = p.parameters["USERNAME"] ?? (isText ? value : value.split(separator: "/").last.map(String.init) ?? value)
                socials.append(SocialProfile(platform: platform, username: user, url: isText || value.isEmpty ? nil : value))
            case "X-SOCIALPROFILE":
                let url = unescape(p.value)
                guard let platform = p.parameters["TYPE"]?.split(separator: ",").first.map(String.init) else {
                    throw ModelError(.invalidCard, Phrase("line %1$@: X-SOCIALPROFILE needs a TYPE= parameter naming the platform", String(line)))
                }
                let user = p.parameters["X-USER"] ?? url.split(separator: "/").last.map(String.init) ?? url
                olderSocials.append(SocialProfile(platform: platform, username: user, url: url.isEmpty ? nil : url))
            case CardField.skills.vCardProperty:
                skills.append(Skill(name: unescape(p.value), category: p.parameters["X-CATEGORY"], proficiency: p.parameters["X-PROFICIENCY"]))
            case CardField.photo.vCardProperty:
                // Only a photo as Nearcard keeps one (a JPEG data: URI with no metadata, within the limit); another
                // app's (a URL, a PNG, a large one) is left on the address book's card, not read.
                if photo == nil, let bytes = try? Card.photo(dataURI: p.value), bytes.count <= Photo.maximumBytes, Photo.metadataProblem(bytes) == nil {
                    photo = bytes
                }
            default:
                continue // other properties (PHOTO, ADR, …) are not on Nearcard cards
            }
        }
        if let version, version != "4.0", version != "3.0" {
            throw ModelError(.invalidCard, Phrase("line %1$@: vCard VERSION %2$@ is not supported (4.0, or 3.0)", String(endLine), version))
        }
        guard let name = (texts[.name] ?? n).flatMap({ $0.isEmpty ? nil : $0 }) else {
            throw ModelError(.invalidCard, Phrase("the vCard ending at line %1$@ has no FN (formatted name)", String(endLine)))
        }
        var card = Card(name: name, socialNetworks: socials.isEmpty ? olderSocials : socials, skills: skills)
        card.photo = photo
        for field in CardField.textFields where field != .name { card[text: field] = texts[field].flatMap { $0.isEmpty ? nil : $0 } }
        do { try card.validate() } catch { throw ModelError(error.kind, Phrase("the vCard ending at line %1$@: %2$@", String(endLine), error.phrase)) }
        return Entry(card: card, notes: note)
    }

    // MARK: writing

    /// Words that begin a family name rather than end the given names ("Ludwig van Beethoven").
    static let familyParticles: Set<String> = [
        "van", "von", "de", "der", "den", "del", "della", "di", "da", "du", "des", "la", "le", "ter", "ten", "dos", "das", "bin", "ibn", "al",
    ]

    /// N's family and given names from a display name, best effort: the family name last ("Ada
    /// Lovelace": Lovelace; Ada), with the particles before it ("Ludwig van Beethoven": van Beethoven;
    /// Ludwig); a name written "Family, Given" says so itself; a name of one word (or in a script
    /// written without spaces) is all family name. Address books sort by it.
    public static func structuredName(_ name: String) -> (family: String, given: String) {
        let trimmed = name.trimmingCharacters(in: .whitespaces)
        if let comma = trimmed.firstIndex(of: ",") {
            return (
                String(trimmed[..<comma]).trimmingCharacters(in: .whitespaces),
                String(trimmed[trimmed.index(after: comma)...]).trimmingCharacters(in: .whitespaces)
            )
        }
        var words = trimmed.split(whereSeparator: \.isWhitespace).map(String.init)
        guard words.count > 1 else { return (trimmed, "") }
        var family = [words.removeLast()]
        while words.count > 1, let last = words.last, familyParticles.contains(last.lowercased()) { family.insert(words.removeLast(), at: 0) }
        return (family.joined(separator: " "), words.joined(separator: " "))
    }

    static func escape(_ s: String) -> String {
        var out = ""
        for c in s {
            switch c {
            case "\\": out += "\\\\"
            case ",": out += "\\,"
            case ";": out += "\\;"
            case "\n": out += "\\n"
            default: out.append(c)
            }
        }
        return out
    }

    static func quoteParameter(_ s: String) -> String {
        let clean = s.replacingOccurrences(of: "\"", with: "'")
        return clean.contains(where: { $0 == ";" || $0 == ":" || $0 == "," }) ? "\"\(clean)\"" : clean
    }

    /// Folds a content line at 75 octets without splitting a UTF-8 sequence (RFC 6350 §3.2).
    static func fold(_ line: String) -> String {
        var out = ""
        var count = 0
        for scalar in line.unicodeScalars {
            let size = String(scalar).utf8.count
            if count + size > 75 {
                out += "\r\n "
                count = 1
            }
            out.unicodeScalars.append(scalar)
            count += size
        }
        return out + "\r\n"
    }

    /// One vCard 4.0 for a card (and optional note / Nearcard extras).
    public static func serialize(_ card: Card, notes: String? = nil, did: String? = nil, uid: String? = nil) -> String {
        let n = structuredName(card.name)
        var lines = ["BEGIN:VCARD", "VERSION:4.0", "FN:" + escape(card.name), "N:" + escape(n.family) + ";" + escape(n.given) + ";;;"]
        if let uid { lines.append("UID:urn:uuid:" + uid.lowercased()) }
        for field in CardField.allCases where field != .name {
            switch field.kind {
            case .text:
                if let value = card[text: field] { lines.append(field.vCardProperty + ":" + escape(value)) }
            case .socialProfiles:
                for s in card.socialNetworks {
                    let head = "\(field.vCardProperty);SERVICE-TYPE=\(quoteParameter(s.platform));USERNAME=\(quoteParameter(s.username))"
                    lines.append(s.url.map { head + ":" + escape($0) } ?? head + ";VALUE=text:" + escape(s.username))
                }
                for url in card.socialNetworks.compactMap(\.url) { lines.append("URL:" + escape(url)) }
            case .skills:
                for s in card.skills {
                    var head = field.vCardProperty
                    if let c = s.category { head += ";X-CATEGORY=\(quoteParameter(c))" }
                    if let p = s.proficiency { head += ";X-PROFICIENCY=\(quoteParameter(p))" }
                    lines.append(head + ":" + escape(s.name))
                }
            case .photo:
                // vCard 4.0's data: URI (RFC 6350 §6.2.4).
                if let photo = card.photo { lines.append(field.vCardProperty + ":" + Card.dataURI(photo: photo)) }
            }
        }
        if let did { lines.append("X-NEARCARD-DID:" + escape(did)) }
        if let notes { lines.append("NOTE:" + escape(notes)) }
        lines.append("END:VCARD")
        return lines.map(fold).joined()
    }
}
