import Foundation
import NearcardCrypto
import NearcardImage
import NearcardModel
import Testing

/// Every serializer reads the card field table (docs/ARCHITECTURE.md "Adding a card field"): these
/// tests go over `CardField.allCases`, so a field added to the table is checked by each of them
/// without a line here, and a serializer that lists fields by hand and misses it fails.
@Suite struct CardFieldTableTests {
    /// A card holding `field` (and the name every card has), with a value no other field has.
    static func card(with field: CardField) -> Card {
        var card = Card(name: "Nora Field")
        switch field.kind {
        case .text: if field != .name { card[text: field] = "the \(field.rawValue) value" }
        case .socialProfiles: card.socialNetworks = [SocialProfile(platform: "mastodon", username: "nora", url: "https://example.org/@nora")]
        case .skills: card.skills = [Skill(name: "Weaving", category: "Craft", proficiency: "expert")]
        case .photo: card.photo = Self.photo(shade: 40)
        }
        return card
    }

    /// A small square JPEG of one shade, as Nearcard encodes one (no metadata).
    static func photo(shade: UInt8) -> [UInt8] {
        try! JPEG.encodeRGB(width: 32, height: 32, pixels: [UInt8](repeating: shade, count: 32 * 32 * 3), quality: 80)
    }

    @Test(arguments: CardField.allCases) func nearcardJSONCarriesTheField(_ field: CardField) throws {
        let card = Self.card(with: field)
        #expect(card.value(of: field) != nil)
        #expect(card.json[field.rawValue] == card.value(of: field))
        #expect(try Card(json: card.json) == card)
        #expect(card.presentFields == [.name, field])
        #expect(try Card(json: card.json).value(of: field) == card.value(of: field))
    }

    @Test(arguments: CardField.allCases) func filteringKeepsExactlyTheChosenFields(_ field: CardField) {
        var full = Card(name: "Nora Field")
        for f in CardField.allCases { full.copy(f, from: Self.card(with: f)) }
        #expect(full.presentFields == Set(CardField.allCases))
        #expect(full.filtered(to: [field]) == Self.card(with: field))
        #expect(full.filtered(to: []).presentFields == [.name], "the name always stays")
    }

    @Test(arguments: CardField.allCases) func vCardCarriesTheField(_ field: CardField) throws {
        let card = Self.card(with: field)
        let text = VCard.serialize(card)
        #expect(text.contains("\r\n" + field.vCardProperty), "\(field.vCardProperty) is written")
        #expect(try VCard.parse(text).map(\.card) == [card])
    }

    @Test(arguments: CardField.allCases) func contactJSONShowsTheField(_ field: CardField) {
        let contact = Contact(card: Self.card(with: field), source: .qrCode, verificationStatus: .verified, receivedAt: Date(timeIntervalSince1970: 0))
        #expect(contact.json[field.rawValue] == Self.card(with: field).value(of: field))
        // Absent fields are still members: null for text, [] for lists.
        for other in CardField.allCases where other != field && other != .name {
            #expect(contact.json[other.rawValue] == ([.socialProfiles, .skills].contains(other.kind) ? .array([]) : .null))
        }
    }

    @Test(arguments: CardField.allCases.filter { $0 != .name }) func mergeTakesTheField(_ field: CardField) {
        let now = Date(timeIntervalSince1970: 100)
        let existing = Contact(card: Card(name: "Nora Field"), source: .proximity, verificationStatus: .verified, receivedAt: Date(timeIntervalSince1970: 0))
        // An unverified card fills a field the contact lacks …
        var incoming = Contact(card: Self.card(with: field), source: .qrCode, verificationStatus: .unverified, receivedAt: now)
        let filled = ContactMerge.merge(existing: existing, incoming: incoming, now: now)
        #expect(filled.changed == [field])
        #expect(filled.contact.card == Self.card(with: field))
        // … but does not change one it has; a verified card does.
        var other = Card(name: "Nora Field")
        switch field.kind {
        case .text: other[text: field] = "another value"
        case .socialProfiles: other.socialNetworks = [SocialProfile(platform: "mastodon", username: "nora2")]
        case .skills: other.skills = [Skill(name: "Weaving", category: "Art")]
        case .photo: other.photo = Self.photo(shade: 200)
        }
        incoming.card = other
        #expect(ContactMerge.merge(existing: filled.contact, incoming: incoming, now: now).changed == [])
        incoming.verificationStatus = .verified
        let refreshed = ContactMerge.merge(existing: filled.contact, incoming: incoming, now: now)
        #expect(refreshed.changed == [field])
        #expect(refreshed.contact.card.value(of: field) == other.value(of: field))
    }

    /// The rows are whole and distinct, and version 2 is what it always was: the first seven fields,
    /// whatever rows are added (a version-2 peer requires exactly those).
    @Test func theTableIsWholeAndVersionTwoStaysSeven() {
        #expect(CardField.table.map(\.field) == CardField.allCases, "one row a field, in the card's order")
        #expect(Set(CardField.table.map(\.option)).count == CardField.table.count)
        #expect(Set(CardField.table.map(\.displayRank)).count == CardField.table.count)
        #expect(
            CardField.table.allSatisfy {
                $0.since >= 2 && $0.maximumCharacters > 0
                    && ($0.kind == .photo ? $0.maximumCharacters == Photo.maximumBytes : $0.maximumCharacters <= Card.Limits.textLength)
            })
        #expect(CardField.fields(ofVersion: 2).map(\.rawValue) == ["name", "email", "phone", "company", "title", "socialNetworks", "skills"])
        #expect(SharingPolicy.default.fields == [.name, .company, .title])
        for row in CardField.table { #expect(CardField.field(option: row.option) == row.field) }
        #expect(CardField.tableJSON.arrayValue?.map { $0["name"]?.stringValue } == CardField.allCases.map(\.rawValue))
    }

    /// What a person types for a field, as `card set` and the web form pass it: trimmed, an empty value
    /// removes the field, a list field takes one item a value.
    @Test(arguments: CardField.allCases) func aTypedValueSetsTheField(_ field: CardField) throws {
        var card = Self.card(with: field)
        let expected = Self.card(with: field)
        let typed: [String] =
            switch field.kind {
            case .text: ["  " + (expected[text: field] ?? "") + " "]
            case .socialProfiles: ["mastodon:nora:https://example.org/@nora", "  "]
            case .skills: ["Weaving:Craft:expert"]
            case .photo: [Card.dataURI(photo: expected.photo!)]
            }
        card = Card(name: "Nora Field")
        try card.set(field, typed: typed)
        #expect(card == expected)
        if field == .name {
            #expect(throws: ModelError.self) { try card.set(.name, typed: [" "]) }
        } else {
            try card.set(field, typed: [])
            #expect(card.value(of: field) == nil)
        }
    }

    @Test func labelsAndPropertiesAreDistinct() {
        #expect(Set(CardField.allCases.map(\.label)).count == CardField.allCases.count)
        #expect(Set(CardField.allCases.map(\.vCardProperty)).count == CardField.allCases.count)
        #expect(Set(CardField.displayOrder) == Set(CardField.allCases) && CardField.displayOrder.count == CardField.allCases.count)
    }
}
