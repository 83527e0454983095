import Foundation
public import NearcardCrypto
import NearcardModel
public import NearcardNode
import NearcardProtocol
public import NearcardQR
package import NearcardStore

/// Scanning as every face does it (`qr scan`, the web app's Scan page): QR texts through one router
/// (chunk frames collect across texts), and what they carry kept in the store by its one rule — a
/// contact merged when it is already there, credentials imported, requests and partial frames only
/// reported. Each text gives one report, the shape `qr scan --json` prints.
public struct ScanSession {
    /// How bad the worst report is: `qr scan`'s exit code follows it.
    public enum Severity: Int, Sendable, Comparable {
        case ok, checkFailed, unusable
        public static func < (a: Severity, b: Severity) -> Bool { a.rawValue < b.rawValue }
    }

    let database: NearcardDatabase
    let context: ScanContext
    var router = ScanRouter()
    /// The DID of the person scanning: their own card's code is recognised, not stored as a contact.
    let ownDID: String?

    /// A scan into `book` (a face's, opened through `Home`, or a running node's `NearcardApp.book`).
    public init(book: Book, ownDID: String?) { self.init(database: book.database, ownDID: ownDID) }

    package init(database: NearcardDatabase, ownDID: String?) {
        self.database = database
        self.ownDID = ownDID
        context = ScanContext(isTrustedIssuer: { (try? database.isTrustedIssuer($0)) ?? false }, trustedGroup: GroupTrust.lookup(database))
    }

    /// The QR texts in an image (PNG or JPEG); each code must hold UTF-8 text.
    public static func texts(inImage data: [UInt8]) throws(QRError) -> [String] {
        try QRScanner.scan(image: data).map { (code: [UInt8]) throws(QRError) -> String in
            guard let text = String(validating: code, as: UTF8.self) else { throw QRError(.malformed, "the QR code does not hold UTF-8 text") }
            return text
        }
    }

    /// Routes one text and keeps what it carries. A code that cannot be used is a report too
    /// (`result: error`), never a thrown error; only the store failing throws.
    /// The report of an input that is no code at all (an unreadable invitation, an image with no code).
    public static func malformed(_ message: String) -> (report: JSONValue, severity: Severity) {
        malformed(Phrase(verbatim: message))
    }

    /// A code that could not be used. The report's `phrase` is the message to be said in a person's
    /// language (`Phrase(json:)`); a face that prints the report as JSON leaves it out.
    public static func malformed(_ phrase: Phrase) -> (report: JSONValue, severity: Severity) {
        (["result": "error", "kind": "malformed", "message": .string(phrase.english), "phrase": phrase.json], .unusable)
    }

    /// Whether a scanned card is the scanner's own: signed with their DID, or (a plaintext code carries
    /// none) every field it shows is the same on their own card.
    func isOwnCard(_ s: ScannedContact) throws(StoreError) -> Bool {
        if let did = s.did { return did == ownDID }
        guard let mine = try database.myCard()?.card else { return false }
        return CardField.allCases.allSatisfy { s.card.value(of: $0) == nil || s.card.value(of: $0) == mine.value(of: $0) }
    }

    /// One text's report; a book that cannot keep what it carries is a `NodeError` in the store's words.
    public mutating func scan(_ text: String) throws(NodeError) -> (report: JSONValue, severity: Severity) {
        do { return try scanned(text) } catch { throw NodeError(book: error) }
    }

    private mutating func scanned(_ text: String) throws(StoreError) -> (report: JSONValue, severity: Severity) {
        if text.hasPrefix(Invitation.prefix) {
            // An invitation is not kept: it is for dialling (and holds a secret).
            do {
                let invitation = try Invitation(text: text)
                return (
                    [
                        "result": "invitation", "name": invitation.name.map { .string($0) } ?? .null, "fingerprint": .string(invitation.fingerprint),
                        "addresses": .array(invitation.addresses.map { .string($0) }),
                        "expires": .string(ISO8601.string(Date(timeIntervalSince1970: TimeInterval(invitation.expires)))),
                        "note":
                            "an invitation to exchange cards: nothing was stored; exchange with: nearcard exchange --invite 'TEXT' (or --invite-image PHOTO)",
                    ], .ok
                )
            } catch {
                return Self.malformed(Phrase("the invitation cannot be read: %1$@", error.phrase))
            }
        }
        let outcome: ScanOutcome
        do { outcome = try router.scan(text, context: context) } catch {
            return (
                ["result": "error", "kind": .string("\(error.kind)"), "message": .string(error.message), "phrase": error.phrase.json],
                error.kind == .expired ? .checkFailed : .unusable
            )
        }
        switch outcome {
        case .needMoreFrames(let received, let total, let missing):
            // `missingText` says it in words, including the frame that is "the first or the last" while
            // the payload's numbering (from 0 or from 1) is not known yet.
            return (
                [
                    "result": "partial", "received": .number(Double(received)), "total": .number(Double(total)),
                    "missing": .array(missing.map { .number(Double($0)) }),
                    "missingText": .string(Chunks.describeMissing(received: received, total: total, missing: missing)),
                ], .ok
            )
        case .presentationRequest(let r):
            return (
                [
                    "result": "presentation-request", "verifier": .string(r.clientID), "host": .string(r.verifierHost),
                    "claims": .array(r.requestedClaims.map { .string($0) }), "responseMode": r.responseMode.map { .string($0) } ?? .null,
                    "note": "nothing was stored; answer it with: nearcard present REQUEST",
                ], .ok
            )
        case .credentials(let list):
            for c in list { try database.saveCredential(StoredCredential(c, importedAt: Date())) }
            return (["result": "credentials", "credentials": .array(list.map(\.json))], list.contains { $0.status == .failed } ? .checkFailed : .ok)
        case .contact(let s):
            if try isOwnCard(s) {
                return (
                    [
                        "result": "own-card", "name": .string(s.card.name),
                        "note": "this is your own card (scanned from your own code): nothing was stored",
                    ], .ok
                )
            }
            let contact = Contact(
                cardId: s.cardId, card: s.card, source: .qrCode, verificationStatus: s.status, receivedAt: Date(),
                didPublicKey: s.did, memberOf: s.memberOf, groupVerdict: s.groupVerdict)
            let kept = try database.keep(contact, payloadJSON: s.source, credential: s.credential.map { StoredCredential($0, importedAt: Date()) })
            let saved = kept.contact
            var o = saved.json.objectValue ?? [:]
            o["result"] = "contact"
            o["format"] = .string(s.format.rawValue)
            o["merge"] = kept.json
            o["summary"] = .string(kept.summary)
            var reason = s.reason
            if s.status == .failed, case .merged = kept.outcome {
                reason += "; the contact already in your book is unchanged"
            } else if saved.verificationStatus != s.status {
                reason += "; the contact stays \(saved.verificationStatus.rawValue) from an earlier, stronger proof"
            }
            o["reason"] = .string(reason)
            return (.object(o), s.status == .failed ? .checkFailed : .ok)
        }
    }
}
