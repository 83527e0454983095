import Foundation
import NearcardModel
import Testing

/// The address-book card (docs/ADDRESSBOOK.md): only what the peer disclosed goes out, and the merge
/// into the server's copy keeps what the person changed there.
@Suite struct VCardMergeTests {
    let did = "did:key:zDnaerDaTF5BXEavCrfRZEk316dpbLsfPDZ3WJ5hRTPFU2169"

    func contact(email: String? = "ada@example.org", title: String? = nil) -> Contact {
        var card = Card(name: "Ada Lovelace")
        card[text: .email] = email
        card[text: .title] = title
        return Contact(
            card: card, source: .proximity, verificationStatus: .verified, receivedAt: Date(), tags: ["vip"], notes: "my own note, never sent",
            didPublicKey: did, theirEphemeralMessage: "a message, never sent")
    }

    /// Only the disclosed fields, the DID and the verification: no local note, tag or message.
    @Test func theCardHoldsWhatThePeerDisclosedAndNothingOfMine() throws {
        let text = VCard.addressBookCard(contact(), uid: "0f3c")
        #expect(text.hasPrefix("BEGIN:VCARD\r\nVERSION:4.0\r\n"))
        let names = Set(try #require(VCard.contentLines(text)).map(\.name))
        #expect(names == ["VERSION", "FN", "N", "UID", "EMAIL", "X-NEARCARD-DID", "PRODID", "X-NEARCARD-VERIFICATION"])
        #expect(VCard.value(of: "UID", in: text) == "urn:uuid:0f3c")
        #expect(VCard.value(of: "X-NEARCARD-DID", in: text) == did)
        #expect(VCard.value(of: "X-NEARCARD-VERIFICATION", in: text) == "verified")
        for secret in ["my own note", "vip", "a message"] { #expect(!text.contains(secret)) }
        // It reads back as the same card.
        #expect(try VCard.parse(text).first?.card == contact().card)
    }

    /// The person's note and nickname on the server survive Nearcard's update of the email.
    @Test func anUpdateKeepsWhatThePersonAddedOnTheServer() throws {
        let base = VCard.addressBookCard(contact(), uid: "u1")
        var theirs = base.replacingOccurrences(of: "END:VCARD", with: "NOTE:met at the loom fair\r\nNICKNAME:Countess\r\nEND:VCARD")
        theirs = theirs.replacingOccurrences(of: "PRODID:-//Nearcard//Nearcard//EN\r\n", with: "") // a server may drop or move lines
        let ours = VCard.addressBookCard(contact(email: "ada@analytical.example"), uid: "u1")
        let merged = try #require(VCard.merge(base: base, ours: ours, theirs: theirs))
        #expect(merged.conflicts.isEmpty)
        #expect(VCard.value(of: "EMAIL", in: merged.text) == "ada@analytical.example")
        #expect(VCard.value(of: "NOTE", in: merged.text) == "met at the loom fair")
        #expect(VCard.value(of: "NICKNAME", in: merged.text) == "Countess")
    }

    /// An owned field the person changed on the server is kept, and said to be a conflict only when
    /// Nearcard has a change of its own for it.
    @Test func theServersEditOfAnOwnedFieldWinsAndAConflictIsSaid() throws {
        let base = VCard.addressBookCard(contact(), uid: "u1")
        let theirs = base.replacingOccurrences(of: "EMAIL:ada@example.org", with: "EMAIL:ada@home.example")
        // Nearcard has nothing new for EMAIL: the server's edit stays, no conflict.
        let same = try #require(VCard.merge(base: base, ours: base, theirs: theirs))
        #expect(VCard.value(of: "EMAIL", in: same.text) == "ada@home.example")
        #expect(same.conflicts.isEmpty)
        // Nearcard's email changed too: the server's stays, and the conflict is reported.
        let ours = VCard.addressBookCard(contact(email: "ada@analytical.example", title: "Analyst"), uid: "u1")
        let both = try #require(VCard.merge(base: base, ours: ours, theirs: theirs))
        #expect(VCard.value(of: "EMAIL", in: both.text) == "ada@home.example")
        #expect(both.conflicts == ["EMAIL"])
        // A field only Nearcard changed still arrives.
        #expect(VCard.value(of: "TITLE", in: both.text) == "Analyst")
    }

    /// A server that rewrites the card in its own spelling (order, escapes, parameter case) has not
    /// edited it: Nearcard's later change still arrives, and no conflict is said.
    @Test func aServersOwnSpellingIsNoEdit() throws {
        var card = Card(name: "Ada Lovelace")
        card[text: .company] = "Looms, Ltd; Analytical"
        card.socialNetworks = [SocialProfile(platform: "mastodon", username: "ada", url: "https://example.social/@ada")]
        let base = VCard.addressBookCard(Contact(card: card, source: .proximity, verificationStatus: .verified, receivedAt: Date()), uid: "u1")
        // The same card as a server stores it: lines reordered, a parameter's name in lower case.
        let lines = try #require(VCard.contentLines(base)).map(\.text)
        let respelled = lines.reversed().map { $0.replacingOccurrences(of: ";TYPE=", with: ";type=") }
        let theirs = (["BEGIN:VCARD"] + respelled + ["END:VCARD"]).joined(separator: "\r\n") + "\r\n"
        card[text: .company] = "Analytical Engines"
        let ours = VCard.addressBookCard(Contact(card: card, source: .proximity, verificationStatus: .verified, receivedAt: Date()), uid: "u1")
        let merged = try #require(VCard.merge(base: base, ours: ours, theirs: theirs))
        #expect(merged.conflicts.isEmpty, "\(merged.conflicts)")
        #expect(VCard.value(of: "ORG", in: merged.text) == "Analytical Engines")
        #expect(VCard.ownedPart(theirs) == VCard.ownedPart(base))
    }

    /// A field the peer stopped disclosing leaves the server's card (it was Nearcard's to write).
    @Test func aFieldNoLongerDisclosedLeavesTheServersCard() throws {
        let base = VCard.addressBookCard(contact(), uid: "u1")
        let ours = VCard.addressBookCard(contact(email: nil), uid: "u1")
        let merged = try #require(VCard.merge(base: base, ours: ours, theirs: base))
        #expect(VCard.value(of: "EMAIL", in: merged.text) == nil)
        #expect(VCard.value(of: "FN", in: merged.text) == "Ada Lovelace")
    }

    @Test func aServerCopyThatIsNoVCardIsNotMerged() {
        let ours = VCard.addressBookCard(contact(), uid: "u1")
        #expect(VCard.merge(base: nil, ours: ours, theirs: "<html>login</html>") == nil)
        #expect(VCard.merge(base: nil, ours: ours, theirs: "BEGIN:VCARD\r\nFN:x\r\n") == nil) // truncated: no END
    }
}
