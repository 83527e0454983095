/// The book's schema, as the migrations that make it: run in order when a store opens, each once, on
/// both backends (SQLite and PostgreSQL). A migration that has shipped is never edited; a change is a
/// new one at the end.
extension NearcardDatabase {
    static let migrations: [Migration] = [
        Migration(
            id: "v1-cards-contacts",
            sql: """
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
                """),
        // The sealed routes we handed out: the mailbox token is how a contact proves who it is when
        // it delivers a follow-up message later.
        Migration(
            id: "v2-issued-routes",
            sql: """
                CREATE TABLE issuedRoute (
                    mailboxToken TEXT PRIMARY KEY,
                    contactDID TEXT NOT NULL,
                    issuedAt REAL NOT NULL,
                    expiresAt REAL NOT NULL
                );
                CREATE INDEX issuedRoute_contact ON issuedRoute(contactDID);
                """),
        Migration(
            id: "v3-messages",
            sql: """
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
                """),
        Migration(
            id: "v4-trust-credentials",
            sql: """
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
                """),
        Migration(
            id: "v5-groups",
            sql: """
                CREATE TABLE trustedGroup (
                    root TEXT PRIMARY KEY,
                    name TEXT NOT NULL,
                    depth INTEGER,
                    addedAt REAL NOT NULL
                );
                """),
        Migration(id: "v6-contact-group", sql: "ALTER TABLE contact ADD COLUMN memberOf TEXT"),
        Migration(id: "v7-contact-group-verdict", sql: "ALTER TABLE contact ADD COLUMN groupVerdict TEXT"),
        Migration(
            id: "v8-invitations",
            sql: """
                CREATE TABLE invitation (
                    id TEXT PRIMARY KEY,
                    secret BLOB NOT NULL,
                    createdAt REAL NOT NULL,
                    expiresAt REAL NOT NULL,
                    usesLeft INTEGER NOT NULL
                )
                """),
        // Every exchange, once: a contact met twice (or by two bots of a fleet at once) is one contact
        // with two exchanges. The id is the SHA-256 of the peer's signed payload, so recording the
        // same exchange again (a retried transaction) changes nothing. A queued message names the
        // identity that signed it: in a fleet whose bots have keys of their own, only a bot with that
        // key can deliver it (NULL: written before, by the one node there was).
        Migration(
            id: "v9-fleet",
            sql: """
                CREATE TABLE exchange (
                    id TEXT PRIMARY KEY,
                    contactDID TEXT NOT NULL,
                    at REAL NOT NULL,
                    node TEXT NOT NULL
                );
                CREATE INDEX exchange_contact ON exchange(contactDID);
                INSERT INTO exchange (id, contactDID, at, node)
                    SELECT 'before-v9:' || id, did, COALESCE(exchangeTimestamp, receivedAt), ''
                    FROM contact WHERE did IS NOT NULL AND source = 'proximity';
                ALTER TABLE outboxMessage ADD COLUMN fromDID TEXT
                """),
        // Webhook deliveries waiting (or done): queued in the exchange's own transaction, so a
        // completed exchange is never left unannounced; the id is the exchange's.
        Migration(
            id: "v10-webhooks",
            sql: """
                CREATE TABLE webhookDelivery (
                    id TEXT PRIMARY KEY,
                    url TEXT NOT NULL,
                    body TEXT NOT NULL,
                    createdAt REAL NOT NULL,
                    state TEXT NOT NULL,
                    attempts INTEGER NOT NULL DEFAULT 0,
                    nextAttemptAt REAL NOT NULL,
                    leaseUntil REAL,
                    lastError TEXT,
                    deliveredAt REAL
                );
                CREATE INDEX webhookDelivery_due ON webhookDelivery(state, nextAttemptAt)
                """),
        // A delivered message keeps its metadata and drops its text (`markDelivered` does so from now
        // on): the ones delivered before lose theirs here. Empty, not NULL: both columns are NOT NULL.
        Migration(
            id: "v11-delivered-messages-drop-text",
            sql: """
                UPDATE outboxMessage SET text = '', envelopeJSON = '' WHERE state = 'delivered'
                """),
        // Presence (docs/PROTOCOL.md §3): this node's presence key (one row, made on first use), and
        // each contact's, handed over in the exchange, with which their rotating tags are recognised.
        Migration(
            id: "v12-presence",
            sql: """
                CREATE TABLE presence (
                    id INTEGER PRIMARY KEY CHECK (id = 1),
                    presenceKey BLOB NOT NULL,
                    createdAt REAL NOT NULL
                );
                ALTER TABLE contact ADD COLUMN presenceKey BLOB
                """),
        // Agreement (protocol version 2, docs/PROTOCOL.md §11): an initiator stores a contact as
        // unconfirmed until the responder confirms, in the session or by answering a confirmation
        // query; a responder that answered "not held" remembers the exchange so a late `done` for it
        // commits nothing.
        // (and follow-ups that expire, §15: both nodes delete them at `expiresAt`; and the contacts in
        // common an exchange found, §22: one row per common contact, replaced by the next exchange)
        Migration(
            id: "v13-agreement-expiry",
            sql: """
                CREATE TABLE pendingConfirmation (
                    edge TEXT PRIMARY KEY,
                    contactDID TEXT NOT NULL,
                    newContact INTEGER NOT NULL,
                    createdAt REAL NOT NULL,
                    attempts INTEGER NOT NULL DEFAULT 0,
                    nextAttemptAt REAL NOT NULL,
                    lastError TEXT
                );
                CREATE TABLE withdrawnExchange (
                    edge TEXT PRIMARY KEY,
                    at REAL NOT NULL
                );
                ALTER TABLE inboxMessage ADD COLUMN expiresAt REAL;
                ALTER TABLE outboxMessage ADD COLUMN expiresAt REAL;
                CREATE TABLE commonContact (
                    contactDID TEXT NOT NULL,
                    commonDID TEXT NOT NULL,
                    at REAL NOT NULL,
                    PRIMARY KEY (contactDID, commonDID)
                );
                CREATE TABLE commonContactCheck (
                    contactDID TEXT PRIMARY KEY,
                    at REAL NOT NULL
                );
                CREATE TABLE commonContactRun (
                    peerHash TEXT NOT NULL,
                    at REAL NOT NULL
                );
                CREATE INDEX commonContactRun_peer ON commonContactRun(peerHash, at)
                """),
        // An unconfirmed exchange that updated an older contact keeps what it replaced of the exchange
        // before (its sealed route and graph edge): withdrawing it puts them back, so the contact's
        // route is again one the peer issued and holds (docs/PROTOCOL.md §11).
        Migration(
            id: "v14-withdrawal-restores",
            sql: """
                ALTER TABLE pendingConfirmation ADD COLUMN previousRoute TEXT;
                ALTER TABLE pendingConfirmation ADD COLUMN previousEdge TEXT
                """),
        // A withdrawn exchange leaves a line in the history: when it was made and withdrawn, and — when
        // the contact stays (an update of an older one) — whose. Nothing of a withdrawn new contact's
        // card: contactDID is NULL then (docs/PROTOCOL.md §11).
        Migration(
            id: "v15-withdrawn-history",
            sql: """
                CREATE TABLE withdrawnHistory (
                    edge TEXT PRIMARY KEY,
                    contactDID TEXT,
                    exchangedAt REAL NOT NULL,
                    withdrawnAt REAL NOT NULL
                );
                CREATE INDEX withdrawnHistory_contact ON withdrawnHistory(contactDID)
                """),
        // A bot policy's rate limits count in the store, not in the process: they survive a restart,
        // and the bots of a fleet on one PostgreSQL database share them. A visitor is a hash of their
        // DID (as in socialGraph); rows older than the longest window are pruned as decisions are made.
        Migration(
            id: "v16-policy-acceptances",
            sql: """
                CREATE TABLE policyAcceptance (
                    didHash TEXT NOT NULL,
                    at REAL NOT NULL
                );
                CREATE INDEX policyAcceptance_did ON policyAcceptance(didHash, at);
                CREATE INDEX policyAcceptance_at ON policyAcceptance(at)
                """),
        // CardDAV address books the contacts are synced to (docs/ADDRESSBOOK.md): the account (never its
        // password: `credential` says where it is read from), and per contact the card on the server —
        // its UID, href and ETag, what Nearcard last wrote there (the base of the three-way merge) and
        // what the person keeps there (note, nickname). A deleted contact's row keeps only what it takes to
        // delete the card on the server (state 'deleting').
        Migration(
            id: "v17-address-books",
            sql: """
                CREATE TABLE addressBook (
                    url TEXT PRIMARY KEY,
                    serverURL TEXT NOT NULL,
                    username TEXT NOT NULL,
                    credential TEXT NOT NULL,
                    includeQR INTEGER NOT NULL DEFAULT 0,
                    addedAt REAL NOT NULL,
                    lastSyncAt REAL,
                    lastAttemptAt REAL,
                    failures INTEGER NOT NULL DEFAULT 0,
                    nextAttemptAt REAL NOT NULL DEFAULT 0,
                    lastError TEXT
                );
                CREATE TABLE addressBookCard (
                    book TEXT NOT NULL,
                    contactID TEXT NOT NULL,
                    uid TEXT NOT NULL,
                    href TEXT NOT NULL,
                    etag TEXT,
                    written TEXT,
                    state TEXT NOT NULL,
                    serverNote TEXT,
                    serverNickname TEXT,
                    conflict TEXT,
                    lastError TEXT,
                    PRIMARY KEY (book, contactID)
                );
                CREATE INDEX addressBookCard_contact ON addressBookCard(contactID)
                """),
        // Secrets of the book (shared by the bots of a fleet, like everything in it): `visitor` keys the
        // hash a bot policy counts a visitor's acceptances under (HMAC-SHA-256, not SHA-256 of the DID,
        // which anyone holding the DID could confirm). The plain hashes counted so far are dropped: at
        // most one window's counts start again.
        Migration(
            id: "v18-book-secrets",
            sql: """
                CREATE TABLE bookSecret (
                    name TEXT PRIMARY KEY,
                    value TEXT NOT NULL
                );
                DELETE FROM policyAcceptance
                """),
        // The exchange version a contact's card last came in (2: a peer that speaks only version 2, whose
        // card is of the older kind); NULL for codes, files and contacts typed by hand.
        Migration(
            id: "v19-exchange-version",
            sql: """
                ALTER TABLE contact ADD COLUMN exchangeVersion INTEGER
                """),
        // What was last said to the person about a card (a deletion on the server, a conflict), so each
        // is said once where they look (`addressbook sync`, `exchange`) rather than at every sync.
        Migration(
            id: "v20-address-book-told",
            sql: """
                ALTER TABLE addressBookCard ADD COLUMN told TEXT
                """),
    ]
}
