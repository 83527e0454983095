import Foundation
import NearcardCrypto
import NearcardModel
import NearcardQR
import Testing

/// The iOS snapshot reads the card field table too: every field it has a member for goes there and back.
@Suite struct SnapshotFieldTests {
    @Test(arguments: CardField.allCases.filter { $0.snapshotMember != nil }) func snapshotCarriesTheField(_ field: CardField) throws {
        var card = Card(name: "Nora Field")
        switch field.kind {
        case .text: card[text: field] = "the \(field.rawValue) value"
        case .socialProfiles: card.socialNetworks = [SocialProfile(platform: "mastodon", username: "nora", url: "https://example.org/@nora")]
        case .skills: card.skills = [Skill(name: "Weaving", category: "Craft", proficiency: "expert")]
        case .photo: Issue.record("the iOS snapshot has no photo member")
        }
        let json = Snapshot.json(card, cardId: "0F0E0D0C-0B0A-4908-8706-050403020100", updatedAt: Date(timeIntervalSince1970: 0))
        let (key, isList) = try #require(field.snapshotMember)
        #expect(isList ? json[key]?.arrayValue?.isEmpty == false : json[key] != nil)
        #expect(try Snapshot.card(from: json).card == card)
    }
}
