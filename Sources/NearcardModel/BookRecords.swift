public import Foundation
public import NearcardCrypto

// What the book keeps, as values: a face reads them through the facade (NearcardNode's `NearcardApp`
// and `Book`), the book (NearcardStore) reads and writes them. Nothing here touches a database.

public struct MyCard: Sendable, Equatable {
    public let cardId: String
    public let card: Card
    public let updatedAt: Date

    public init(cardId: String, card: Card, updatedAt: Date) {
        self.cardId = cardId
        self.card = card
        self.updatedAt = updatedAt
    }
}

/// One exchange as the store recorded it.
public struct ExchangeRecord: Sendable, Equatable {
    public let id: String
    public let contactDID: String
    public let at: Date
    /// Which node recorded it (a bot's `--name`; empty for a single node).
    public let node: String

    public init(id: String, contactDID: String, at: Date, node: String) {
        self.id = id
        self.contactDID = contactDID
        self.at = at
        self.node = node
    }
}

/// A withdrawn exchange, as the history keeps it.
public struct WithdrawnExchange: Sendable, Equatable {
    /// The contact it was with, when that contact stays in the book; nil when withdrawing it removed
    /// a contact that was new with it (nothing of theirs is kept).
    public let contactDID: String?
    public let exchangedAt: Date
    public let withdrawnAt: Date

    public init(contactDID: String?, exchangedAt: Date, withdrawnAt: Date) {
        self.contactDID = contactDID
        self.exchangedAt = exchangedAt
        self.withdrawnAt = withdrawnAt
    }
}

/// A contact whose presence key this node holds: what the resolver needs to recognise them.
public struct ContactPresence: Sendable, Equatable {
    public let did: String
    public let name: String
    public let presenceKey: [UInt8]

    public init(did: String, name: String, presenceKey: [UInt8]) {
        self.did = did
        self.name = name
        self.presenceKey = presenceKey
    }
}

/// A message waiting to be delivered, or the record of one that was (or that failed for good).
///
/// Once delivered, a message keeps only its metadata (id, recipient, times, state, attempts): its text
/// and signed envelope are removed from the store when the contact's node acknowledges it, so a copy
/// of the database later shows whom you wrote to and when, never what.
public struct OutboxItem: Sendable, Equatable {
    public enum State: String, Sendable, CaseIterable { case queued, delivered, failed }

    public let id: String
    public let contactID: String
    public let contactDID: String
    public let contactName: String
    /// The message; nil once delivered (the text is not kept after delivery).
    public let text: String?
    /// The signed envelope to deliver. For a delivered message only its metadata is left (id, from,
    /// to, and `sentAt` as the time it was queued) with an empty text and no signature: it is never
    /// sent again (`claimDueMessages` takes only queued messages that still have their text).
    public let envelope: MessageEnvelope
    public let createdAt: Date
    public let state: State
    public let attempts: Int
    public let nextAttemptAt: Date
    public let lastError: String?
    public let deliveredAt: Date?

    public var json: JSONValue {
        func date(_ d: Date?) -> JSONValue { d.map { .string(ISO8601.string($0)) } ?? .null }
        return [
            "id": .string(id), "contactId": .string(contactID), "contact": .string(contactName), "did": .string(contactDID),
            "text": text.map { .string($0) } ?? .null, "state": .string(state.rawValue), "attempts": .number(Double(attempts)),
            "createdAt": date(createdAt), "nextAttemptAt": state == .queued ? date(nextAttemptAt) : .null,
            "lastError": lastError.map { .string($0) } ?? .null, "deliveredAt": date(deliveredAt),
        ]
    }

    public init(
        id: String, contactID: String, contactDID: String, contactName: String, text: String?, envelope: MessageEnvelope, createdAt: Date, state: State,
        attempts: Int, nextAttemptAt: Date, lastError: String?, deliveredAt: Date?
    ) {
        self.id = id
        self.contactID = contactID
        self.contactDID = contactDID
        self.contactName = contactName
        self.text = text
        self.envelope = envelope
        self.createdAt = createdAt
        self.state = state
        self.attempts = attempts
        self.nextAttemptAt = nextAttemptAt
        self.lastError = lastError
        self.deliveredAt = deliveredAt
    }
}

/// A message received from a contact.
public struct InboxItem: Sendable, Equatable {
    public let id: String
    public let fromDID: String
    public let contactID: String?
    public let contactName: String?
    public let text: String
    public let sentAt: Date
    public let receivedAt: Date
    /// Whether the keys it arrived with are the contact's keys as they stand now.
    public let keysMatched: Bool

    public var json: JSONValue {
        [
            "id": .string(id), "from": .string(fromDID), "contactId": contactID.map { .string($0) } ?? .null,
            "contact": contactName.map { .string($0) } ?? .null, "text": .string(text), "sentAt": .string(ISO8601.string(sentAt)),
            "receivedAt": .string(ISO8601.string(receivedAt)), "keysMatched": .bool(keysMatched),
        ]
    }

    public init(id: String, fromDID: String, contactID: String?, contactName: String?, text: String, sentAt: Date, receivedAt: Date, keysMatched: Bool) {
        self.id = id
        self.fromDID = fromDID
        self.contactID = contactID
        self.contactName = contactName
        self.text = text
        self.sentAt = sentAt
        self.receivedAt = receivedAt
        self.keysMatched = keysMatched
    }
}

/// A CardDAV address book the contacts are synced to (docs/ADDRESSBOOK.md). The password is not here:
/// `credential` says where it is read from each time.
public struct AddressBookAccount: Sendable, Equatable {
    /// The address book collection's URL (the account's name everywhere).
    public let url: String
    /// What the person gave to `addressbook add` (a server root or the collection).
    public let serverURL: String
    public let username: String
    /// Where the password is read from: `file:PATH`, `credential:NAME` (systemd's `$CREDENTIALS_DIRECTORY`).
    public let credential: String
    /// QR contacts are synced too (contacts met in person always are).
    public let includeQR: Bool
    public let addedAt: Date
    /// The last sync that reached the server.
    public let lastSyncAt: Date?
    public let lastAttemptAt: Date?
    /// Failed passes in a row (the back-off's count); 0 after one that worked.
    public let failures: Int
    /// When a running node tries again after a failure.
    public let nextAttemptAt: Date
    public let lastError: String?

    public init(
        url: String, serverURL: String, username: String, credential: String, includeQR: Bool, addedAt: Date = Date(), lastSyncAt: Date? = nil,
        lastAttemptAt: Date? = nil, failures: Int = 0, nextAttemptAt: Date = .distantPast, lastError: String? = nil
    ) {
        self.url = url
        self.serverURL = serverURL
        self.username = username
        self.credential = credential
        self.includeQR = includeQR
        self.addedAt = addedAt
        self.lastSyncAt = lastSyncAt
        self.lastAttemptAt = lastAttemptAt
        self.failures = failures
        self.nextAttemptAt = nextAttemptAt
        self.lastError = lastError
    }
}

/// Something about a contact's card in an address book that the person should hear once: the card was
/// deleted there (the contact kept here), or changed there and here at once (the address book's kept).
public struct AddressBookNotice: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        case goneOnServer
        /// The owned properties both sides changed, as the card records them ("email, title").
        case conflict(String)
    }

    public let book: String
    public let contactID: String
    public let name: String
    public let kind: Kind

    public init(book: String, contactID: String, name: String, kind: Kind) {
        self.book = book
        self.contactID = contactID
        self.name = name
        self.kind = kind
    }

    /// What the store keeps once it was said (`addressBookCard.told`).
    public var token: String {
        switch kind {
        case .goneOnServer: "gone"
        case .conflict(let fields): "conflict:" + fields
        }
    }
}

/// One contact's card in one address book.
public struct AddressBookCard: Sendable, Equatable {
    public enum State: String, Sendable, CaseIterable {
        /// On the server as Nearcard last wrote or merged it.
        case synced
        /// The contact was deleted in Nearcard: the card is deleted on the server at the next sync.
        case deleting
        /// The person deleted the card on the server; the contact stays in Nearcard (`--mirror-deletes`).
        case goneOnServer
    }

    public let book: String
    public let contactID: String
    /// The vCard's UID: random, made once per contact and account.
    public let uid: String
    /// The card's URL on the server.
    public let href: String
    public let etag: String?
    /// The vCard Nearcard last wrote (the merge's base); nil once the contact is deleted.
    public let written: String?
    public let state: State
    /// What the person keeps on the server for this contact (shown by `contacts show`, sent to no one).
    public let serverNote: String?
    public let serverNickname: String?
    /// Owned properties the person changed on the server while Nearcard had a change too (the server's kept).
    public let conflict: String?
    public let lastError: String?

    public init(
        book: String, contactID: String, uid: String, href: String, etag: String?, written: String?, state: State, serverNote: String? = nil,
        serverNickname: String? = nil, conflict: String? = nil, lastError: String? = nil
    ) {
        self.book = book
        self.contactID = contactID
        self.uid = uid
        self.href = href
        self.etag = etag
        self.written = written
        self.state = state
        self.serverNote = serverNote
        self.serverNickname = serverNickname
        self.conflict = conflict
        self.lastError = lastError
    }
}

/// A Semaphore group the user trusts, named by its Merkle root.
public struct TrustedGroup: Sendable, Equatable {
    public let root: String
    public let name: String
    public let depth: Int?
    public let addedAt: Date

    public init(root: String, name: String, depth: Int?, addedAt: Date) {
        self.root = root
        self.name = name
        self.depth = depth
        self.addedAt = addedAt
    }
}

/// A credential kept in the store (imported from a QR code or a presentation): the credential's
/// members read through (`stored.issuer`), and when it was imported.
@dynamicMemberLookup
public struct StoredCredential: Sendable, Equatable {
    public let credential: Credential
    public let importedAt: Date

    public init(_ credential: Credential, importedAt: Date) {
        self.credential = credential
        self.importedAt = importedAt
    }

    public subscript<T>(dynamicMember member: KeyPath<Credential, T>) -> T { credential[keyPath: member] }

    public var json: JSONValue { credential.json(importedAt: importedAt) }
}

/// What became of a card that arrived outside an exchange (a QR code, `contacts add`, `contacts import`).
public struct KeptContact: Sendable {
    public enum Outcome: Sendable, Equatable {
        /// A new contact.
        case added
        /// A new contact (no DID) that looks like one already in the book: the same name, email or phone.
        case possibleDuplicate(of: Contact)
        /// Someone already in the book (the same DID): these fields were added or refreshed (none: nothing new).
        case merged(changed: [CardField])
        /// The very same card (no DID) is already in the book; nothing was stored.
        case alreadyThere
    }

    public let contact: Contact
    public let outcome: Outcome

    /// One line for people: "added", "already in your contacts: 1 field updated (email)", …
    public var summary: String {
        switch outcome {
        case .added:
            return "added"
        case .possibleDuplicate(let other):
            return "added; possibly the same person as \(other.name) (\(other.id.prefix(8))), already in your contacts"
        case .alreadyThere:
            return "already in your contacts: nothing new"
        case .merged(let changed):
            if changed.isEmpty { return "already in your contacts: nothing new" }
            return
                "already in your contacts: \(changed.count) field\(changed.count == 1 ? "" : "s") updated (\(changed.map(\.rawValue).joined(separator: ", ")))"
        }
    }

    /// `added`, `merged`, `unchanged` or `possibleDuplicate`, and the fields changed, for `--json`.
    public var json: JSONValue {
        var o: JSONObject = [:]
        switch outcome {
        case .added: o["outcome"] = "added"
        case .possibleDuplicate(let other):
            o["outcome"] = "possibleDuplicate"
            o["possibleDuplicateOf"] = .string(other.id)
        case .merged(let changed):
            o["outcome"] = changed.isEmpty ? "unchanged" : "merged"
            o["changed"] = .array(changed.map { .string($0.rawValue) })
        case .alreadyThere: o["outcome"] = "unchanged"
        }
        return .object(o)
    }

    public init(contact: Contact, outcome: Outcome) {
        self.contact = contact
        self.outcome = outcome
    }
}

/// What the store noticed about its server, for a node's logs and metrics.
public enum StoreEvent: Sendable, Equatable {
    case connectionLost
    case reconnected
}

/// What `nearcard store migrate` did to one table: rows read from the source, rows written to the
/// target, rows the target already had (only with `merge`), and a SHA-256 over the written rows as
/// the source has them and as the target holds them afterwards (equal when nothing was lost or changed).
public struct StoreCopyTable: Sendable, Equatable {
    public let table: String
    public let rows: Int
    public let copied: Int
    public let alreadyThere: Int
    public let sourceChecksum: String
    public let targetChecksum: String
    public var intact: Bool { sourceChecksum == targetChecksum }

    public init(table: String, rows: Int, copied: Int, alreadyThere: Int, sourceChecksum: String, targetChecksum: String) {
        self.table = table
        self.rows = rows
        self.copied = copied
        self.alreadyThere = alreadyThere
        self.sourceChecksum = sourceChecksum
        self.targetChecksum = targetChecksum
    }
}

/// A bot policy's rate limit: at most `count` acceptances in any `seconds` (docs/BOT.md `rateLimits`).
public struct AcceptanceLimit: Sendable, Equatable {
    public let count: Int
    public let seconds: Double

    public init(count: Int, seconds: Double) {
        self.count = count
        self.seconds = seconds
    }
}

/// What `admitAcceptance` decided.
public enum AcceptanceVerdict: Sendable, Equatable {
    /// Within the limits: recorded.
    case admitted
    /// This visitor already had the limit's count of acceptances in its window.
    case perPeerLimit(AcceptanceLimit)
    /// The bot (the fleet) already had the limit's count in its window.
    case overallLimit(AcceptanceLimit)
}
