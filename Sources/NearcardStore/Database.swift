import Foundation
internal import GRDB
import Synchronization
import NearcardCrypto
import NearcardModel

/// Nearcard's SQLite database (`$NEARCARD_HOME/nearcard.sqlite`, WAL mode) through GRDB.
/// Opening runs the migrations; every write that records an outcome is one transaction.
public final class NearcardDatabase: Sendable {
    public let path: String
    let pool: DatabasePool
    let busyTimeoutUsed: TimeInterval
    /// The last card text `sharedCard()` parsed, and the card.
    private let parsedCard = Mutex<(json: String, card: Card)?>(nil)

    /// How long a write waits for another process holding the database before giving up.
    public static let busyTimeout: TimeInterval = 5

    public init(path: String, busyTimeout: TimeInterval = NearcardDatabase.busyTimeout) throws(StoreError) {
        self.path = path
        self.busyTimeoutUsed = busyTimeout
        try FileIO.makeDirectory(FileIO.directoryName(path), mode: 0o700)
        var config = Configuration()
        config.busyMode = .timeout(busyTimeout)
        config.prepareDatabase { db in
            try db.execute(sql: "PRAGMA foreign_keys = ON")
        }
        let pool: DatabasePool
        do { pool = try DatabasePool(path: path, configuration: config) } catch {
            throw Self.storeError(error, path: path, busyTimeout: busyTimeout)
        }
        self.pool = pool
        do {
            // A read first: when the schema is current (the usual case) opening takes no write lock,
            // so commands can read while a running node writes.
            let applied = try pool.read { db in try Set(Self.migrator.appliedIdentifiers(db)) }
            let known = Set(Self.migrator.migrations)
            if !applied.isSubset(of: known) {
                throw StoreError(.database, "\(path) was written by a newer Nearcard (migrations \(applied.subtracting(known).sorted().joined(separator: ", "))); upgrade Nearcard to use it")
            }
            if applied != known { try Self.migrator.migrate(pool) }
        } catch let error as StoreError {
            throw error
        } catch {
            throw Self.storeError(error, path: path, busyTimeout: busyTimeout)
        }
        _ = chmod(path, 0o600)
    }

    /// Opens the database of a home directory.
    public convenience init(home: NearcardHome) throws(StoreError) {
        try self.init(path: home.databasePath)
    }

    // MARK: migrations (never edit a shipped one; add a new one)

    static let migrator: DatabaseMigrator = {
        var m = DatabaseMigrator()
        m.registerMigration("v1-cards-contacts") { db in
            try db.execute(sql: """
                CREATE TABLE myCard (
                    id INTEGER PRIMARY KEY CHECK (id = 1),
                    cardId TEXT NOT NULL,
                    cardJSON TEXT NOT NULL,
                    updatedAt REAL NOT NULL
                );
                CREATE TABLE setting (
                    key TEXT PRIMARY KEY,
                    value TEXT NOT NULL
                );
                CREATE TABLE contact (
                    id TEXT PRIMARY KEY,
                    did TEXT UNIQUE,
                    cardId TEXT,
                    name TEXT NOT NULL,
                    cardJSON TEXT NOT NULL,
                    source TEXT NOT NULL,
                    verificationStatus TEXT NOT NULL,
                    receivedAt REAL NOT NULL,
                    lastInteraction REAL,
                    tagsJSON TEXT NOT NULL DEFAULT '[]',
                    notes TEXT,
                    sealedRoute TEXT,
                    pubKey TEXT,
                    signPubKey TEXT,
                    exchangeSignature TEXT,
                    myExchangeSignature TEXT,
                    exchangeTimestamp REAL,
                    myEphemeralMessage TEXT,
                    theirEphemeralMessage TEXT,
                    graphExportEdgeId TEXT,
                    credentialIdsJSON TEXT NOT NULL DEFAULT '[]',
                    declaredProofClaimsJSON TEXT NOT NULL DEFAULT '[]',
                    payloadJSON TEXT
                );
                CREATE INDEX contact_name ON contact(name);
                CREATE TABLE socialGraph (
                    didHash TEXT PRIMARY KEY
                );
                """)
        }
        m.registerMigration("v2-issued-routes") { db in
            // The sealed routes we handed out: the mailbox token is how a contact proves who it is
            // when it delivers a follow-up message later.
            try db.execute(sql: """
                CREATE TABLE issuedRoute (
                    mailboxToken TEXT PRIMARY KEY,
                    contactDID TEXT NOT NULL,
                    issuedAt REAL NOT NULL,
                    expiresAt REAL NOT NULL
                );
                CREATE INDEX issuedRoute_contact ON issuedRoute(contactDID);
                """)
        }
        m.registerMigration("v3-messages") { db in
            try db.execute(sql: """
                CREATE TABLE outboxMessage (
                    id TEXT PRIMARY KEY,
                    contactID TEXT NOT NULL REFERENCES contact(id) ON DELETE CASCADE,
                    contactDID TEXT NOT NULL,
                    text TEXT NOT NULL,
                    envelopeJSON TEXT NOT NULL,
                    createdAt REAL NOT NULL,
                    state TEXT NOT NULL,
                    attempts INTEGER NOT NULL DEFAULT 0,
                    nextAttemptAt REAL NOT NULL,
                    leaseUntil REAL,
                    lastError TEXT,
                    deliveredAt REAL
                );
                CREATE INDEX outboxMessage_due ON outboxMessage(state, nextAttemptAt);
                CREATE TABLE inboxMessage (
                    fromDID TEXT NOT NULL,
                    id TEXT NOT NULL,
                    contactID TEXT,
                    text TEXT NOT NULL,
                    sentAt REAL NOT NULL,
                    receivedAt REAL NOT NULL,
                    senderPubKey TEXT NOT NULL,
                    senderSignPubKey TEXT NOT NULL,
                    envelopeJSON TEXT NOT NULL,
                    PRIMARY KEY (fromDID, id)
                );
                CREATE INDEX inboxMessage_received ON inboxMessage(receivedAt);
                """)
        }
        m.registerMigration("v4-trust-credentials") { db in
            try db.execute(sql: """
                CREATE TABLE trustAnchor (
                    did TEXT PRIMARY KEY,
                    addedAt REAL NOT NULL,
                    note TEXT
                );
                CREATE TABLE credential (
                    id TEXT PRIMARY KEY,
                    issuer TEXT NOT NULL,
                    subject TEXT,
                    typesJSON TEXT NOT NULL,
                    jwt TEXT NOT NULL,
                    issuedAt REAL,
                    expiresAt REAL,
                    status TEXT NOT NULL,
                    reason TEXT NOT NULL,
                    importedAt REAL NOT NULL
                );
                """)
        }
        m.registerMigration("v5-groups") { db in
            try db.execute(sql: """
                CREATE TABLE trustedGroup (
                    root TEXT PRIMARY KEY,
                    name TEXT NOT NULL,
                    depth INTEGER,
                    addedAt REAL NOT NULL
                );
                """)
        }
        m.registerMigration("v6-contact-group") { db in
            try db.execute(sql: "ALTER TABLE contact ADD COLUMN memberOf TEXT")
        }
        m.registerMigration("v7-contact-group-verdict") { db in
            try db.execute(sql: "ALTER TABLE contact ADD COLUMN groupVerdict TEXT")
        }
        m.registerMigration("v8-invitations") { db in
            try db.execute(sql: """
                CREATE TABLE invitation (
                    id TEXT PRIMARY KEY,
                    secret BLOB NOT NULL,
                    createdAt REAL NOT NULL,
                    expiresAt REAL NOT NULL,
                    usesLeft INTEGER NOT NULL
                )
                """)
        }
        return m
    }()


    // MARK: my card and sharing policy

    public struct MyCard: Sendable, Equatable {
        public let cardId: String
        public let card: Card
        public let updatedAt: Date
    }

    public func myCard() throws(StoreError) -> MyCard? {
        try read { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT cardId, cardJSON, updatedAt FROM myCard WHERE id = 1") else { return nil }
            return MyCard(cardId: row["cardId"], card: try Self.decodeCard(row["cardJSON"], what: "your card"),
                          updatedAt: Date(timeIntervalSince1970: row["updatedAt"]))
        }
    }

    /// Saves the user's card (keeping its cardId once one exists).
    @discardableResult
    public func saveMyCard(_ card: Card, now: Date = Date()) throws(StoreError) -> MyCard {
        do { try card.validate() } catch { throw StoreError(.invalidInput, error.message) }
        if let problem = SelectiveDisclosure.exchangeProblem(card) {
            throw StoreError(.invalidInput, "this card could never be exchanged: \(problem); nothing was changed")
        }
        return try write { db in
            let existing = try String.fetchOne(db, sql: "SELECT cardId FROM myCard WHERE id = 1")
            let cardId = existing ?? UUID().uuidString
            try db.execute(sql: """
                INSERT INTO myCard (id, cardId, cardJSON, updatedAt) VALUES (1, ?, ?, ?)
                ON CONFLICT(id) DO UPDATE SET cardJSON = excluded.cardJSON, updatedAt = excluded.updatedAt
                """, arguments: [cardId, card.json.canonicalText, now.timeIntervalSince1970])
            return MyCard(cardId: cardId, card: card, updatedAt: now)
        }
    }

    /// What this node brings to an exchange, as it is now: the card, the sharing policy and the group
    /// proof, read in one transaction (so an edit from another process is seen by the next session).
    public struct SharedCard: Sendable {
        public let card: Card?
        public let policy: SharingPolicy
        public let issuerProof: String?
    }

    public func sharedCard() throws(StoreError) -> SharedCard {
        let (cardJSON, fields, proof) = try read { db in
            let row = try Row.fetchOne(db.cachedStatement(sql: """
                SELECT (SELECT cardJSON FROM myCard WHERE id = 1),
                       (SELECT value FROM setting WHERE key = 'share.fields'),
                       (SELECT value FROM setting WHERE key = 'card.issuerProof')
                """))
            return (row?[0] as String?, row?[1] as String?, row?[2] as String?)
        }
        let policy = Self.sharingPolicy(stored: fields)
        guard let cardJSON else { return SharedCard(card: nil, policy: policy, issuerProof: proof) }
        // The stored card rarely changes: parse it again only when its text did.
        if let hit = parsedCard.withLock({ $0?.json == cardJSON ? $0?.card : nil }) {
            return SharedCard(card: hit, policy: policy, issuerProof: proof)
        }
        let card: Card
        do { card = try Self.decodeCard(cardJSON, what: "your card") } catch { throw error as? StoreError ?? StoreError(.database, "\(error)") }
        parsedCard.withLock { $0 = (cardJSON, card) }
        return SharedCard(card: card, policy: policy, issuerProof: proof)
    }

    public func sharingPolicy() throws(StoreError) -> SharingPolicy {
        try read { db in
            Self.sharingPolicy(stored: try String.fetchOne(db, sql: "SELECT value FROM setting WHERE key = 'share.fields'"))
        }
    }

    /// The policy a `share.fields` setting holds: the default when there is none or it cannot be read.
    static func sharingPolicy(stored text: String?) -> SharingPolicy {
        guard let text, let fields = try? CardField.parseList(text) else { return .default }
        return SharingPolicy(fields: fields)
    }

    public func saveSharingPolicy(_ policy: SharingPolicy) throws(StoreError) {
        try write { db in
            try db.execute(sql: "INSERT INTO setting (key, value) VALUES ('share.fields', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                           arguments: [policy.orderedFieldNames.joined(separator: ",")])
        }
    }

    // MARK: contacts

    public func contacts() throws(StoreError) -> [Contact] {
        try read { db in try Row.fetchAll(db, sql: "SELECT * FROM contact ORDER BY name COLLATE NOCASE, receivedAt").map(Self.contact) }
    }

    public func contact(id: String) throws(StoreError) -> Contact? {
        try read { db in try Row.fetchOne(db, sql: "SELECT * FROM contact WHERE id = ?", arguments: [id]).map(Self.contact) }
    }

    public func contact(did: String) throws(StoreError) -> Contact? {
        try read { db in try Row.fetchOne(db, sql: "SELECT * FROM contact WHERE did = ?", arguments: [did]).map(Self.contact) }
    }

    /// Finds one contact by an exact reference: its id, or at least its first 4 characters (any case);
    /// its DID; or its whole name (ignoring case). Never by a part of a name: a reference that could
    /// name someone else by accident is refused, and one that names several lists them.
    public func findContact(_ query: String) throws(StoreError) -> Contact {
        let all = try contacts()
        let q = query.trimmingCharacters(in: .whitespaces)
        guard !q.isEmpty else { throw StoreError(.notFound, "an empty name names no contact; list them with: nearcard contacts") }
        if let exact = all.first(where: { $0.id.caseInsensitiveCompare(q) == .orderedSame || $0.didPublicKey == q }) { return exact }
        var matches: [Contact] = []
        if q.count >= 4 { matches = all.filter { $0.id.uppercased().hasPrefix(q.uppercased()) } }
        if matches.isEmpty { matches = all.filter { $0.name.caseInsensitiveCompare(q) == .orderedSame } }
        switch matches.count {
        case 1: return matches[0]
        case 0:
            var hint = "list them with: nearcard contacts"
            if !q.isEmpty, all.contains(where: { $0.name.range(of: q, options: [.caseInsensitive, .diacriticInsensitive]) != nil }) {
                let near = all.filter { $0.name.range(of: q, options: [.caseInsensitive, .diacriticInsensitive]) != nil }.prefix(5)
                hint = "give a whole name, a DID or 4+ characters of the id (\(near.map { "\($0.id.prefix(8)) \($0.name)" }.joined(separator: ", ")))"
            } else if q.count < 4, all.contains(where: { $0.id.uppercased().hasPrefix(q.uppercased()) }) {
                hint = "an id prefix needs at least 4 characters"
            }
            throw StoreError(.notFound, "no contact is named \"\(q)\"; \(hint)")
        default:
            let names = matches.prefix(5).map { "\($0.id.prefix(8)) \($0.name)" }.joined(separator: ", ")
            throw StoreError(.notFound, "\"\(q)\" names \(matches.count) contacts (\(names)); give more of the id")
        }
    }

    @discardableResult
    public func deleteContact(id: String) throws(StoreError) -> Bool {
        try write { db in
            let did = try String.fetchOne(db, sql: "SELECT did FROM contact WHERE id = ?", arguments: [id])
            try db.execute(sql: "DELETE FROM contact WHERE id = ?", arguments: [id])
            if let did { try db.execute(sql: "DELETE FROM socialGraph WHERE didHash = ?", arguments: [Contact.socialGraphHash(did: did)]) }
            return db.changesCount > 0 || did != nil
        }
    }

    /// Records a contact that carries a DID (an exchange, a verified QR code) in one transaction:
    /// a contact with the same DID is updated in place (its id, tags, notes and first-received time
    /// stay), otherwise a new one is inserted; the social graph gains the DID's hash.
    @discardableResult
    public func recordContact(_ incoming: Contact, payloadJSON: String?, now: Date = Date()) throws(StoreError) -> Contact {
        try write { db in try Self.upsertContact(incoming, payloadJSON: payloadJSON, now: now, db: db) }
    }

    static func upsertContact(_ incoming: Contact, payloadJSON: String?, now: Date, db: GRDB.Database) throws -> Contact {
        var contact = incoming
        // Only the members an update keeps are read back (by position: this runs for every exchange
        // with a returning peer).
        if let did = incoming.didPublicKey,
           let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT id, tagsJSON, notes, receivedAt, credentialIdsJSON, memberOf, groupVerdict FROM contact WHERE did = ?"),
                                      arguments: [did]) {
            contact.id = row[0]
            let stored = Self.stringList(row[1])
            contact.tags = stored + incoming.tags.filter { !stored.contains($0) }
            contact.notes = row[2]
            contact.receivedAt = Date(timeIntervalSince1970: row[3])
            contact.lastInteraction = now
            contact.credentialIds = Array(Set(Self.stringList(row[4]) + incoming.credentialIds)).sorted()
            // A membership once proven stays known until a card proves another; a card without a group
            // proof leaves the last verdict in place.
            if contact.memberOf == nil { contact.memberOf = row[5] }
            if contact.groupVerdict == nil { contact.groupVerdict = row[6] }
        }
        try Self.insert(contact, payloadJSON: payloadJSON, db: db)
        if let did = contact.didPublicKey {
            try db.cachedStatement(sql: "INSERT OR IGNORE INTO socialGraph (didHash) VALUES (?)").execute(arguments: [Contact.socialGraphHash(did: did)])
        }
        return contact
    }

    public typealias IssuedRoute = NearcardStore.IssuedRoute

    /// Records a completed exchange in one transaction: the contact (inserted, or updated in place
    /// when the DID is known), its social-graph entry, and the route we issued to it.
    @discardableResult
    public func recordExchange(_ contact: Contact, issuedRoute: IssuedRoute, payloadJSON: String, now: Date = Date()) throws(StoreError) -> Contact {
        try write { db in
            let saved = try Self.upsertContact(contact, payloadJSON: payloadJSON, now: now, db: db)
            try db.cachedStatement(sql: "INSERT OR REPLACE INTO issuedRoute (mailboxToken, contactDID, issuedAt, expiresAt) VALUES (?, ?, ?, ?)")
                .execute(arguments: [Base64.urlEncode(issuedRoute.mailboxToken), issuedRoute.contactDID,
                                       issuedRoute.issuedAt.timeIntervalSince1970, issuedRoute.expiresAt.timeIntervalSince1970])
            return saved
        }
    }

    /// The routes issued to a contact, newest first.
    public func issuedRoutes(contactDID: String) throws(StoreError) -> [IssuedRoute] {
        try read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM issuedRoute WHERE contactDID = ? ORDER BY issuedAt DESC", arguments: [contactDID]).map { row in
                IssuedRoute(mailboxToken: (try? Base64.urlDecode(row["mailboxToken"])) ?? [], contactDID: row["contactDID"],
                            issuedAt: Date(timeIntervalSince1970: row["issuedAt"]), expiresAt: Date(timeIntervalSince1970: row["expiresAt"]))
            }
        }
    }

    /// The social graph: hex SHA-256 of every contact's DID, for common-contact intersection.
    public func socialGraphHashes() throws(StoreError) -> Set<String> {
        try read { db in Set(try String.fetchAll(db, sql: "SELECT didHash FROM socialGraph")) }
    }

    /// The raw payload a contact was recorded from (for audit and re-verification).
    public func payloadJSON(contactID: String) throws(StoreError) -> String? {
        try read { db in try String.fetchOne(db, sql: "SELECT payloadJSON FROM contact WHERE id = ?", arguments: [contactID]) }
    }

    /// SQLite's own integrity check ("ok" when the file is sound).
    public func integrityCheck() throws(StoreError) -> String {
        try read { db in try String.fetchAll(db, sql: "PRAGMA integrity_check").joined(separator: "; ") }
    }

    // MARK: rows

    /// Inserts a contact, or updates the one with the same id.
    static func insert(_ c: Contact, payloadJSON: String?, db: GRDB.Database) throws {
        func json(_ a: [String]) -> String { JSONValue.array(a.map { .string($0) }).compactText }
        // Cached: this runs for every exchange, and compiling it costs more than running it.
        try db.cachedStatement(sql: """
            INSERT INTO contact (id, did, cardId, name, cardJSON, source, verificationStatus, receivedAt, lastInteraction,
                tagsJSON, notes, sealedRoute, pubKey, signPubKey, exchangeSignature, myExchangeSignature, exchangeTimestamp,
                myEphemeralMessage, theirEphemeralMessage, graphExportEdgeId, credentialIdsJSON, declaredProofClaimsJSON, payloadJSON,
                memberOf, groupVerdict)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT(id) DO UPDATE SET
                did = excluded.did, cardId = excluded.cardId, name = excluded.name, cardJSON = excluded.cardJSON,
                source = excluded.source, verificationStatus = excluded.verificationStatus, receivedAt = excluded.receivedAt,
                lastInteraction = excluded.lastInteraction, tagsJSON = excluded.tagsJSON, notes = excluded.notes,
                sealedRoute = excluded.sealedRoute, pubKey = excluded.pubKey, signPubKey = excluded.signPubKey,
                exchangeSignature = excluded.exchangeSignature, myExchangeSignature = excluded.myExchangeSignature,
                exchangeTimestamp = excluded.exchangeTimestamp, myEphemeralMessage = excluded.myEphemeralMessage,
                theirEphemeralMessage = excluded.theirEphemeralMessage, graphExportEdgeId = excluded.graphExportEdgeId,
                credentialIdsJSON = excluded.credentialIdsJSON, declaredProofClaimsJSON = excluded.declaredProofClaimsJSON,
                payloadJSON = excluded.payloadJSON, memberOf = excluded.memberOf, groupVerdict = excluded.groupVerdict
            """).execute(arguments: [
                c.id, c.didPublicKey, c.cardId, c.name, c.card.json.canonicalText, c.source.rawValue, c.verificationStatus.rawValue,
                c.receivedAt.timeIntervalSince1970, c.lastInteraction?.timeIntervalSince1970, json(c.tags), c.notes, c.sealedRoute,
                c.pubKey, c.signPubKey, c.exchangeSignature, c.myExchangeSignature, c.exchangeTimestamp?.timeIntervalSince1970,
                c.myEphemeralMessage, c.theirEphemeralMessage, c.graphExportEdgeId, json(c.credentialIds), json(c.declaredProofClaims),
                payloadJSON, c.memberOf, c.groupVerdict,
            ])
    }

    /// A JSON array of strings as stored in the `…JSON` list columns (NULL or unreadable: empty).
    static func stringList(_ text: String?) -> [String] {
        ((try? JSONParser.parse(text ?? "[]"))?.arrayValue ?? []).compactMap(\.stringValue)
    }

    static func contact(_ row: Row) throws -> Contact {
        func list(_ column: String) -> [String] { stringList(row[column]) }
        func date(_ column: String) -> Date? { (row[column] as Double?).map { Date(timeIntervalSince1970: $0) } }
        let id: String = row["id"]
        guard let source = ContactSource(rawValue: row["source"]), let status = VerificationStatus(rawValue: row["verificationStatus"]) else {
            throw StoreError(.database, "contact \(id) has an unknown source or status; the database is damaged")
        }
        return Contact(
            id: id, cardId: row["cardId"], card: try decodeCard(row["cardJSON"], what: "contact \(id)"), source: source,
            verificationStatus: status, receivedAt: Date(timeIntervalSince1970: row["receivedAt"]), lastInteraction: date("lastInteraction"),
            tags: list("tagsJSON"), notes: row["notes"], sealedRoute: row["sealedRoute"], pubKey: row["pubKey"], signPubKey: row["signPubKey"],
            didPublicKey: row["did"], exchangeSignature: row["exchangeSignature"], myExchangeSignature: row["myExchangeSignature"],
            exchangeTimestamp: date("exchangeTimestamp"), myEphemeralMessage: row["myEphemeralMessage"],
            theirEphemeralMessage: row["theirEphemeralMessage"], graphExportEdgeId: row["graphExportEdgeId"],
            credentialIds: list("credentialIdsJSON"), declaredProofClaims: list("declaredProofClaimsJSON"), memberOf: row["memberOf"],
            groupVerdict: row["groupVerdict"])
    }

    static func decodeCard(_ text: String, what: String) throws -> Card {
        do { return try Card(json: try JSONParser.parse(text)) } catch {
            throw StoreError(.database, "the stored card of \(what) cannot be read (\(error)); the database is damaged")
        }
    }

    // MARK: access with error mapping

    func read<T>(_ body: (GRDB.Database) throws -> T) throws(StoreError) -> T {
        do { return try pool.read(body) } catch let e as StoreError { throw e } catch { throw Self.storeError(error, path: path, busyTimeout: busyTimeoutUsed) }
    }

    func write<T>(_ body: (GRDB.Database) throws -> T) throws(StoreError) -> T {
        do { return try pool.write(body) } catch let e as StoreError { throw e } catch { throw Self.storeError(error, path: path, busyTimeout: busyTimeoutUsed) }
    }

    static func storeError(_ error: Error, path: String, busyTimeout: TimeInterval) -> StoreError {
        guard let e = error as? DatabaseError else { return StoreError(.database, "\(path): \(error)") }
        switch e.resultCode.primaryResultCode {
        case .SQLITE_BUSY, .SQLITE_LOCKED:
            return StoreError(.database, "\(path) is locked by another process (waited \(busyTimeout) s); try again when it is done")
        case .SQLITE_NOTADB, .SQLITE_CORRUPT:
            return StoreError(.database, "\(path) is not a Nearcard database or is damaged; it was left untouched (move it away to start a new one)")
        case .SQLITE_CANTOPEN, .SQLITE_PERM, .SQLITE_READONLY, .SQLITE_IOERR, .SQLITE_FULL:
            return StoreError(.io, "\(path): \(e.message ?? "\(e.resultCode)")")
        default:
            return StoreError(.database, "\(path): \(e.message ?? "\(e.resultCode)")")
        }
    }
}

extension NearcardDatabase {
    /// Free space below which the database counts as full: an exchange writes a few kB, SQLite's WAL
    /// and checkpoint need room beyond that.
    public static let minimumFreeBytes: UInt64 = 1 << 20

    /// Checks that a write would land now: the file system holding the database is writable and has
    /// `minimumFreeBytes` free, and the database takes a write lock. Run before an exchange sends
    /// anything, so a peer never holds a contact this side could not keep.
    public func checkWritable() throws(StoreError) {
        let directory = FileIO.directoryName(path)
        var fs = statvfs()
        if statvfs(directory, &fs) == 0 {
            if fs.f_flag & UInt(ST_RDONLY) != 0 {
                throw StoreError(.io, "\(directory) is on a read-only file system: nothing can be stored there; use a writable --home")
            }
            let free = UInt64(fs.f_bavail) * UInt64(fs.f_frsize)
            if free < Self.minimumFreeBytes {
                throw StoreError(.io, "the disk holding \(directory) is full (\(free / 1024) KiB free, \(Self.minimumFreeBytes / 1024) KiB needed); free some space")
            }
        }
        for file in [directory, path] where access(file, W_OK) != 0 {
            throw StoreError(.io, "\(file) is not writable by this user (\(String(cString: strerror(errno)))); fix its permissions or use another --home")
        }
        do {
            try pool.writeWithoutTransaction { db in
                try db.execute(sql: "BEGIN IMMEDIATE")
                try db.execute(sql: "ROLLBACK")
            }
        } catch {
            throw Self.storeError(error, path: path, busyTimeout: busyTimeoutUsed)
        }
    }
}
