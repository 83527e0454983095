import Foundation
import NearcardCrypto
import NearcardModel
import NearcardStore
import NearcardTestSupport
import Synchronization
import Testing

/// What a fleet of bots relies on, checked on both backends (two `NearcardDatabase`s on one store
/// stand for two bots): one contact per visitor, every exchange once, a message claimed by one sender.
@Suite struct SharedStoreTests {
    func exchangeRoute(_ did: String) -> IssuedRoute {
        IssuedRoute(
            mailboxToken: (0..<16).map { _ in UInt8.random(in: 0...255) }, contactDID: did, issuedAt: Date(), expiresAt: Date().addingTimeInterval(3600))
    }

    /// Messages, trust, groups, invitations and the exchange log read back what was written.
    @Test(arguments: Backend.allCases) func everyPartOfTheBookRoundTrips(_ backend: Backend) throws {
        let (db, dir) = try temporaryDatabase(backend)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let did = "did:key:zGrace"
        let grace = try db.recordExchange(
            proximityContact(did: did, name: "Grace", message: "hi"), issuedRoute: exchangeRoute(did), payloadJSON: "{\"p\":1}", node: "bot-a")
        #expect(try db.exchanges().map(\.node) == ["bot-a"])

        // A webhook delivery queued with an exchange: claimed once, retried, delivered.
        let hooked = try db.recordExchange(
            proximityContact(did: "did:key:zAda", name: "Ada", message: "hi"), issuedRoute: exchangeRoute("did:key:zAda"),
            payloadJSON: "{\"p\":2}", webhookURL: "https://crm.example/in")
        let queuedHook = try #require(try db.webhookDeliveries().first)
        #expect(queuedHook.url == "https://crm.example/in" && queuedHook.state == .queued)
        let document = try JSONParser.parse(queuedHook.body)
        #expect(document["id"]?.stringValue == hooked.id && document["exchanges"]?.arrayValue?.count == 1)
        #expect(try db.claimDueWebhooks().map(\.id) == [queuedHook.id])
        #expect(try db.claimDueWebhooks().isEmpty, "a claimed delivery is not claimed twice")
        try db.markWebhookFailed(id: queuedHook.id, error: "503", retryAt: Date().addingTimeInterval(-1))
        #expect(try db.claimDueWebhooks().first?.attempts == 1)
        try db.markWebhookDelivered(id: queuedHook.id)
        #expect(try db.webhookDeliveries().first?.state == .delivered)
        #expect(try db.issuedRoutes(contactDID: did).count == 1)

        // Outbox: queued, claimed, failed with a retry, delivered.
        let signer = Ed25519.PrivateKey()
        let envelope = MessageEnvelope.make(text: "see you", from: "did:key:zMe", to: did, sentAt: 1_700_000_000, signer: signer)
        let queued = try db.enqueue(envelope, for: grace)
        #expect(queued.state == .queued && queued.contactName == "Grace")
        #expect(try db.claimDueMessages().map(\.id) == [envelope.id])
        #expect(try db.claimDueMessages().isEmpty, "a leased message is not claimed twice")
        try db.markAttemptFailed(id: envelope.id, error: "unreachable", retryAt: Date().addingTimeInterval(-1))
        #expect(try db.outboxItem(id: envelope.id)?.lastError == "unreachable")
        try db.markDelivered(id: envelope.id)
        #expect(try db.outbox().isEmpty && db.outbox(all: true).first?.state == .delivered)

        // Inbox: a duplicate is refused.
        let theirs = MessageEnvelope.make(text: "thanks", from: did, to: "did:key:zMe", sentAt: 1_700_000_001, signer: signer)
        let x = X25519.PrivateKey().publicKey
        #expect(try db.storeReceived(theirs, contactID: grace.id, senderPubKey: x, senderSignPubKey: signer.publicKey))
        #expect(try !db.storeReceived(theirs, contactID: grace.id, senderPubKey: x, senderSignPubKey: signer.publicKey))
        #expect(try db.inbox().map(\.text) == ["thanks"])
        #expect(try db.receivedCount(fromDID: did, since: Date(timeIntervalSince1970: 0)) == 1)

        // Trust, groups, the issuer proof.
        try db.addTrustAnchor("did:key:zIssuer", note: "the conference")
        #expect(try db.isTrustedIssuer("did:key:zIssuer") && db.isTrustedIssuer(did))
        #expect(try !db.isTrustedIssuer("did:key:zNobody"))
        #expect(try db.removeTrustAnchor("did:key:zIssuer") && !db.removeTrustAnchor("did:key:zIssuer"))
        try db.trustGroup(root: "12345", name: "attendees", depth: 16)
        #expect(try db.trustedGroup(root: "12345")?.depth == 16)
        #expect(try db.untrustGroup(root: "12345"))
        try db.setIssuerProof("{\"proof\":1}")
        #expect(try db.issuerProof() == "{\"proof\":1}")

        // Invitations: one use, then used up.
        let id: [UInt8] = Array(repeating: 7, count: 16)
        try db.createInvitation(id: id, secret: Array(repeating: 9, count: 32), expires: Date().addingTimeInterval(60), uses: 1)
        #expect(try db.invitationSecret(id: id) == .success(Array(repeating: 9, count: 32)))
        #expect(try db.useInvitation(id: id) && !db.useInvitation(id: id))
        #expect(try db.invitationSecret(id: id) == .failure(.usedUp))
    }

    /// Two bots meet one visitor at the same moment, many times over: one contact, every exchange
    /// recorded once, and a transaction run again (the same payload) records nothing new.
    @Test(arguments: Backend.allCases) func twoBotsMeetingOneVisitorMakeOneContact(_ backend: Backend) throws {
        let (a, dir) = try temporaryDatabase(backend)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let b = try NearcardDatabase(location: a.location)
        let rounds = 12
        let visitors = (0..<3).map { "did:key:zVisitor\($0)" }
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 2 * rounds * visitors.count) { i in
            let bot = i % 2 == 0 ? a : b
            let did = visitors[(i / 2) % visitors.count]
            do {
                try bot.recordExchange(
                    proximityContact(did: did, name: "Visitor", message: "m\(i)"), issuedRoute: exchangeRoute(did),
                    payloadJSON: "{\"exchange\":\(i)}", node: i % 2 == 0 ? "a" : "b")
            } catch { failures.withLock { $0.append("\(error)") } }
        }
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 })")
        let contacts = try a.contacts()
        #expect(contacts.count == visitors.count)
        #expect(Set(contacts.compactMap(\.didPublicKey)) == Set(visitors))
        #expect(try a.exchanges().count == 2 * rounds * visitors.count)
        #expect(try Set(b.exchanges().map(\.node)) == ["a", "b"])
        try a.recordExchange(
            proximityContact(did: visitors[0], name: "Visitor", message: "again"), issuedRoute: exchangeRoute(visitors[0]),
            payloadJSON: "{\"exchange\":0}", node: "a")
        #expect(try a.exchanges(contactDID: visitors[0]).count == 2 * rounds, "the same exchange recorded again is not a new one")
    }

    /// Two senders claiming due messages at once never take the same one.
    @Test(arguments: Backend.allCases) func aQueuedMessageIsClaimedByOneSender(_ backend: Backend) throws {
        let (a, dir) = try temporaryDatabase(backend)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let b = try NearcardDatabase(location: a.location)
        let did = "did:key:zGrace"
        let grace = try a.recordContact(proximityContact(did: did, name: "Grace", message: "hi"), payloadJSON: "{}")
        let signer = Ed25519.PrivateKey()
        for n in 0..<40 {
            try a.enqueue(
                MessageEnvelope.make(text: "message \(n)", from: "did:key:zMe", to: did, sentAt: Int64(1_700_000_000 + n), signer: signer), for: grace)
        }
        let claimed = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 20) { i in
            let items = (try? (i % 2 == 0 ? a : b).claimDueMessages(limit: 3)) ?? []
            claimed.withLock { $0 += items.map(\.id) }
        }
        let ids = claimed.withLock { $0 }
        #expect(ids.count == Set(ids).count, "a message was claimed twice")
        #expect(ids.count == 40)
    }

    /// A bot older than the fleet's schema refuses to start, and says why.
    @Test func aNewerSchemaOnTheServerIsRefused() throws {
        let url = try TestPostgres.shared.freshDatabase()
        let location = try StoreLocation.parse(url)
        _ = try NearcardDatabase(location: location)
        guard case .postgres(let pg) = location else {
            Issue.record("not postgres")
            return
        }
        let name = pg.database
        try TestPostgres.shared.sql("INSERT INTO nearcard_migrations VALUES ('v99-from-the-future', 0)", database: name)
        #expect { try NearcardDatabase(location: location) } throws: {
            let message = ($0 as? StoreError)?.message ?? ""
            return message.contains("newer Nearcard schema") && message.contains("v99-from-the-future") && message.contains("upgrade")
        }
    }

    /// The server restarts under a bot: the next call reconnects and lands, and the store says so.
    @Test func aRestartedServerIsReconnected() throws {
        let server = try TestPostgres()
        defer { server.stop() }
        let heard = Mutex<[StoreEvent]>([])
        let db = try NearcardDatabase(location: try StoreLocation.parse(try server.freshDatabase()), events: { e in heard.withLock { $0.append(e) } })
        try db.saveMyCard(Card(name: "Before"))
        try server.restart()
        try db.saveMyCard(Card(name: "After"))
        #expect(try db.myCard()?.card.name == "After")
        #expect(heard.withLock { $0 } == [.connectionLost, .reconnected])
    }

    /// The address a store is shown as (`store info`, `store migrate`, errors) reads back as the same
    /// store, port included — over a Unix socket the port names the socket's file — and never holds
    /// the password.
    @Test func aStoreIsShownAsAnAddressThatReachesIt() throws {
        for text in [
            "postgres://bot:s3cret@db.example:5433/fleet", "postgres://bot@/fleet?host=/run/pg&port=5499",
            "postgres://bot@/fleet?host=/run/pg",
        ] {
            let location = try StoreLocation.parse(text)
            let shown = location.description
            #expect(!shown.contains("s3cret"), "\(shown)")
            var back = try StoreLocation.parse(shown)
            if case .postgres(var p) = back, case .postgres(let q) = location {
                p.password = q.password
                back = .postgres(p)
            }
            #expect(back == location, "\(text) is shown as \(shown)")
        }
        #expect(try StoreLocation.parse("postgres://bot@/fleet?host=/run/pg&port=5499").description.contains("port=5499"))
    }

    /// No server: a one-line error that names the store (never its password) and what to do.
    @Test func anUnreachableServerIsAClearError() throws {
        let location = try StoreLocation.parse("postgres://bot:s3cret@127.0.0.1:9/book")
        #expect {
            try NearcardDatabase(location: location, retryWindow: 1)
        } throws: {
            let message = ($0 as? StoreError)?.message ?? ""
            return message.contains("cannot reach PostgreSQL at postgres://bot@127.0.0.1:9/book (tried for 1 s)") && message.contains("start the server")
                && !message.contains("s3cret")
        }
    }

    /// A server that takes TCP over TLS only: `require` encrypts, `verify-full` with the server's
    /// certificate as root checks it too; a certificate no root vouches for and `disable` are refused,
    /// each at once and saying why.
    @Test func tlsToTheServer() throws {
        let port = Int.random(in: 20_000...40_000)
        let server = try TestPostgres(listen: "127.0.0.1", port: port, tls: true)
        defer { server.stop() }
        try server.sql("CREATE DATABASE fleet")
        let base = "postgres://nearcard@127.0.0.1:\(port)/fleet"
        let encrypted = try NearcardDatabase(location: try StoreLocation.parse(base + "?sslmode=require"))
        try encrypted.saveMyCard(Card(name: "Over TLS"))
        #expect(try server.sql("SELECT count(*) FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid) WHERE s.ssl AND a.datname = 'fleet'") != "0")
        let checked = try NearcardDatabase(
            location: try StoreLocation.parse("postgres://nearcard@localhost:\(port)/fleet?sslmode=verify-full&sslrootcert=\(server.certificate)"))
        #expect(try checked.myCard()?.card.name == "Over TLS")
        let started = Date()
        #expect { try NearcardDatabase(location: try StoreLocation.parse(base + "?sslmode=verify-full")) } throws: {
            (($0 as? StoreError)?.message ?? "").contains("TLS failed")
        }
        #expect { try NearcardDatabase(location: try StoreLocation.parse(base + "?sslmode=disable")) } throws: {
            let m = ($0 as? StoreError)?.message ?? ""
            return m.contains("refused the connection") && m.contains("no encryption")
        }
        #expect(Date().timeIntervalSince(started) < 30, "a refusal that cannot change is not retried for the whole window")
    }

    @Test func storeValuesAreReadAsLibpqWouldAndNeverShowAPassword() throws {
        let p = try StoreLocation.parse("postgres://bot:pw@db.example:6543/fleet", environment: [:])
        guard case .postgres(let pg) = p else {
            Issue.record("not postgres")
            return
        }
        #expect(pg.user == "bot" && pg.password == "pw" && pg.host == "db.example" && pg.port == 6543 && pg.database == "fleet" && pg.socketPath == nil)
        #expect(p.description == "postgres://bot@db.example:6543/fleet")
        let socket = try StoreLocation.parse("postgresql://bot@/fleet?host=/run/postgresql", environment: ["PGPASSWORD": "from-env"])
        guard case .postgres(let s) = socket else {
            Issue.record("not postgres")
            return
        }
        #expect(s.socketPath == "/run/postgresql/.s.PGSQL.5432" && s.password == "from-env")
        #expect(try StoreLocation.parse("sqlite:/var/lib/book.sqlite") == .sqlite(path: "/var/lib/book.sqlite"))
        for bad in ["mysql://x/y", "book.sqlite", "sqlite:", "postgres://x@h:99999/d", "postgres://x@h/d?sslmode=verify-sometimes", "postgres://x@h/d?foo=1"] {
            #expect(throws: StoreError.self, "\(bad)") { try StoreLocation.parse(bad) }
        }
        #expect { try StoreLocation.parse("mysql://u:hunter2@h/d") } throws: { !(($0 as? StoreError)?.message.contains("hunter2") ?? true) }
    }
}

/// `nearcard store migrate`: a node's book into a fleet's database and back, nothing lost.
@Suite struct StoreCopyTests {
    @Test func aBookMovesToPostgreSQLAndBackIntact() throws {
        let (node, dir) = try temporaryDatabase(.sqlite)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try node.saveMyCard(Card(name: "Ada", email: "ada@example.org"))
        try node.saveSharingPolicy(SharingPolicy(fields: [.email]))
        let did = "did:key:zGrace"
        let route = IssuedRoute(mailboxToken: Array(repeating: 1, count: 16), contactDID: did, issuedAt: Date(), expiresAt: Date().addingTimeInterval(60))
        let grace = try node.recordExchange(proximityContact(did: did, name: "Grace", message: "hi"), issuedRoute: route, payloadJSON: "{\"g\":1}")
        try node.enqueue(MessageEnvelope.make(text: "later", from: "did:key:zAda", to: did, sentAt: 1_700_000_000, signer: Ed25519.PrivateKey()), for: grace)
        _ = try node.keep(
            Contact(
                card: Card(name: "Manual Person"), source: .manual, verificationStatus: .unverified, receivedAt: Date(timeIntervalSince1970: 1_700_000_000.25)))
        try node.addTrustAnchor("did:key:zIssuer", note: "conf")

        let (fleet, _) = try temporaryDatabase(.postgres)
        let there = try node.copy(to: fleet, merge: false)
        let broken = there.filter { !$0.intact }.map(\.table)
        #expect(broken.isEmpty, "\(broken)")
        #expect(there.first { $0.table == "contact" }?.copied == 2)
        #expect(try fleet.contacts().map(\.name) == ["Grace", "Manual Person"])
        #expect(try fleet.myCard()?.card == node.myCard()?.card && fleet.sharingPolicy() == node.sharingPolicy())
        #expect(try fleet.outbox().map(\.text) == ["later"] && fleet.exchanges().count == 1)

        // Copying again is refused (the target holds a book) unless merged, which adds nothing twice.
        #expect { try node.copy(to: fleet, merge: false) } throws: { ($0 as? StoreError)?.message.contains("--merge") == true }
        let merged = try node.copy(to: fleet, merge: true)
        #expect(merged.allSatisfy { $0.copied == 0 && $0.alreadyThere == $0.rows })
        #expect(try fleet.contacts().count == 2)

        // And back, into a new file: every row as it was.
        let (back, backDir) = try temporaryDatabase(.sqlite)
        defer { try? FileManager.default.removeItem(atPath: backDir) }
        let home = try fleet.copy(to: back, merge: false)
        #expect(home.allSatisfy { $0.intact })
        #expect(zip(there, home).allSatisfy { $0.sourceChecksum == $1.sourceChecksum }, "the book came back changed")
        #expect(try back.contacts() == node.contacts())
    }

    /// A visitor the fleet already knows: merging keeps the fleet's contact and moves the node's
    /// messages to it.
    @Test func mergingFollowsTheFleetsContact() throws {
        let (node, dir) = try temporaryDatabase(.sqlite)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (fleet, _) = try temporaryDatabase(.postgres)
        let did = "did:key:zGrace"
        let atFleet = try fleet.recordContact(proximityContact(did: did, name: "Grace (fleet)", message: "a"), payloadJSON: "{\"a\":1}")
        let atNode = try node.recordContact(proximityContact(did: did, name: "Grace (node)", message: "b"), payloadJSON: "{\"b\":1}")
        try node.enqueue(MessageEnvelope.make(text: "hello", from: "did:key:zMe", to: did, sentAt: 1_700_000_000, signer: Ed25519.PrivateKey()), for: atNode)
        let report = try node.copy(to: fleet, merge: true)
        #expect(report.first { $0.table == "contact" }?.alreadyThere == 1)
        #expect(report.allSatisfy { $0.intact })
        #expect(try fleet.contacts().map(\.name) == ["Grace (fleet)"])
        #expect(try fleet.outbox().first?.contactID == atFleet.id)
    }
}
