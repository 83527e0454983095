public import Foundation
import NearcardCrypto
public import NearcardModel
public import NearcardNode
public import NearcardQR
public import NearcardScan

/// Card codes and scanning, for every face, in one place: NearcardQR sits beside the node, never under
/// it (DESIGN.md), so what a face does with codes joins the facade here, above both.
extension NearcardApp {
    /// The card as a QR envelope (docs/PROTOCOL.md's plaintext, zkProof or didSigned), signed with this
    /// home's keys where the format is signed: `fields` (default: what the card shares) valid from
    /// `now` until `until`. A face checks first that there is a card (`card()`); without one this
    /// throws `ModelError`.
    public func cardCode(_ format: CardCode.Format, fields: Set<CardField>? = nil, now: Date = Date(), until: Date) throws -> String {
        let (card, sharing) = try self.card()
        guard let card else { throw ModelError(.invalidCard, "you have no card yet; make one first (nearcard card set --name …, or My card)") }
        let issuerProof = try book.issuerProof()
        return try signing { keys in
            try CardCode.payload(format, card: card, fields: fields ?? sharing.fields, keys: keys, issuerProof: issuerProof, now: now, until: until)
        }
    }

    /// A scan of card codes into this book (frames collected across calls).
    public func scanSession() -> ScanSession { ScanSession(book: book, ownDID: identity.did) }
}
