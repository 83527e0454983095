import Foundation
import NearcardCrypto
import NearcardModel
import NearcardSimulation
import NearcardStore
import Testing

func temporaryDatabase() throws -> (NearcardDatabase, String) {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-db-\(UUID().uuidString)").path
    return (try NearcardDatabase(path: dir + "/nearcard.sqlite"), dir)
}

func proximityContact(did: String, name: String, message: String) -> Contact {
    Contact(card: Card(name: name, company: "Co"), source: .proximity, verificationStatus: .verified, receivedAt: Date(),
            pubKey: "cHVi", signPubKey: "c2ln", didPublicKey: did, exchangeSignature: "theirs", myExchangeSignature: "mine",
            exchangeTimestamp: Date(), myEphemeralMessage: "mine", theirEphemeralMessage: message, graphExportEdgeId: "edge")
}

@Suite struct DatabaseTests {
    @Test func migrationsRunOnceAndReopenCleanly() throws {
        let (db, dir) = try temporaryDatabase()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try db.saveMyCard(Card(name: "Ada"))
        let again = try NearcardDatabase(path: db.path)
        #expect(try again.myCard()?.card.name == "Ada")
        #expect(try again.integrityCheck() == "ok")
        #expect(FileIO.mode(db.path) == 0o600)
    }

    @Test func myCardKeepsItsIDAndPolicyDefaults() throws {
        let (db, dir) = try temporaryDatabase()
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

    /// What a running node shares is read per session: an edit made by another process (another
    /// connection to the same file) is in the next session's card, policy and proof.
    @Test func theSharedCardFollowsEditsFromAnotherConnection() throws {
        let (node, dir) = try temporaryDatabase()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let first = try node.sharedCard()
        #expect(first.card == nil && first.policy == .default && first.issuerProof == nil)
        let cli = try NearcardDatabase(path: node.path)
        try cli.saveMyCard(Card(name: "Ada", company: "Engines"))
        try cli.saveSharingPolicy(SharingPolicy(fields: [.company]))
        #expect(try node.sharedCard().card?.company == "Engines")
        #expect(try node.sharedCard().policy.fields == [.name, .company])
        try cli.saveMyCard(Card(name: "Ada", company: "Analytical Engines"))
        try cli.setIssuerProof("{}")
        let later = try node.sharedCard()
        #expect(later.card?.company == "Analytical Engines")
        #expect(later.issuerProof == "{}")
    }

    @Test func reExchangingUpdatesTheSameContact() throws {
        let (db, dir) = try temporaryDatabase()
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

    @Test func contactsRoundTripEveryField() throws {
        let (db, dir) = try temporaryDatabase()
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

    @Test func findContactByPrefixNameOrDID() throws {
        let (db, dir) = try temporaryDatabase()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let a = try db.addManualContact(Card(name: "Ada Lovelace"))
        _ = try db.addManualContact(Card(name: "Ada Byron"))
        #expect(try db.findContact(String(a.id.prefix(6)).lowercased()).id == a.id)
        #expect(try db.findContact("lovelace").id == a.id)
        #expect { try db.findContact("Ada") } throws: { ($0 as? StoreError)?.message.contains("matches 2") == true }
        #expect { try db.findContact("Zed") } throws: { ($0 as? StoreError)?.kind == .notFound }
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
