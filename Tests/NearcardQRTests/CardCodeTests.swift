import Foundation
import NearcardCrypto
import NearcardModel
import NearcardQR
import NearcardTestSupport
import Testing

/// Your card as a code (`CardCode`): a plaintext code says nothing that links it to the other codes of
/// the same card but the card itself.
@Suite struct CardCodeTests {
    let card = Card(name: "Ada Lovelace", email: "ada@example.org", company: "Analytical Engines")
    let context = ScanContext(now: Date(), isTrustedIssuer: { _ in false })

    func plaintext() throws -> String {
        try CardCode.payload(
            .plaintext, card: card, fields: [.name, .company], updatedAt: Date(timeIntervalSince1970: 1_800_000_000),
            keys: IdentityKeys.generate(), issuerProof: nil, until: Date().addingTimeInterval(600))
    }

    /// Two codes made one after the other: each snapshot's `cardId` is a fresh upper-case UUID
    /// (docs/PROTOCOL.md §16), and both still read back as the same card.
    @Test func eachPlaintextCodeCarriesAFreshCardId() throws {
        let texts = [try plaintext(), try plaintext()]
        let ids = try texts.map { text in try #require(try JSONParser.parse(text)["plaintext"]?["snapshot"]?["cardId"]?.stringValue) }
        #expect(ids[0] != ids[1], "two codes of one card carry different card ids")
        for id in ids {
            #expect(UUID(uuidString: id)?.uuidString == id, "\(id) is an upper-case UUID")
        }
        var cards: [Card] = []
        for (text, id) in zip(texts, ids) {
            var router = ScanRouter()
            guard case .contact(let scanned) = try router.scan(text, context: context) else {
                Issue.record("not a contact")
                return
            }
            #expect(scanned.cardId == id)
            cards.append(scanned.card)
        }
        #expect(cards[0] == cards[1] && cards[0].name == "Ada Lovelace" && cards[0].email == nil)
    }
}
