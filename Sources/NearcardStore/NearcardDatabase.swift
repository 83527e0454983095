public import Foundation
public import NearcardCrypto
public import NearcardModel
import Synchronization

/// Nearcard's book: the user's card and sharing choices, contacts, messages, trust and invitations.
/// One API over two backends: the home's SQLite file (WAL mode, through GRDB; the default) or a
/// PostgreSQL database several bots share (`--store postgres://…`). Opening runs the migrations;
/// every write that records an outcome is one transaction.
public final class NearcardDatabase: Sendable {
    /// The store as a user names it: the SQLite file's path, or the PostgreSQL URL without its password.
    public let path: String
    public let location: StoreLocation
    let backend: any StoreBackend
    /// The last card text `sharedCard()` parsed, and the card.
    private let parsedCard = Mutex<(json: String, card: Card)?>(nil)
    private let sharedCache = Mutex<(at: TimeInterval, card: SharedCard)?>(nil)

    /// How long a write waits for another process holding the database before giving up.
    public static let busyTimeout: TimeInterval = 5

    /// Opens (creating it when needed) the SQLite database at `path`.
    public convenience init(path: String, busyTimeout: TimeInterval = NearcardDatabase.busyTimeout) throws(StoreError) {
        try self.init(location: .sqlite(path: path), busyTimeout: busyTimeout)
    }

    /// Opens the store at `location` and brings its schema up to date; `events` hears what a
    /// PostgreSQL store notices about its server (a lost connection, a reconnection).
    /// `singleConnection`: an SQLite book opened with one connection, for a command that runs once and
    /// exits; a node that serves keeps the default, a pool of readers beside its writer.
    public init(
        location: StoreLocation, busyTimeout: TimeInterval = NearcardDatabase.busyTimeout, retryWindow: TimeInterval = 30,
        singleConnection: Bool = false, events: @escaping @Sendable (StoreEvent) -> Void = { _ in }
    ) throws(StoreError) {
        self.location = location
        switch location {
        case .sqlite(let path):
            backend = try SQLiteBackend(path: path, busyTimeout: busyTimeout, singleConnection: singleConnection)
        case .postgres(let p):
            backend = try PostgresBackend(p, retryWindow: retryWindow, report: events)
        }
        path = backend.name
        try backend.migrate(Self.migrations)
    }

    /// Opens the database of a home directory.
    public convenience init(home: NearcardHome) throws(StoreError) {
        try self.init(path: home.databasePath)
    }

    /// Opens an SQLite book that exists to read it only, for a command that writes nothing (`contacts`,
    /// `peers`): not a byte is written, no fdatasync as it opens or closes. A book whose schema is older
    /// than this Nearcard is opened to write, once, to bring it up to date.
    public init(reading path: String, busyTimeout: TimeInterval = NearcardDatabase.busyTimeout) throws(StoreError) {
        location = .sqlite(path: path)
        do {
            let b = try SQLiteBackend(path: path, busyTimeout: busyTimeout, readOnly: true)
            try b.migrate(Self.migrations)
            backend = b
        } catch  where error.kind == .schemaBehind {
            let b = try SQLiteBackend(path: path, busyTimeout: busyTimeout)
            try b.migrate(Self.migrations)
            backend = b
        }
        self.path = backend.name
    }

    /// Whether this store is a PostgreSQL database (shared by a fleet) rather than a local file.
    public var isShared: Bool { location.isPostgres }

    // MARK: what other processes change (a fleet's shared store)

    /// What a write changed that a running node keeps in memory. On a shared (PostgreSQL) store each
    /// such write tells every process watching the database as it commits (`NOTIFY` on
    /// `changeChannel`): a fleet's bots follow a command's change, or another bot's, at once.
    public enum Change: String, Sendable, CaseIterable {
        /// The card, what it shares, the group proof.
        case card
        /// This home's presence key (`id rotate-presence`).
        case presence
        /// A contact added, merged or deleted (recognition follows).
        case contacts
        /// Trust anchors and trusted groups (read at each use: nothing to refresh, said for a face).
        case trust
        /// Address-book accounts added or removed.
        case addressBooks
    }

    /// The PostgreSQL channel a shared store's changes are told on.
    static let changeChannel = "nearcard_changes"

    /// Tells the processes watching a shared store, as `db`'s transaction commits, what it changed;
    /// nothing on SQLite (one node per home, told through its control socket).
    static func announce(_ change: Change, _ db: any SQLConnection) throws {
        guard db.dialect == .postgres else { return }
        try db.execute("SELECT pg_notify(?, ?)", changeChannel, change.rawValue)
    }

    /// Locks an exchange's graph edge for this transaction and announces `.contacts`, in one statement
    /// (one round trip on PostgreSQL; nothing on SQLite, which writes one transaction at a time).
    static func lockAndAnnounce(edge: String, _ db: any SQLConnection) throws {
        guard db.dialect == .postgres else { return }
        try db.execute("SELECT pg_advisory_xact_lock(hashtextextended(?, 0)), pg_notify(?, ?)", "exchange:" + edge, changeChannel, Change.contacts.rawValue)
    }

    /// Watches a shared store for the changes other processes (and this one) commit: `handler` hears
    /// each, and `nil` when the watch was away (the server restarted) and anything may have changed.
    /// Nil for an SQLite book, which nobody else changes behind a running node's back.
    package func watchChanges(_ handler: @escaping @Sendable (Change?) -> Void) -> ChangeWatch? {
        guard let postgres = backend as? PostgresBackend else { return nil }
        let watch = ChangeWatch()
        watch.task.withLock {
            $0 = postgres.watch(channel: Self.changeChannel, listening: { on in watch.live.withLock { $0 = on } }) { payload in
                handler(payload.flatMap(Change.init(rawValue:)))
            }
        }
        return watch
    }

    /// A running watch; `stop()` ends it and closes its connection.
    public final class ChangeWatch: Sendable {
        let live = Mutex(false)
        let task = Mutex<Task<Void, Never>?>(nil)
        /// Whether it is listening now (false while the server is away): a node that caches what the
        /// store holds trusts the watch only while this holds.
        public var isListening: Bool { live.withLock { $0 } }
        public func stop() { task.withLock { $0?.cancel() } }
        deinit { task.withLock { $0?.cancel() } }
    }

    /// Closes the store's connections (a PostgreSQL store's pool; SQLite's file).
    public func close() { backend.close() }

    // MARK: my card and sharing policy

    public func myCard() throws(StoreError) -> MyCard? {
        try read { db in
            guard let row = try db.row("SELECT cardId, cardJSON, updatedAt FROM myCard WHERE id = 1") else { return nil }
            return MyCard(
                cardId: try row["cardId"], card: try Self.decodeCard(try row["cardJSON"], contact: nil),
                updatedAt: Date(timeIntervalSince1970: try row["updatedAt"]))
        }
    }

    /// Saves the user's card (keeping its cardId once one exists).
    @discardableResult
    public func saveMyCard(_ card: Card, now: Date = Date()) throws(StoreError) -> MyCard {
        defer { forgetSharedCard() }
        do { try card.validate() } catch { throw StoreError(.invalidInput, error.phrase) }
        if let problem = SelectiveDisclosure.exchangeProblem(card) {
            throw StoreError(.invalidInput, Phrase("this card could never be exchanged: %1$@; nothing was changed", problem))
        }
        return try write { db in
            let existing: String? = try db.value("SELECT cardId FROM myCard WHERE id = 1")
            let cardId = existing ?? UUID().uuidString
            try db.execute(
                """
                INSERT INTO myCard (id, cardId, cardJSON, updatedAt) VALUES (1, ?, ?, ?)
                ON CONFLICT(id) DO UPDATE SET cardJSON = excluded.cardJSON, updatedAt = excluded.updatedAt
                """, cardId, card.json.canonicalText, now.timeIntervalSince1970)
            try Self.announce(.card, db)
            return MyCard(cardId: cardId, card: card, updatedAt: now)
        }
    }

    /// What this node brings to a session, as it is now: the card, the sharing policy, the group
    /// proof, whether private common contacts is on, and this node's presence key (nil until one is
    /// made), read in one statement.
    public struct SharedCard: Sendable {
        public let card: Card?
        public let policy: SharingPolicy
        public let issuerProof: String?
        public let commonContacts: Bool
        public let presenceKey: [UInt8]?
    }

    /// Every session asks for this; the answer is kept `sharedCardTTL` (a PostgreSQL store is a round
    /// trip away, and even SQLite's read costs a busy bot more than the rest of a session's store
    /// work). A change made through this instance is seen at once; one made by another process (`card
    /// set`, `share`, `id rotate-presence` while a node listens, or another bot of a fleet) reaches the
    /// next session within `sharedCardTTL`.
    package func sharedCard() throws(StoreError) -> SharedCard {
        let now = Date().timeIntervalSince1970
        if let kept = sharedCache.withLock({ $0.flatMap { now - $0.at < Self.sharedCardTTL && now >= $0.at ? $0.card : nil } }) { return kept }
        let fresh = try readSharedCard()
        sharedCache.withLock { $0 = (now, fresh) }
        return fresh
    }

    /// Drops the kept card and settings (this instance just changed them).
    package func forgetSharedCard() { sharedCache.withLock { $0 = nil } }

    /// How long the card and the settings a session reads are kept between reads: a change made by
    /// another process reaches a running node's sessions within this time.
    public static let sharedCardTTL: TimeInterval = 1

    private func readSharedCard() throws(StoreError) -> SharedCard {
        let (cardJSON, fields, proof, common, presence) = try read { db in
            let row = try db.row(
                """
                SELECT (SELECT cardJSON FROM myCard WHERE id = 1),
                       (SELECT value FROM setting WHERE key = 'share.fields'),
                       (SELECT value FROM setting WHERE key = 'card.issuerProof'),
                       (SELECT value FROM setting WHERE key = 'share.commonContacts'),
                       (SELECT presenceKey FROM presence WHERE id = 1)
                """)
            return (try row?[0] as String?, try row?[1] as String?, try row?[2] as String?, try row?[3] as String?, try row?[4] as [UInt8]?)
        }
        let policy = Self.sharingPolicy(stored: fields)
        let presenceKey = presence.flatMap { $0.count == Presence.keyByteCount ? $0 : nil }
        guard let cardJSON else {
            return SharedCard(card: nil, policy: policy, issuerProof: proof, commonContacts: common == "on", presenceKey: presenceKey)
        }
        // The stored card rarely changes: parse it again only when its text did.
        if let hit = parsedCard.withLock({ $0?.json == cardJSON ? $0?.card : nil }) {
            return SharedCard(card: hit, policy: policy, issuerProof: proof, commonContacts: common == "on", presenceKey: presenceKey)
        }
        let card: Card
        do { card = try Self.decodeCard(cardJSON, contact: nil) } catch { throw error as? StoreError ?? StoreError(.database, "\(error)") }
        parsedCard.withLock { $0 = (cardJSON, card) }
        return SharedCard(card: card, policy: policy, issuerProof: proof, commonContacts: common == "on", presenceKey: presenceKey)
    }

    public func sharingPolicy() throws(StoreError) -> SharingPolicy {
        try read { db in
            Self.sharingPolicy(stored: try db.value("SELECT value FROM setting WHERE key = 'share.fields'"))
        }
    }

    /// The policy a `share.fields` setting holds: the default when there is none or it cannot be read.
    static func sharingPolicy(stored text: String?) -> SharingPolicy {
        guard let text, let fields = try? CardField.parseList(text) else { return .default }
        return SharingPolicy(fields: fields)
    }

    public func saveSharingPolicy(_ policy: SharingPolicy) throws(StoreError) {
        defer { forgetSharedCard() }
        try write { db in
            try db.execute(
                "INSERT INTO setting (key, value) VALUES ('share.fields', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                policy.orderedFieldNames.joined(separator: ","))
            try Self.announce(.card, db)
        }
    }

    // MARK: contacts

    public func contacts() throws(StoreError) -> [Contact] {
        try read { db in try db.rows("SELECT * FROM contact ORDER BY lower(name), receivedAt").map(Self.contact) }
    }

    public func contact(id: String) throws(StoreError) -> Contact? {
        try read { db in try db.row("SELECT * FROM contact WHERE id = ?", id).map(Self.contact) }
    }

    public func contact(did: String) throws(StoreError) -> Contact? {
        try read { db in try db.row("SELECT * FROM contact WHERE did = ?", did).map(Self.contact) }
    }

    /// Finds one contact by an exact reference: its id, or at least its first 4 characters (any case);
    /// its DID; or its whole name (ignoring case). Never by a part of a name: a reference that could
    /// name someone else by accident is refused, and one that names several lists them.
    public func findContact(_ query: String) throws(StoreError) -> Contact {
        let all = try contacts()
        let q = query.trimmingCharacters(in: .whitespaces)
        guard !q.isEmpty else { throw StoreError(.unmatched, Phrase("an empty name names no contact; list them with: nearcard contacts")) }
        if let exact = all.first(where: { $0.id.caseInsensitiveCompare(q) == .orderedSame || $0.didPublicKey == q }) { return exact }
        var matches: [Contact] = []
        if q.count >= 4 { matches = all.filter { $0.id.uppercased().hasPrefix(q.uppercased()) } }
        if matches.isEmpty { matches = all.filter { $0.name.caseInsensitiveCompare(q) == .orderedSame } }
        switch matches.count {
        case 1: return matches[0]
        case 0:
            if !q.isEmpty, all.contains(where: { $0.name.range(of: q, options: [.caseInsensitive, .diacriticInsensitive]) != nil }) {
                let near = all.filter { $0.name.range(of: q, options: [.caseInsensitive, .diacriticInsensitive]) != nil }.prefix(5)
                throw StoreError(
                    .unmatched,
                    Phrase(
                        "no contact is named \"%1$@\"; give a whole name, a DID or 4+ characters of the id (%2$@)", q,
                        near.map { "\($0.id.prefix(8)) \($0.name)" }.joined(separator: ", ")))
            } else if q.count < 4, all.contains(where: { $0.id.uppercased().hasPrefix(q.uppercased()) }) {
                throw StoreError(.unmatched, Phrase("no contact is named \"%1$@\"; an id prefix needs at least 4 characters", q))
            }
            throw StoreError(.unmatched, Phrase("no contact is named \"%1$@\"; list them with: nearcard contacts", q))
        default:
            let names = matches.prefix(5).map { "\($0.id.prefix(8)) \($0.name)" }.joined(separator: ", ")
            throw StoreError(.unmatched, Phrase("\"%1$@\" names %2$@ contacts (%3$@); give more of the id", q, String(matches.count), names))
        }
    }

    /// Deletes a contact and everything tied to that person, in one transaction: messages both ways,
    /// the routes issued to them, their exchanges, credentials about them, their graph entry and any
    /// webhook delivery still carrying their card. Then the engine's leftovers go (`compact()`): with
    /// SQLite's `secure_delete` the freed pages are zeroed, and the WAL is checkpointed and truncated.
    @discardableResult
    public func deleteContact(id: String) throws(StoreError) -> Bool {
        let deleted = try write { db in
            guard let row = try db.row("SELECT did, credentialIdsJSON FROM contact WHERE id = ?", id) else { return false }
            let did: String? = try row[0]
            try db.execute("DELETE FROM outboxMessage WHERE contactID = ?", id)
            try db.execute("DELETE FROM inboxMessage WHERE contactID = ?", id)
            for credential in Self.stringList(try row[1]) { try db.execute("DELETE FROM credential WHERE id = ?", credential) }
            if let did {
                try db.execute("DELETE FROM inboxMessage WHERE fromDID = ?", did)
                try db.execute("DELETE FROM outboxMessage WHERE contactDID = ?", did)
                try db.execute("DELETE FROM issuedRoute WHERE contactDID = ?", did)
                try db.execute("DELETE FROM exchange WHERE contactDID = ?", did)
                try db.execute("DELETE FROM withdrawnHistory WHERE contactDID = ?", did)
                try db.execute("DELETE FROM credential WHERE subject = ?", did)
                try db.execute("DELETE FROM socialGraph WHERE didHash = ?", Contact.socialGraphHash(did: did))
                try db.execute("DELETE FROM policyAcceptance WHERE didHash = ?", try Self.visitorHash(did: did, db))
                try db.execute("DELETE FROM commonContact WHERE contactDID = ? OR commonDID = ?", did, did)
                try db.execute("DELETE FROM commonContactCheck WHERE contactDID = ?", did)
                // An exchange still waiting for its confirmation holds the DID (and the route's
                // addresses): deleting the contact ends the asking too.
                try db.execute("DELETE FROM pendingConfirmation WHERE contactDID = ?", did)
                try db.execute("DELETE FROM webhookDelivery WHERE body LIKE ?", "%\"didPublicKey\":\"\(did)\"%")
            }
            // Its cards in address books keep only what deleting them on the server takes.
            try db.execute(
                "UPDATE addressBookCard SET state = 'deleting', written = NULL, serverNote = NULL, serverNickname = NULL, conflict = NULL WHERE contactID = ?",
                id)
            try db.execute("DELETE FROM contact WHERE id = ?", id)
            try Self.announce(.contacts, db)
            return true
        }
        if deleted { compact() }
        return deleted
    }

    /// Leaves nothing deleted behind in the engine's files: SQLite checkpoints its WAL into the
    /// database and truncates it (freed pages are zeroed by `secure_delete`); PostgreSQL's server
    /// reclaims on its own (VACUUM). Best effort: a reader holding an old snapshot may keep the WAL.
    public func compact() {
        backend.compact()
    }

    /// Deletes received messages (by id, or all of one sender with `fromDID`, or every one); returns how many.
    @discardableResult
    public func deleteReceived(id: String? = nil, fromDID: String? = nil) throws(StoreError) -> Int {
        let n = try write { db in
            if let id { return try db.execute("DELETE FROM inboxMessage WHERE id = ?", id) }
            if let fromDID { return try db.execute("DELETE FROM inboxMessage WHERE fromDID = ?", fromDID) }
            return try db.execute("DELETE FROM inboxMessage")
        }
        if n > 0 { compact() }
        return n
    }

    /// Removes delivered and failed messages from the outbox (queued ones stay); returns how many.
    @discardableResult
    public func clearOutbox() throws(StoreError) -> Int {
        let n = try write { db in try db.execute("DELETE FROM outboxMessage WHERE state != 'queued'") }
        if n > 0 { compact() }
        return n
    }

    /// Records a contact that carries a DID (an exchange, a verified QR code) in one transaction:
    /// a contact with the same DID is updated in place (its id, tags, notes and first-received time
    /// stay), otherwise a new one is inserted; the social graph gains the DID's hash.
    @discardableResult
    package func recordContact(_ incoming: Contact, payloadJSON: String?, now: Date = Date()) throws(StoreError) -> Contact {
        try write { db in try Self.upsertContact(incoming, payloadJSON: payloadJSON, now: now, db: db) }
    }

    static func upsertContact(_ incoming: Contact, payloadJSON: String?, now: Date, db: any SQLConnection) throws -> Contact {
        // Two bots of a fleet meeting one visitor at once make one contact: the second waits here.
        if let did = incoming.didPublicKey { try db.lock(did) }
        let (contact, _) = try merged(incoming, now: now, db: db, forUpdate: false)
        try db.execute(Self.insertStatement(contact, payloadJSON: payloadJSON))
        if let did = contact.didPublicKey {
            try db.execute("INSERT INTO socialGraph (didHash) VALUES (?) ON CONFLICT DO NOTHING", Contact.socialGraphHash(did: did))
        }
        return contact
    }

    /// The contact as it will be stored: `incoming` merged with the stored one of the same DID (whose
    /// id, tags, notes and first-received time stay), and whether there was one. With `forUpdate`
    /// the stored row is locked (PostgreSQL) until the transaction ends, so a second bot updating the
    /// same contact waits and then merges with the first one's result.
    static func merged(_ incoming: Contact, now: Date, db: any SQLConnection, forUpdate: Bool) throws -> (Contact, existed: Bool) {
        var contact = incoming
        guard let did = incoming.didPublicKey else { return (contact, false) }
        // Only the members an update keeps are read back (by position: this runs for every exchange
        // with a returning peer).
        var sql = "SELECT id, tagsJSON, notes, receivedAt, credentialIdsJSON, memberOf, groupVerdict FROM contact WHERE did = ?"
        if forUpdate && db.dialect == .postgres { sql += " FOR UPDATE" }
        guard let row = try db.row(sql, did) else { return (contact, false) }
        contact.id = try row[0]
        let stored = Self.stringList(try row[1])
        contact.tags = stored + incoming.tags.filter { !stored.contains($0) }
        contact.notes = try row[2]
        contact.receivedAt = Date(timeIntervalSince1970: try row[3])
        contact.lastInteraction = now
        contact.credentialIds = Array(Set(Self.stringList(try row[4]) + incoming.credentialIds)).sorted()
        // A membership once proven stays known until a card proves another; a card without a group
        // proof leaves the last verdict in place.
        if contact.memberOf == nil { contact.memberOf = try row[5] }
        if contact.groupVerdict == nil { contact.groupVerdict = try row[6] }
        return (contact, true)
    }

    public typealias IssuedRoute = NearcardStore.IssuedRoute

    /// Records a completed exchange in one transaction: the contact (inserted, or updated in place
    /// when the DID is known), its social-graph entry, the route we issued to it, and the exchange
    /// itself (by `node`: which bot of a fleet, or empty). Recording the same payload again changes nothing.
    @discardableResult
    /// With `webhookURL`, a delivery of the contact (as `contacts show --json` prints it) is queued in
    /// the same transaction.
    package func recordExchange(
        _ contact: Contact, issuedRoute: IssuedRoute, payloadJSON: String, node: String = "", webhookURL: String? = nil,
        confirmation: Confirmation = .final, presenceKey: [UInt8]? = nil, commonContacts: [String]? = nil,
        now: Date = Date()
    ) throws(StoreError) -> Contact {
        // Few round trips, as a fleet's server is a network away: the stored contact read (and locked)
        // once, then every row written by one statement (PostgreSQL; SQLite runs them one by one).
        try write { db in
            // One exchange's record and the answer to its confirmation query never run side by side
            // (on PostgreSQL both lock the edge; SQLite writes one at a time): otherwise each could
            // find the other's row missing and both commit — stored here, withdrawn there.
            // The same round trip tells a fleet's other bots the contacts changed (they recognise the new one).
            if case .final(let edge?) = confirmation {
                try Self.lockAndAnnounce(edge: edge, db)
            } else {
                try Self.announce(.contacts, db)
            }
            if case .final(let edge?) = confirmation, try db.row("SELECT 1 FROM withdrawnExchange WHERE edge = ?", edge) != nil {
                throw StoreError(.withdrawn, Phrase("the peer already asked about this exchange and was told it is not kept; it is not stored now"))
            }
            let (saved, existed) = try Self.merged(contact, now: now, db: db, forUpdate: true)
            let id = Self.exchangeID(payloadJSON: payloadJSON)
            // The key the peer handed over with its card (§3), for recognising its tags from now on:
            // written with the row (one write of a row that spans several pages).
            if let presenceKey { try Self.checkPresenceKey(presenceKey) }
            var contactRow = Self.insertStatement(saved, payloadJSON: payloadJSON, presenceKey: saved.didPublicKey == nil ? nil : presenceKey)
            // A new contact is inserted only if no other bot has just made one for the same DID; if
            // one has, the transaction runs again and merges with it.
            if !existed { contactRow.sql = Self.contactInsertSQL }
            var statements = [contactRow]
            statements.append(
                (
                    """
                    INSERT INTO issuedRoute (mailboxToken, contactDID, issuedAt, expiresAt) VALUES (?, ?, ?, ?)
                    ON CONFLICT(mailboxToken) DO UPDATE SET contactDID = excluded.contactDID, issuedAt = excluded.issuedAt, expiresAt = excluded.expiresAt
                    """,
                    [
                        .text(Base64.urlEncode(issuedRoute.mailboxToken)), .text(issuedRoute.contactDID),
                        .real(issuedRoute.issuedAt.timeIntervalSince1970), .real(issuedRoute.expiresAt.timeIntervalSince1970),
                    ]
                ))
            if let did = saved.didPublicKey {
                statements.append(("INSERT INTO socialGraph (didHash) VALUES (?) ON CONFLICT DO NOTHING", [.text(Contact.socialGraphHash(did: did))]))
                statements.append(
                    (
                        "INSERT INTO exchange (id, contactDID, at, node) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
                        [.text(id), .text(did), .real(now.timeIntervalSince1970), .text(node)]
                    ))
            }
            if let webhookURL {
                var exchanges = try saved.didPublicKey.map { try Self.exchanges(db, contactDID: $0) } ?? []
                if let did = saved.didPublicKey, !exchanges.contains(where: { $0.id == id }) {
                    exchanges.append(ExchangeRecord(id: id, contactDID: did, at: now, node: node))
                }
                statements.append(
                    (
                        """
                        INSERT INTO webhookDelivery (id, url, body, createdAt, state, attempts, nextAttemptAt)
                        VALUES (?, ?, ?, ?, 'queued', 0, ?) ON CONFLICT DO NOTHING
                        """,
                        [
                            .text(id), .text(webhookURL), .text(Self.contactDocument(saved, exchanges: exchanges).canonicalText),
                            .real(now.timeIntervalSince1970), .real(now.timeIntervalSince1970),
                        ]
                    ))
            }
            if case .pending(let edge) = confirmation, let did = saved.didPublicKey {
                // What this exchange replaces of the one before, put back if it is withdrawn.
                var previous: (route: String?, edge: String?) = (nil, nil)
                if existed, let row = try db.row("SELECT sealedRoute, graphExportEdgeId FROM contact WHERE did = ?", did) {
                    previous = (try row[0], try row[1])
                }
                statements.append(
                    (
                        """
                        INSERT INTO pendingConfirmation (edge, contactDID, newContact, createdAt, nextAttemptAt, previousRoute, previousEdge)
                        VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(edge) DO NOTHING
                        """,
                        [
                            .text(edge), .text(did), .integer(existed ? 0 : 1), .real(now.timeIntervalSince1970), .real(now.timeIntervalSince1970),
                            previous.route.map { .text($0) } ?? .null, previous.edge.map { .text($0) } ?? .null,
                        ]
                    ))
            }
            if try db.executeAll(statements) == 0 { throw RetryTransaction() }
            // What the common-contacts step found (§22), replacing the last exchange's.
            if let commonContacts, let did = saved.didPublicKey {
                try db.execute(
                    "INSERT INTO commonContactCheck (contactDID, at) VALUES (?, ?) ON CONFLICT(contactDID) DO UPDATE SET at = excluded.at",
                    did, now.timeIntervalSince1970)
                try db.execute("DELETE FROM commonContact WHERE contactDID = ?", did)
                for common in commonContacts {
                    try db.execute(
                        "INSERT INTO commonContact (contactDID, commonDID, at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                        did, common, now.timeIntervalSince1970)
                }
            }
            return saved
        }
    }

    /// An exchange's id in the store: the SHA-256 of the peer's signed payload.
    static func exchangeID(payloadJSON: String) -> String {
        Hex.encode(SHA256.hash(Array(payloadJSON.utf8)))
    }

    /// The exchanges recorded, oldest first; `contactDID` narrows to one contact.
    public func exchanges(contactDID: String? = nil) throws(StoreError) -> [ExchangeRecord] {
        try read { db in
            if let contactDID { return try Self.exchanges(db, contactDID: contactDID) }
            return try db.rows("SELECT * FROM exchange ORDER BY at").map(Self.exchangeRecord)
        }
    }

    static func exchanges(_ db: any SQLConnection, contactDID: String) throws -> [ExchangeRecord] {
        try db.rows("SELECT * FROM exchange WHERE contactDID = ? ORDER BY at", contactDID).map(exchangeRecord)
    }

    static func exchangeRecord(_ row: SQLRow) throws -> ExchangeRecord {
        ExchangeRecord(id: try row["id"], contactDID: try row["contactDID"], at: Date(timeIntervalSince1970: try row["at"]), node: try row["node"])
    }

    /// A contact as `contacts show --json` prints it (and a webhook posts it): its members and its
    /// exchanges (`at`, `node`).
    public static func contactDocument(_ contact: Contact, exchanges: [ExchangeRecord]) -> JSONValue {
        var o = contact.json.objectValue ?? [:]
        o["exchanges"] = .array(exchanges.map { ["at": .string(ISO8601.string($0.at)), "node": .string($0.node)] })
        return .object(o)
    }

    /// The routes issued to a contact, newest first.
    package func issuedRoutes(contactDID: String) throws(StoreError) -> [IssuedRoute] {
        try read { db in
            try db.rows("SELECT * FROM issuedRoute WHERE contactDID = ? ORDER BY issuedAt DESC", contactDID).map { row in
                IssuedRoute(
                    mailboxToken: (try? Base64.urlDecode(try row["mailboxToken"])) ?? [], contactDID: try row["contactDID"],
                    issuedAt: Date(timeIntervalSince1970: try row["issuedAt"]), expiresAt: Date(timeIntervalSince1970: try row["expiresAt"]))
            }
        }
    }

    /// The social graph: hex SHA-256 of every contact's DID, for common-contact intersection.
    package func socialGraphHashes() throws(StoreError) -> Set<String> {
        try read { db in Set(try db.values("SELECT didHash FROM socialGraph", []) as [String]) }
    }

    /// The raw payload a contact was recorded from (for audit and re-verification).
    public func payloadJSON(contactID: String) throws(StoreError) -> String? {
        try read { db in try db.value("SELECT payloadJSON FROM contact WHERE id = ?", contactID) }
    }

    /// The engine's own check ("ok" when sound): SQLite's integrity check; on PostgreSQL, that the
    /// schema's tables are there (the server keeps its own files sound).
    public func integrityCheck() throws(StoreError) -> String {
        try backend.integrityCheck()
    }

    // MARK: rows

    /// Inserts a contact, or updates the one with the same id.
    static func insert(_ c: Contact, payloadJSON: String?, db: any SQLConnection) throws {
        try db.execute(insertStatement(c, payloadJSON: payloadJSON))
    }

    /// The statement that inserts a contact, or updates the one with the same id.
    /// The contact row's upsert. `presenceKey`: the one its last exchange handed over (nil keeps the
    /// stored one).
    static func insertStatement(_ c: Contact, payloadJSON: String?, presenceKey: [UInt8]? = nil) -> (sql: String, arguments: [SQLValue]) {
        func json(_ a: [String]) -> String { JSONValue.array(a.map { .string($0) }).compactText }
        let values: [any SQLBindable] = [
            c.id, c.didPublicKey, c.cardId, c.name, c.card.json.canonicalText, c.source.rawValue, c.verificationStatus.rawValue,
            c.receivedAt.timeIntervalSince1970, c.lastInteraction?.timeIntervalSince1970, json(c.tags), c.notes, c.sealedRoute,
            c.pubKey, c.signPubKey, c.exchangeSignature, c.myExchangeSignature, c.exchangeTimestamp?.timeIntervalSince1970,
            c.myEphemeralMessage, c.theirEphemeralMessage, c.graphExportEdgeId, json(c.credentialIds), json(c.declaredProofClaims),
            payloadJSON, c.memberOf, c.groupVerdict, presenceKey, c.exchangeVersion,
        ]
        return (contactUpsertSQL, values.map { $0.sqlValue })
    }

    /// Cached: this runs for every exchange, and compiling it costs more than running it.
    static let contactUpsertSQL = """
        INSERT INTO contact (id, did, cardId, name, cardJSON, source, verificationStatus, receivedAt, lastInteraction,
            tagsJSON, notes, sealedRoute, pubKey, signPubKey, exchangeSignature, myExchangeSignature, exchangeTimestamp,
            myEphemeralMessage, theirEphemeralMessage, graphExportEdgeId, credentialIdsJSON, declaredProofClaimsJSON, payloadJSON,
            memberOf, groupVerdict, presenceKey, exchangeVersion)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT(id) DO UPDATE SET
            did = excluded.did, cardId = excluded.cardId, name = excluded.name, cardJSON = excluded.cardJSON,
            source = excluded.source, verificationStatus = excluded.verificationStatus, receivedAt = excluded.receivedAt,
            lastInteraction = excluded.lastInteraction, tagsJSON = excluded.tagsJSON, notes = excluded.notes,
            sealedRoute = excluded.sealedRoute, pubKey = excluded.pubKey, signPubKey = excluded.signPubKey,
            exchangeSignature = excluded.exchangeSignature, myExchangeSignature = excluded.myExchangeSignature,
            exchangeTimestamp = excluded.exchangeTimestamp, myEphemeralMessage = excluded.myEphemeralMessage,
            theirEphemeralMessage = excluded.theirEphemeralMessage, graphExportEdgeId = excluded.graphExportEdgeId,
            credentialIdsJSON = excluded.credentialIdsJSON, declaredProofClaimsJSON = excluded.declaredProofClaimsJSON,
            payloadJSON = excluded.payloadJSON, memberOf = excluded.memberOf, groupVerdict = excluded.groupVerdict,
            presenceKey = COALESCE(excluded.presenceKey, contact.presenceKey), exchangeVersion = excluded.exchangeVersion
        """

    /// The same insert for a contact new to the store: it does nothing when another writer has just
    /// inserted one with the same DID (or id), so the caller can run its transaction again.
    static let contactInsertSQL = contactUpsertSQL.components(separatedBy: "ON CONFLICT(id) DO UPDATE")[0] + "ON CONFLICT DO NOTHING"

    /// A JSON array of strings as stored in the `…JSON` list columns (NULL or unreadable: empty).
    static func stringList(_ text: String?) -> [String] {
        ((try? JSONParser.parse(text ?? "[]"))?.arrayValue ?? []).compactMap(\.stringValue)
    }

    static func contact(_ row: SQLRow) throws -> Contact {
        func list(_ column: String) throws -> [String] { stringList(try row[column]) }
        func date(_ column: String) throws -> Date? { (try row[column] as Double?).map { Date(timeIntervalSince1970: $0) } }
        let id: String = try row["id"]
        guard let source = ContactSource(rawValue: try row["source"]), let status = VerificationStatus(rawValue: try row["verificationStatus"]) else {
            throw StoreError(.database, Phrase("contact %1$@ has an unknown source or status; the database is damaged", id))
        }
        return Contact(
            id: id, cardId: try row["cardId"], card: try decodeCard(try row["cardJSON"], contact: id), source: source,
            verificationStatus: status, receivedAt: Date(timeIntervalSince1970: try row["receivedAt"]), lastInteraction: try date("lastInteraction"),
            tags: try list("tagsJSON"), notes: try row["notes"], sealedRoute: try row["sealedRoute"], pubKey: try row["pubKey"],
            signPubKey: try row["signPubKey"], didPublicKey: try row["did"], exchangeSignature: try row["exchangeSignature"],
            myExchangeSignature: try row["myExchangeSignature"], exchangeTimestamp: try date("exchangeTimestamp"),
            myEphemeralMessage: try row["myEphemeralMessage"], theirEphemeralMessage: try row["theirEphemeralMessage"],
            graphExportEdgeId: try row["graphExportEdgeId"], credentialIds: try list("credentialIdsJSON"),
            declaredProofClaims: try list("declaredProofClaimsJSON"), memberOf: try row["memberOf"], groupVerdict: try row["groupVerdict"],
            exchangeVersion: (try row["exchangeVersion"] as Int64?).map(Int.init))
    }

    /// The stored card of the contact with this id, or (nil) the user's own.
    static func decodeCard(_ text: String, contact id: String?) throws -> Card {
        do { return try Card(json: try JSONParser.parse(text)) } catch {
            guard let id else {
                throw StoreError(.database, Phrase("the stored card of your card cannot be read (%1$@); the database is damaged", "\(error)"))
            }
            throw StoreError(.database, Phrase("the stored card of contact %1$@ cannot be read (%2$@); the database is damaged", id, "\(error)"))
        }
    }

    // MARK: access

    func read<T>(_ body: (any SQLConnection) throws -> T) throws(StoreError) -> T {
        try backend.read(body)
    }

    @discardableResult
    func write<T>(_ body: (any SQLConnection) throws -> T) throws(StoreError) -> T {
        guard let deadline = Self.commitDeadline else { return try backend.write(body) }
        return try backend.write { db in
            let value = try body(db)
            // Checked last, before the COMMIT: past it, the transaction is rolled back.
            if Date() >= deadline { throw Self.pastDeadline }
            return value
        }
    }

    /// The time by which a write made in this task must have committed, if any (an exchange's phase
    /// deadline, docs/PROTOCOL.md §12: a side past it stores nothing). Set with `committing(by:_:)`;
    /// a PostgreSQL store stops retrying at it, and no store commits after it.
    @TaskLocal public static var commitDeadline: Date?

    /// Runs `body`, whose writes commit by `deadline` or not at all (`.pastDeadline`, `.inDoubt`).
    package static func committing<T>(by deadline: Date?, _ body: () throws -> T) rethrows -> T {
        try $commitDeadline.withValue(deadline, operation: body)
    }

    static var pastDeadline: StoreError {
        StoreError(.pastDeadline, Phrase("the book did not answer before the exchange's deadline; nothing of it was stored"))
    }
}

extension NearcardDatabase {
    /// Free space below which the database counts as full: an exchange writes a few kB, SQLite's WAL
    /// and checkpoint need room beyond that.
    public static let minimumFreeBytes: UInt64 = 1 << 20

    /// Checks that a write would land now: for SQLite, the file system holding the database is
    /// writable and has `minimumFreeBytes` free and the database takes a write lock; for PostgreSQL,
    /// the server answers and is not a read-only standby. Run before an exchange sends anything, so a
    /// peer never holds a contact this side could not keep.
    package func checkWritable() throws(StoreError) {
        try backend.checkWritable()
    }
}
