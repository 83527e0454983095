public import Foundation

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

extension NearcardDatabase {
    /// Adds an account, or replaces the one with the same collection URL (its cards stay).
    public func saveAddressBook(_ account: AddressBookAccount) throws(StoreError) {
        try write { db in
            try db.execute(
                """
                INSERT INTO addressBook (url, serverURL, username, credential, includeQR, addedAt, nextAttemptAt)
                VALUES (?, ?, ?, ?, ?, ?, 0)
                ON CONFLICT(url) DO UPDATE SET serverURL = excluded.serverURL, username = excluded.username,
                    credential = excluded.credential, includeQR = excluded.includeQR, failures = 0, nextAttemptAt = 0, lastError = NULL
                """, account.url, account.serverURL, account.username, account.credential, account.includeQR ? 1 : 0,
                account.addedAt.timeIntervalSince1970)
            try Self.announce(.addressBooks, db)
        }
    }

    /// Removes an account and Nearcard's record of its cards (the cards on the server stay); false when there was none.
    @discardableResult
    public func removeAddressBook(url: String) throws(StoreError) -> Bool {
        try write { db in
            try db.execute("DELETE FROM addressBookCard WHERE book = ?", url)
            try Self.announce(.addressBooks, db)
            return try db.execute("DELETE FROM addressBook WHERE url = ?", url) > 0
        }
    }

    public func addressBooks() throws(StoreError) -> [AddressBookAccount] {
        try read { db in try db.rows("SELECT * FROM addressBook ORDER BY addedAt").map(Self.addressBook) }
    }

    /// Records a pass: `error` nil when it reached the server (failures reset), else the back-off's next try.
    public func recordAddressBookPass(url: String, error: String?, retryAt: Date? = nil, at: Date = Date()) throws(StoreError) {
        try write { db in
            let t = at.timeIntervalSince1970
            if let error {
                try db.execute(
                    "UPDATE addressBook SET lastAttemptAt = ?, failures = failures + 1, nextAttemptAt = ?, lastError = ? WHERE url = ?", t,
                    (retryAt ?? at).timeIntervalSince1970, error, url)
            } else {
                try db.execute(
                    "UPDATE addressBook SET lastAttemptAt = ?, lastSyncAt = ?, failures = 0, nextAttemptAt = 0, lastError = NULL WHERE url = ?", t, t,
                    url)
            }
        }
    }

    public func addressBookCards(book: String) throws(StoreError) -> [AddressBookCard] {
        try read { db in try db.rows("SELECT * FROM addressBookCard WHERE book = ? ORDER BY uid", book).map(Self.addressBookCard) }
    }

    /// The cards of one contact, in every address book (for `contacts show`).
    public func addressBookCards(contactID: String) throws(StoreError) -> [AddressBookCard] {
        try read { db in try db.rows("SELECT * FROM addressBookCard WHERE contactID = ? ORDER BY book", contactID).map(Self.addressBookCard) }
    }

    /// Records a card as it now is on the server (insert or replace). A card of a contact deleted
    /// meanwhile is not brought back: it stays 'deleting' and the next pass deletes it.
    public func saveAddressBookCard(_ card: AddressBookCard) throws(StoreError) {
        try write { db in
            let exists: Int64 = try db.value("SELECT COUNT(*) FROM contact WHERE id = ?", card.contactID) ?? 0
            let deleted = exists == 0 && card.state != .deleting
            try db.execute(
                """
                INSERT INTO addressBookCard (book, contactID, uid, href, etag, written, state, serverNote, serverNickname, conflict, lastError)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT(book, contactID) DO UPDATE SET uid = excluded.uid, href = excluded.href, etag = excluded.etag,
                    written = excluded.written, state = excluded.state, serverNote = excluded.serverNote,
                    serverNickname = excluded.serverNickname, conflict = excluded.conflict, lastError = excluded.lastError
                """, card.book, card.contactID, card.uid, card.href, card.etag, deleted ? nil : card.written,
                deleted ? AddressBookCard.State.deleting.rawValue : card.state.rawValue, deleted ? nil : card.serverNote,
                deleted ? nil : card.serverNickname, deleted ? nil : card.conflict, card.lastError)
        }
    }

    /// Forgets a card (deleted on the server, or the contact is gone).
    public func forgetAddressBookCard(book: String, contactID: String) throws(StoreError) {
        try write { db in try db.execute("DELETE FROM addressBookCard WHERE book = ? AND contactID = ?", book, contactID) }
    }

    static func addressBook(_ row: SQLRow) throws -> AddressBookAccount {
        let lastSync: Double? = try row["lastSyncAt"]
        let lastAttempt: Double? = try row["lastAttemptAt"]
        return AddressBookAccount(
            url: try row["url"], serverURL: try row["serverURL"], username: try row["username"], credential: try row["credential"],
            includeQR: (try row["includeQR"] as Int) != 0, addedAt: Date(timeIntervalSince1970: try row["addedAt"]),
            lastSyncAt: lastSync.map(Date.init(timeIntervalSince1970:)), lastAttemptAt: lastAttempt.map(Date.init(timeIntervalSince1970:)),
            failures: try row["failures"], nextAttemptAt: Date(timeIntervalSince1970: try row["nextAttemptAt"]), lastError: try row["lastError"])
    }

    static func addressBookCard(_ row: SQLRow) throws -> AddressBookCard {
        AddressBookCard(
            book: try row["book"], contactID: try row["contactID"], uid: try row["uid"], href: try row["href"], etag: try row["etag"],
            written: try row["written"], state: AddressBookCard.State(rawValue: try row["state"]) ?? .synced, serverNote: try row["serverNote"],
            serverNickname: try row["serverNickname"], conflict: try row["conflict"], lastError: try row["lastError"])
    }
}
