import Foundation
import NearcardCrypto
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
        }
        return card
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
            #expect(contact.json[other.rawValue] == (other.kind == .text ? .null : .array([])))
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
        }
        incoming.card = other
        #expect(ContactMerge.merge(existing: filled.contact, incoming: incoming, now: now).changed == [])
        incoming.verificationStatus = .verified
        let refreshed = ContactMerge.merge(existing: filled.contact, incoming: incoming, now: now)
        #expect(refreshed.changed == [field])
        #expect(refreshed.contact.card.value(of: field) == other.value(of: field))
    }

    @Test func labelsAndPropertiesAreDistinct() {
        #expect(Set(CardField.allCases.map(\.label)).count == CardField.allCases.count)
        #expect(Set(CardField.allCases.map(\.vCardProperty)).count == CardField.allCases.count)
        #expect(Set(CardField.displayOrder) == Set(CardField.allCases) && CardField.displayOrder.count == CardField.allCases.count)
    }
}
