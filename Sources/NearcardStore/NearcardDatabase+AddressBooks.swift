public import Foundation
public import NearcardModel

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

    /// Each card deleted on the server (its contact kept) or changed on both sides, in every address book
    /// (`book`: one); `unsaid`: only those not yet said to the person as they now stand.
    public func addressBookNotices(book: String? = nil, unsaid: Bool) throws(StoreError) -> [AddressBookNotice] {
        let sql = """
            SELECT a.book, a.contactID, a.state, a.conflict, a.told, c.name FROM addressBookCard a JOIN contact c ON c.id = a.contactID
            WHERE (a.state = 'goneOnServer' OR a.conflict IS NOT NULL)\(book == nil ? "" : " AND a.book = ?") ORDER BY c.name, a.book
            """
        return try read { db in
            try (book.map { try db.rows(sql, $0) } ?? db.rows(sql)).compactMap { row -> AddressBookNotice? in
                let state: String = try row["state"]
                let conflict: String? = try row["conflict"]
                let told: String? = try row["told"]
                let kind: AddressBookNotice.Kind = state == AddressBookCard.State.goneOnServer.rawValue ? .goneOnServer : .conflict(conflict ?? "")
                let notice = AddressBookNotice(book: try row["book"], contactID: try row["contactID"], name: try row["name"], kind: kind)
                return unsaid && told == notice.token ? nil : notice
            }
        }
    }

    /// Records that these notices were said to the person (each is not said again while it stands).
    public func addressBookNoticesSaid(_ notices: [AddressBookNotice]) throws(StoreError) {
        guard !notices.isEmpty else { return }
        try write { db in
            for n in notices {
                try db.execute("UPDATE addressBookCard SET told = ? WHERE book = ? AND contactID = ?", n.token, n.book, n.contactID)
            }
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
