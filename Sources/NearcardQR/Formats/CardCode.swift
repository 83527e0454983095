public import Foundation
public import NearcardCrypto
public import NearcardModel

/// Your card as a QR code's text, in one of the three formats, for `qr make` and the web app alike.
public enum CardCode {
    /// The fields a QR code carries (docs/PROTOCOL.md §16): version 2's seven. Pronouns and later
    /// fields travel only in an exchange.
    public static let carriedFields = CardField.fields(ofVersion: 2)

    public enum Format: String, Sendable, CaseIterable {
        case plaintext, zk
        case didSigned = "did-signed"
    }

    /// The payload for `card` disclosing `fields`, made `now`, valid `until`. A plaintext code carries a
    /// fresh random `cardId` each time, and as its snapshot's `updatedAt` the time the code was made (not
    /// the card's last edit, which would be the same in every code until the card changes): nothing
    /// links two codes of one card but the card itself. A code carries the fields of the iOS formats —
    /// those of exchange version 2 (`carriedFields`) — whatever else is shared: a scanner of any version
    /// reads it, and a zk code's proof (7 digests) commits to every field it shows.
    public static func payload(
        _ format: Format, card: Card, fields: Set<CardField>, keys: @autoclosure () throws -> IdentityKeys,
        issuerProof: String?, now: Date = Date(), until: Date
    ) throws -> String {
        let card = card.filtered(to: Set(carriedFields))
        let fields = fields.intersection(carriedFields)
        switch format {
        case .plaintext:
            return Envelope.plaintext(card: card, fields: fields, updatedAt: now, createdAt: now, expires: until)
        case .zk:
            return try Envelope.zkProof(card: card, fields: fields, keys: try keys(), createdAt: now, expires: until, issuerProof: issuerProof)
        case .didSigned:
            return try BusinessCardCredential.make(card: card, fields: fields, signer: try keys().p256, issuedAt: now, expires: until)
        }
    }
}
