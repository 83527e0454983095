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

    func plaintext(at now: Date = Date()) throws -> String {
        try CardCode.payload(
            .plaintext, card: card, fields: [.name, .company], keys: IdentityKeys.generate(), issuerProof: nil, now: now,
            until: now.addingTimeInterval(600))
    }

    /// A plaintext code carries the time it was made, never the card's last edit (which every code of an
    /// unchanged card would share).
    @Test func aPlaintextCodeCarriesWhenItWasMade() throws {
        for made in [Date(timeIntervalSince1970: 1_800_000_000), Date(timeIntervalSince1970: 1_800_000_777)] {
            let text = try plaintext(at: made)
            #expect(try JSONParser.parse(text)["plaintext"]?["snapshot"]?["updatedAt"]?.stringValue == ISO8601.string(made), "\(text)")
        }
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
