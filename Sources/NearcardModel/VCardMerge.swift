import Foundation

/// A contact as an address book keeps it, and a three-way merge with what the person changed there
/// (CardDAV sync, docs/ADDRESSBOOK.md).
///
/// Nearcard *owns* the properties it writes: the fields the peer disclosed (N and a URL for each social
/// profile among them; X-SOCIALPROFILE, which it wrote before SOCIALPROFILE), the DID, the verification
/// status, UID, VERSION and PRODID. Everything else on the server's copy (NOTE, NICKNAME, CATEGORIES,
/// PHOTO, a second address, …) belongs to the person and is kept as the server has it.
extension VCard {
    /// The properties a Nearcard address-book card is made of (and only these are ever replaced).
    public static let ownedProperties: Set<String> =
        Set(CardField.allCases.map(\.vCardProperty)).union([
            "VERSION", "UID", "PRODID", "N", "URL", "X-SOCIALPROFILE", "X-NEARCARD-DID", "X-NEARCARD-VERIFICATION",
        ])

    /// The vCard 4.0 an address book gets for `contact`: what the peer disclosed, the DID and how it was
    /// verified; never Nearcard's local notes, tags or messages. `uid` is stable per contact and account.
    public static func addressBookCard(_ contact: Contact, uid: String) -> String {
        var text = serialize(contact.card, did: contact.didPublicKey, uid: uid)
        let extra = ["PRODID:-//Nearcard//Nearcard//EN", "X-NEARCARD-VERIFICATION:" + contact.verificationStatus.rawValue]
        text.removeLast("END:VCARD\r\n".count)
        return text + extra.map(fold).joined() + "END:VCARD\r\n"
    }

    /// One unfolded content line and its property name (group prefix dropped, upper-cased).
    public struct ContentLine: Sendable, Equatable {
        public let name: String
        public let text: String
    }

    /// The content lines of the first vCard in `text`, unfolded, BEGIN/END left out; nil when `text` is
    /// not one vCard (no BEGIN:VCARD … END:VCARD, a line without a property name).
    public static func contentLines(_ text: String) -> [ContentLine]? {
        var unfolded: [String] = []
        for raw in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\r\n" || $0 == "\n" || $0 == "\r" }) {
            if let first = raw.first, first == " " || first == "\t", !unfolded.isEmpty {
                unfolded[unfolded.count - 1] += raw.dropFirst()
            } else if !raw.isEmpty {
                unfolded.append(String(raw))
            }
        }
        guard unfolded.first?.uppercased() == "BEGIN:VCARD" else { return nil }
        var out: [ContentLine] = []
        for (i, line) in unfolded.enumerated().dropFirst() {
            if line.uppercased() == "END:VCARD" { return out }
            guard let property = try? parseLine(line, number: i + 1) else { return nil }
            out.append(ContentLine(name: property.name, text: line))
        }
        return nil
    }

    /// A content line as its meaning: the name, the parameters (names upper-cased, sorted) and the value
    /// unescaped. A server that stores a card in its own spelling (Radicale rewrites every card it is
    /// given: its order, its escapes, its parameter case) has not changed it.
    static func meaning(_ line: ContentLine) -> String {
        guard let p = try? parseLine(line.text, number: 0) else { return line.text }
        let parameters = p.parameters.map { "\($0.key.uppercased())=\($0.value.replacingOccurrences(of: "\"", with: ""))" }.sorted()
        return ([p.name] + parameters).joined(separator: ";") + ":" + unescape(p.value)
    }

    /// The first value of property `name` in a vCard, unescaped (NOTE, NICKNAME, UID, …).
    public static func value(of name: String, in text: String) -> String? {
        guard let line = contentLines(text)?.first(where: { $0.name == name }),
            let property = try? parseLine(line.text, number: 0)
        else { return nil }
        return unescape(property.value)
    }

    /// The result of merging Nearcard's card into the server's copy.
    public struct Merge: Sendable, Equatable {
        /// The vCard to write back.
        public let text: String
        /// Owned properties both sides changed since the last sync: the server's edit was kept.
        public let conflicts: [String]
    }

    /// Three-way merge per property name: `base` is what Nearcard last wrote, `ours` what it would write
    /// now, `theirs` the server's copy. An owned property the server left as `base` takes `ours`; one the
    /// server changed keeps the server's (and is a conflict when Nearcard changed it too); properties
    /// Nearcard does not own are always the server's. nil when `theirs` is not a vCard.
    public static func merge(base: String?, ours: String, theirs: String) -> Merge? {
        guard let theirLines = contentLines(theirs), let ourLines = contentLines(ours) else { return nil }
        let baseLines = base.flatMap(contentLines) ?? []
        // Compared by meaning, in any order; written as the side chosen spells it.
        func group(_ lines: [ContentLine], _ name: String) -> [String] { lines.filter { $0.name == name }.map(meaning).sorted() }
        func spelled(_ lines: [ContentLine], _ name: String) -> [String] { lines.filter { $0.name == name }.map(\.text) }
        var decided: [String: [String]] = [:]
        var conflicts: [String] = []
        let names = Set(ourLines.map(\.name)).union(theirLines.map(\.name)).union(baseLines.map(\.name)).intersection(ownedProperties)
        for name in names.sorted() {
            let (b, o, t) = (group(baseLines, name), group(ourLines, name), group(theirLines, name))
            if ["VERSION", "UID", "PRODID"].contains(name) || t == b || t == o {
                decided[name] = spelled(ourLines, name)
            } else {
                decided[name] = spelled(theirLines, name)
                if o != b { conflicts.append(name) }
            }
        }
        var out = ["BEGIN:VCARD"]
        var written = Set<String>()
        for line in theirLines {
            if let lines = decided[line.name] {
                if written.insert(line.name).inserted { out += lines }
            } else {
                out.append(line.text)
            }
        }
        // Owned properties the server's copy lacked, in Nearcard's order.
        for line in ourLines where !written.contains(line.name) {
            written.insert(line.name)
            out += decided[line.name] ?? []
        }
        out.append("END:VCARD")
        return Merge(text: out.map(fold).joined(), conflicts: conflicts)
    }

    /// The owned properties of a card, as text, to tell whether Nearcard has anything new to write.
    public static func ownedPart(_ text: String) -> [String] {
        (contentLines(text) ?? []).filter { ownedProperties.contains($0.name) && $0.name != "PRODID" }.map(meaning).sorted()
    }
}
