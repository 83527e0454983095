import Foundation
import NearcardCrypto
import NearcardModel
import NearcardProcess
import NearcardSimulation
import NearcardStore
import NearcardTestSupport
import Testing

/// The store's two backends: every test that takes one runs on both (one suite, two backends).
enum Backend: String, CaseIterable, Sendable {
    case sqlite, postgres
}

/// A new, empty store: a SQLite file in a temporary folder, or a new database on the tests'
/// PostgreSQL server. The folder (nothing for PostgreSQL) is the caller's to remove.
func temporaryDatabase(_ backend: Backend = .sqlite) throws -> (NearcardDatabase, String) {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-db-\(UUID().uuidString)").path
    switch backend {
    case .sqlite:
        return (try NearcardDatabase(path: dir + "/nearcard.sqlite"), dir)
    case .postgres:
        let url = try TestPostgres.shared.freshDatabase()
        return (try NearcardDatabase(location: try StoreLocation.parse(url)), dir)
    }
}

func proximityContact(did: String, name: String, message: String) -> Contact {
    Contact(
        card: Card(name: name, company: "Co"), source: .proximity, verificationStatus: .verified, receivedAt: Date(),
        pubKey: "cHVi", signPubKey: "c2ln", didPublicKey: did, exchangeSignature: "theirs", myExchangeSignature: "mine",
        exchangeTimestamp: Date(), myEphemeralMessage: "mine", theirEphemeralMessage: message, graphExportEdgeId: "edge")
}

@Suite struct DatabaseTests {
    @Test(arguments: Backend.allCases) func migrationsRunOnceAndReopenCleanly(_ backend: Backend) throws {
        let (db, dir) = try temporaryDatabase(backend)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try db.saveMyCard(Card(name: "Ada"))
        let again = try NearcardDatabase(location: db.location)
        #expect(try again.myCard()?.card.name == "Ada")
        #expect(try again.integrityCheck() == "ok")
        if backend == .sqlite { #expect(FileIO.mode(db.path) == 0o600) }
    }

    @Test(arguments: Backend.allCases) func myCardKeepsItsIDAndPolicyDefaults(_ backend: Backend) throws {
        let (db, dir) = try temporaryDatabase(backend)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(try db.myCard() == nil)
        let first = try db.saveMyCard(Card(name: "Ada"))
        let second = try db.saveMyCard(Card(name: "Ada L.", email: "a@b"))
        #expect(first.cardId == second.cardId)
        #expect(try db.sharingPolicy() == .default)
        try db.saveSharingPolicy(SharingPolicy(fields: [.email, .skills]))
        #expect(try db.sharingPolicy().fields == [.name, .email, .skills])
        #expect(throws: StoreError.self) { try db.saveMyCard(Card(name: " ")) }
    }

    /// What a running node shares is read for its sessions at most once a second: an edit made by
    /// another process (another connection to the same file or database) is in the card, policy and
    /// proof of the sessions that begin `sharedCardTTL` (1 s) later, on both backends; the node's own
    /// edits show at once.
    @Test(arguments: Backend.allCases) func theSharedCardFollowsEditsFromAnotherConnection(_ backend: Backend) throws {
        let (node, dir) = try temporaryDatabase(backend)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let first = try node.sharedCard()
        #expect(first.card == nil && first.policy == .default && first.issuerProof == nil)
        let cli = try NearcardDatabase(location: node.location)
        /// The node's next read once the edit must show: after the TTL.
        func next() throws -> NearcardDatabase.SharedCard {
            usleep(UInt32(NearcardDatabase.sharedCardTTL * 1_000_000) + 100_000)
            return try node.sharedCard()
        }
        try cli.saveMyCard(Card(name: "Ada", company: "Engines"))
        try cli.saveSharingPolicy(SharingPolicy(fields: [.company]))
        let edited = try next()
        #expect(edited.card?.company == "Engines")
        #expect(edited.policy.fields == [.name, .company])
        try cli.saveMyCard(Card(name: "Ada", company: "Analytical Engines"))
        try cli.setIssuerProof("{}")
        let later = try next()
        #expect(later.card?.company == "Analytical Engines")
        #expect(later.issuerProof == "{}")
        // The node's own edits show at once on both.
        try node.saveMyCard(Card(name: "Ada", company: "Difference Engines"))
        #expect(try node.sharedCard().card?.company == "Difference Engines")
    }

    @Test(arguments: Backend.allCases) func reExchangingUpdatesTheSameContact(_ backend: Backend) throws {
        let (db, dir) = try temporaryDatabase(backend)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let did = "did:key:zDnaerDaTF5BXEavCrfRZEk316dpbLsfPDZ3WJ5hRTPFU2169"
        var met = proximityContact(did: did, name: "Grace", message: "first")
        met.receivedAt = Date(timeIntervalSince1970: 1_700_000_000)
        met.tags = ["conf", "navy"]
        met.notes = "met at the COBOL talk"
        met.credentialIds = ["cred-b"]
        met.memberOf = "group-1"
        let first = try db.recordContact(met, payloadJSON: "{}")
        var again = proximityContact(did: did, name: "Grace Hopper", message: "second")
        again.credentialIds = ["cred-a", "cred-b"]
        let second = try db.recordContact(again, payloadJSON: "{}")
        let all = try db.contacts()
        #expect(all.count == 1)
        #expect(second.id == first.id)
        #expect(all[0].name == "Grace Hopper")
        #expect(all[0].theirEphemeralMessage == "second")
        #expect(all[0].lastInteraction != nil)
        // What the person added, when they first met, and what was proven before stay.
        #expect(all[0].tags == ["conf", "navy"] && all[0].notes == "met at the COBOL talk")
        #expect(all[0].receivedAt == Date(timeIntervalSince1970: 1_700_000_000))
        #expect(all[0].credentialIds == ["cred-a", "cred-b"] && all[0].memberOf == "group-1")
        #expect(try db.socialGraphHashes() == [Contact.socialGraphHash(did: did)])
        try db.deleteContact(id: first.id)
        #expect(try db.contacts().isEmpty)
        #expect(try db.socialGraphHashes().isEmpty)
    }

    @Test(arguments: Backend.allCases) func contactsRoundTripEveryField(_ backend: Backend) throws {
        let (db, dir) = try temporaryDatabase(backend)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var c = proximityContact(did: "did:key:zX", name: "Grace", message: "hello")
        c.receivedAt = Date(timeIntervalSince1970: 1_700_000_000)
        c.exchangeTimestamp = Date(timeIntervalSince1970: 1_700_000_001)
        c.tags = ["conf"]
        c.notes = "note"
        c.sealedRoute = "route"
        c.credentialIds = ["cred-1"]
        c.declaredProofClaims = ["attendee"]
        c.card = Card(name: "Grace", email: "g@x", socialNetworks: [SocialProfile(platform: "gh", username: "g")], skills: [Skill(name: "COBOL")])
        try db.recordContact(c, payloadJSON: "{\"a\":1}")
        #expect(try db.contact(id: c.id) == c)
        #expect(try db.contact(did: "did:key:zX") == c)
        #expect(try db.payloadJSON(contactID: c.id) == "{\"a\":1}")
    }

    func manual(_ card: Card) -> Contact { Contact(card: card, source: .manual, verificationStatus: .unverified, receivedAt: Date()) }

    func scanned(_ card: Card, did: String, _ status: VerificationStatus) -> Contact {
        Contact(card: card, source: .qrCode, verificationStatus: status, receivedAt: Date(), didPublicKey: did)
    }

    /// Only exact references: an id prefix of 4+ characters, a DID, a whole name (any case); never a part
    /// of a name ("v" once deleted "Ada Lovelace-Byron").
    @Test(arguments: Backend.allCases) func findContactTakesOnlyExactReferences(_ backend: Backend) throws {
        let (db, dir) = try temporaryDatabase(backend)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let a = try db.keep(manual(Card(name: "Ada Lovelace-Byron"))).contact
        let b = try db.keep(manual(Card(name: "Ada Byron"))).contact
        let g = try db.keep(scanned(Card(name: "Grace"), did: "did:key:zGrace", .unverified), payloadJSON: nil).contact
        #expect(try db.findContact(String(a.id.prefix(6)).lowercased()).id == a.id)
        #expect(try db.findContact("ada lovelace-byron").id == a.id)
        #expect(try db.findContact("ADA BYRON").id == b.id)
        #expect(try db.findContact("did:key:zGrace").id == g.id)
        for partial in ["v", "lovelace", "Ada", "Byron", String(a.id.prefix(3))] {
            #expect { try db.findContact(partial) } throws: { ($0 as? StoreError)?.kind == .unmatched }
        }
        #expect { try db.findContact("v") } throws: { ($0 as? StoreError)?.message.contains("give a whole name") == true }
        _ = try db.keep(manual(Card(name: "ada byron", email: "other@x")))
        #expect { try db.findContact("Ada Byron") } throws: { ($0 as? StoreError)?.message.contains("names 2 contacts") == true }
    }

    /// Ada met in person, then her zk code scanned: she stays proximity/verified with her messages,
    /// signatures, keys and route; the code adds her email; a second scan is "nothing new".
    @Test(arguments: Backend.allCases) func aCodeFromSomeoneMetInPersonMerges(_ backend: Backend) throws {
        let (db, dir) = try temporaryDatabase(backend)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var met = proximityContact(did: "did:key:zAda", name: "Ada Lovelace", message: "Hello from Ada")
        met.sealedRoute = "route"
        met.tags = ["rustconf"]
        met.notes = "met at the booth"
        try db.recordContact(met, payloadJSON: "{\"signed\":1}")
        let code = scanned(Card(name: "Ada Lovelace", email: "ada@example.org"), did: "did:key:zAda", .verified)
        let first = try db.keep(code, payloadJSON: "{\"qr\":1}")
        #expect(first.outcome == .merged(changed: [.email]))
        #expect(first.summary == "already in your contacts: 1 field updated (email)")
        let after = try #require(try db.contact(did: "did:key:zAda"))
        #expect(after.id == met.id && after.source == .proximity && after.verificationStatus == .verified)
        #expect(after.card == Card(name: "Ada Lovelace", email: "ada@example.org", company: "Co"), "the company the code does not carry stays")
        #expect(after.theirEphemeralMessage == "Hello from Ada" && after.myEphemeralMessage == "mine")
        #expect(after.exchangeSignature == "theirs" && after.sealedRoute == "route" && after.pubKey == "cHVi" && after.signPubKey == "c2ln")
        #expect(after.tags == ["rustconf"] && after.notes == "met at the booth")
        #expect(try db.payloadJSON(contactID: met.id) == "{\"signed\":1}", "the exchange's signed payload stays the record")
        #expect(try db.keep(code, payloadJSON: "{\"qr\":1}").outcome == .merged(changed: []))
        #expect(try db.keep(code, payloadJSON: nil).summary == "already in your contacts: nothing new")
        #expect(try db.contacts().count == 1)
    }

    /// A verified code refreshes what it carries; an unverified one only fills gaps; a failed one changes
    /// nothing; the status never goes down.
    @Test(arguments: Backend.allCases) func verifiedRefreshesUnverifiedFillsFailedChangesNothing(_ backend: Backend) throws {
        let (db, dir) = try temporaryDatabase(backend)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let did = "did:key:zGrace"
        let first = try db.keep(
            scanned(Card(name: "Grace", email: "old@navy.mil", socialNetworks: [SocialProfile(platform: "github", username: "old")]), did: did, .unverified))
        #expect(first.outcome == .added)
        let fill = try db.keep(
            scanned(
                Card(name: "Grace H", email: "new@navy.mil", title: "Admiral", socialNetworks: [SocialProfile(platform: "github", username: "new")]), did: did,
                .unverified))
        #expect(fill.outcome == .merged(changed: [.title]), "an unverified code fills the title only")
        #expect(fill.contact.card.email == "old@navy.mil" && fill.contact.card.name == "Grace" && fill.contact.card.socialNetworks[0].username == "old")
        let refresh = try db.keep(
            scanned(
                Card(
                    name: "Grace Hopper", email: "new@navy.mil",
                    socialNetworks: [SocialProfile(platform: "GitHub", username: "new"), SocialProfile(platform: "mastodon", username: "g")]), did: did,
                .verified))
        #expect(refresh.outcome == .merged(changed: [.name, .email, .socialNetworks]))
        #expect(refresh.contact.verificationStatus == .verified && refresh.contact.card.title == "Admiral")
        #expect(refresh.contact.card.socialNetworks.map(\.username) == ["new", "g"])
        let failed = try db.keep(scanned(Card(name: "Mallory"), did: did, .failed))
        #expect(failed.outcome == .merged(changed: []))
        let kept = try #require(try db.contact(did: did))
        #expect(kept.card.name == "Grace Hopper" && kept.verificationStatus == .verified, "a failed code neither edits nor downgrades")
        _ = try db.keep(scanned(Card(name: "Grace Hopper"), did: did, .unverified))
        #expect(try db.contact(did: did)?.verificationStatus == .verified)
        #expect(try db.contacts().count == 1)
    }

    /// Without a DID: the same card is stored once; a look-alike is stored and flagged.
    @Test(arguments: Backend.allCases) func cardsWithoutADIDAreNotDoubled(_ backend: Backend) throws {
        let (db, dir) = try temporaryDatabase(backend)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let card = Card(name: "Ada Lovelace", email: "ada@example.org")
        let a = try db.keep(manual(card))
        #expect(a.outcome == .added)
        let again = try db.keep(manual(card))
        #expect(again.outcome == .alreadyThere && again.contact.id == a.contact.id)
        let alike = try db.keep(manual(Card(name: "A. Lovelace", email: "ADA@example.org")))
        guard case .possibleDuplicate(let of) = alike.outcome else {
            Issue.record("not flagged: \(alike.outcome)")
            return
        }
        #expect(of.id == a.contact.id)
        #expect(alike.summary.contains("possibly the same person as Ada Lovelace"))
        #expect(try db.keep(manual(Card(name: "Grace Hopper"))).outcome == .added)
        #expect(try db.contacts().count == 3)
    }

    /// A file that is not SQLite: a clear error, the file untouched.
    @Test func corruptDatabaseIsRefusedAndLeftAlone() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-db-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let path = dir + "/nearcard.sqlite"
        let junk = Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        try junk.write(to: URL(fileURLWithPath: path))
        #expect { try NearcardDatabase(path: path) } throws: {
            guard let e = $0 as? StoreError else { return false }
            return e.kind == .database && e.message.contains(path) && e.message.contains("untouched")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == junk)
    }

    @Test func databaseFromANewerNearcardIsRefused() throws {
        let (db, dir) = try temporaryDatabase()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = db.path
        let sqlite = try ChildProcess.capture(["/usr/bin/sqlite3", path, "INSERT INTO grdb_migrations (identifier) VALUES ('v99-from-the-future')"])
        #expect(sqlite.code == 0)
        #expect { try NearcardDatabase(path: path) } throws: { ($0 as? StoreError)?.message.contains("newer Nearcard") == true }
    }

    /// Another process holding the write lock: a clear "locked" error after the busy timeout, not a crash.
    @Test func lockedDatabaseIsAClearError() throws {
        let (db, dir) = try temporaryDatabase()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let holder = try ChildProcess(["/usr/bin/sqlite3", db.path], log: dir + "/sqlite3.log", pipes: true)
        #expect(holder.send(line: "BEGIN IMMEDIATE; INSERT INTO setting VALUES ('x','y'); SELECT 'locked';"))
        // Stopped: sqlite3 exits and its transaction is rolled back.
        defer { holder.stop(after: 5) }
        usleep(300_000)
        // Opening checks migrations with a write, so the error may come from opening or from saving.
        #expect {
            try NearcardDatabase(path: db.path, busyTimeout: 0.2).saveMyCard(Card(name: "Ada"))
        } throws: { ($0 as? StoreError)?.message.contains("locked") == true }
    }
}

/// Deleting a person deletes them: their card, their messages both ways and what else names them
/// are in no byte of the database, its WAL or its SHM afterwards.
@Suite struct DeletionTests {
    @Test func aDeletedContactLeavesNoByteBehind() throws {
        let (db, dir) = try temporaryDatabase(.sqlite)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let did = "did:key:zDnaeZanzibarQuux0000000000000000000000000000000000"
        var zq = proximityContact(did: did, name: "Zanzibar Quux", message: "ephemeral-marker-3141")
        zq.card = Card(name: "Zanzibar Quux", email: "zq@unique-marker.example")
        let route = IssuedRoute(mailboxToken: Array(repeating: 5, count: 16), contactDID: did, issuedAt: Date(), expiresAt: Date().addingTimeInterval(60))
        let kept = try db.recordExchange(zq, issuedRoute: route, payloadJSON: "{\"name\":\"Zanzibar Quux\"}")
        let signer = Ed25519.PrivateKey()
        try db.enqueue(MessageEnvelope.make(text: "outbox-marker-2718", from: "did:key:zMe", to: did, sentAt: 1_700_000_000, signer: signer), for: kept)
        #expect(
            try db.storeReceived(
                MessageEnvelope.make(text: "inbox-marker-1618", from: did, to: "did:key:zMe", sentAt: 1_700_000_001, signer: signer),
                contactID: kept.id, senderPubKey: X25519.PrivateKey().publicKey, senderSignPubKey: signer.publicKey))
        // Someone else stays.
        try db.recordContact(proximityContact(did: "did:key:zGrace", name: "Grace Hopper", message: "hello"), payloadJSON: "{}")
        let markers = ["Zanzibar Quux", "zq@unique-marker.example", "ephemeral-marker-3141", "outbox-marker-2718", "inbox-marker-1618", "ZanzibarQuux"]
        // The control: before the deletion every marker is in the files, so their absence after it means something.
        let before = [db.path, db.path + "-wal"].map { (try? Data(contentsOf: URL(fileURLWithPath: $0))) ?? Data() }
        for marker in markers {
            #expect(before.contains { $0.range(of: Data(marker.utf8)) != nil }, "\(marker) was never written where this test looks")
        }

        #expect(try db.deleteContact(id: kept.id))
        #expect(try db.contacts().map(\.name) == ["Grace Hopper"])
        #expect(try db.inbox().isEmpty && db.outbox(all: true).isEmpty && db.issuedRoutes(contactDID: did).isEmpty && db.exchanges(contactDID: did).isEmpty)
        for file in [db.path, db.path + "-wal", db.path + "-shm"] {
            let bytes = (try? Data(contentsOf: URL(fileURLWithPath: file))) ?? Data()
            for marker in markers {
                #expect(bytes.range(of: Data(marker.utf8)) == nil, "\(marker) is still in \(URL(fileURLWithPath: file).lastPathComponent)")
            }
        }
        #expect(try db.contact(did: "did:key:zGrace") != nil)
    }
}
