import Foundation
import NearcardCrypto
import NearcardModel
import Testing

@testable import NearcardStore

/// The store's side of agreement (docs/PROTOCOL.md §11): an unconfirmed exchange is confirmed or
/// withdrawn by the peer's answer; an exchange answered "not held" is never stored afterwards.
@Suite struct AgreementStoreTests {
    func route(_ did: String) -> NearcardDatabase.IssuedRoute {
        NearcardDatabase.IssuedRoute(mailboxToken: Sodium.randomBytes(32), contactDID: did, issuedAt: Date(), expiresAt: Date().addingTimeInterval(3600))
    }

    func contact(_ did: String, pubKey: String, edge: String) -> Contact {
        var c = proximityContact(did: did, name: "Ada Lovelace", message: "hi")
        c.pubKey = pubKey
        c.graphExportEdgeId = edge
        c.sealedRoute = "route of \(edge)"
        return c
    }

    @Test(arguments: Backend.allCases) func aWithdrawnExchangeIsNeverStoredLater(_ backend: Backend) throws {
        let (db, dir) = try temporaryDatabase(backend)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let ada = "did:key:zDnaeAdaAgreement000000000000000000000000000000000000"
        let edge = String(repeating: "ab", count: 16)
        // The responder was asked before Ada's `done` arrived: not held, and remembered as withdrawn.
        #expect(try db.answerConfirmation(edge: edge, pubKey: "QUFB") == false)
        #expect(throws: StoreError.self) {
            try db.recordExchange(
                contact(ada, pubKey: "QUFB", edge: edge), issuedRoute: route(ada), payloadJSON: "{\"late\":1}", confirmation: .final(edge: edge))
        }
        #expect(try db.contacts().isEmpty, "the late done stored nothing")
        // Another exchange with the same peer is stored, and a query about it is answered held.
        let next = String(repeating: "cd", count: 16)
        try db.recordExchange(contact(ada, pubKey: "QUFB", edge: next), issuedRoute: route(ada), payloadJSON: "{\"next\":1}", confirmation: .final(edge: next))
        #expect(try db.answerConfirmation(edge: next, pubKey: "QUFB") == true)
        #expect(try db.answerConfirmation(edge: next, pubKey: "QkJC") == false, "held only for the key of the contact")
        // Asked about an exchange it does not hold while it holds an older one with that peer: not held
        // (the asker puts its older contact back), and that exchange is withdrawn here.
        let third = String(repeating: "ef", count: 16)
        #expect(try db.answerConfirmation(edge: third, pubKey: "QUFB") == false)
        #expect(throws: StoreError.self) {
            try db.recordExchange(
                contact(ada, pubKey: "QUFB", edge: third), issuedRoute: route(ada), payloadJSON: "{\"third\":1}", confirmation: .final(edge: third))
        }
        #expect(try db.contacts().map(\.graphExportEdgeId) == [next])
    }

    @Test(arguments: Backend.allCases) func anUnconfirmedContactIsConfirmedOrWithdrawn(_ backend: Backend) throws {
        let (db, dir) = try temporaryDatabase(backend)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let grace = "did:key:zDnaeGraceAgreement0000000000000000000000000000000000"
        let kept = String(repeating: "01", count: 16)
        let dropped = String(repeating: "02", count: 16)
        try db.recordExchange(
            contact(grace, pubKey: "R1JB", edge: kept), issuedRoute: route(grace), payloadJSON: "{\"a\":1}", confirmation: .pending(edge: kept))
        #expect(try db.unconfirmedContactDIDs() == [grace])
        #expect(try db.confirmExchange(edge: kept))
        #expect(try db.unconfirmedContactDIDs().isEmpty && db.contacts().count == 1)
        // A new contact withdrawn: deleted with everything tied to it.
        let eve = "did:key:zDnaeEveAgreement00000000000000000000000000000000000"
        try db.recordExchange(
            contact(eve, pubKey: "RVZF", edge: dropped), issuedRoute: route(eve), payloadJSON: "{\"b\":1}", confirmation: .pending(edge: dropped))
        #expect(try db.withdrawExchange(edge: dropped, now: Date(timeIntervalSince1970: 1_800_000_000)) == eve)
        #expect(try db.contacts().map(\.didPublicKey) == [grace])
        // Its line in the history says when, and nothing of whose.
        let gone = try db.withdrawnExchanges()
        #expect(gone.count == 1 && gone[0].contactDID == nil && gone[0].withdrawnAt == Date(timeIntervalSince1970: 1_800_000_000))
        #expect(try db.withdrawnExchanges(anonymousOnly: true) == gone)
        // An older contact updated by a withdrawn exchange stays (the peer holds it from before), with
        // the route and graph edge of the exchange the peer holds: its messages reach a mailbox there.
        let again = String(repeating: "03", count: 16)
        try db.recordExchange(
            contact(grace, pubKey: "R1JB", edge: again), issuedRoute: route(grace), payloadJSON: "{\"c\":1}", confirmation: .pending(edge: again))
        #expect(try db.contacts().first?.sealedRoute == "route of \(again)")
        #expect(try db.withdrawExchange(edge: again) == nil)
        #expect(try db.contacts().count == 1 && db.pendingConfirmations().isEmpty)
        // The contact's own history says an exchange with them was withdrawn; deleting them deletes it.
        #expect(try db.withdrawnExchanges(contactDID: grace).count == 1)
        #expect(try db.withdrawnExchanges().count == 2)
        #expect(try db.contacts().first?.sealedRoute == "route of \(kept)" && db.contacts().first?.graphExportEdgeId == kept)
        let graceID = try #require(try db.contacts().first?.id)
        #expect(try db.deleteContact(id: graceID))
        #expect(try db.withdrawnExchanges(contactDID: grace).isEmpty && db.withdrawnExchanges().count == 1)
    }

    /// Deleting a contact whose exchange is still unconfirmed deletes the question too: nothing of the
    /// person (their DID, an address of theirs) is left to ask about.
    @Test(arguments: Backend.allCases) func deletingAnUnconfirmedContactEndsTheAsking(_ backend: Backend) throws {
        let (db, dir) = try temporaryDatabase(backend)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let grace = "did:key:zDnaeGraceDeleted000000000000000000000000000000000000"
        let edge = String(repeating: "0a", count: 16)
        try db.recordExchange(
            contact(grace, pubKey: "R1JB", edge: edge), issuedRoute: route(grace), payloadJSON: "{\"a\":1}", confirmation: .pending(edge: edge))
        #expect(try db.pendingConfirmations().map(\.contactDID) == [grace])
        let id = try #require(try db.contacts().first?.id)
        #expect(try db.deleteContact(id: id))
        #expect(try db.pendingConfirmations().isEmpty && db.unconfirmedContactDIDs().isEmpty)
    }

    /// An exchange still waiting for the peer's word does not mark its contact once a later exchange,
    /// confirmed, has replaced it (the listing follows the contact's latest exchange); the older one's
    /// query still runs, and its answer leaves the contact as the later one left it.
    @Test(arguments: Backend.allCases) func aLaterConfirmedExchangeIsWhatTheListingShows(_ backend: Backend) throws {
        let (db, dir) = try temporaryDatabase(backend)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let grace = "did:key:zDnaeGraceLater00000000000000000000000000000000000000"
        let older = String(repeating: "0a", count: 16)
        let later = String(repeating: "0b", count: 16)
        try db.recordExchange(
            contact(grace, pubKey: "R1JB", edge: older), issuedRoute: route(grace), payloadJSON: "{\"a\":1}", confirmation: .pending(edge: older))
        #expect(try db.unconfirmedContactDIDs() == [grace])
        try db.recordExchange(
            contact(grace, pubKey: "R1JB", edge: later), issuedRoute: route(grace), payloadJSON: "{\"a\":2}", confirmation: .pending(edge: later))
        #expect(try db.confirmExchange(edge: later))
        #expect(try db.unconfirmedContactDIDs().isEmpty, "the contact is as the later, confirmed exchange left it")
        #expect(try db.pendingConfirmations().map(\.edge) == [older], "the older exchange's query still runs")
        #expect(try db.withdrawExchange(edge: older) == nil)
        #expect(try db.contacts().map(\.graphExportEdgeId) == [later] && db.unconfirmedContactDIDs().isEmpty)
    }

    /// Two unconfirmed exchanges on top of each other, withdrawn in either order: the contact ends as
    /// the last confirmed exchange left it; a contact both created and updated unconfirmed is deleted.
    @Test(arguments: Backend.allCases) func stackedUnconfirmedExchangesUnwindInEitherOrder(_ backend: Backend) throws {
        for lowerFirst in [true, false] {
            let (db, dir) = try temporaryDatabase(backend)
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let grace = "did:key:zDnaeGraceStacked000000000000000000000000000000000000"
            let e = (1...3).map { String(repeating: "0\($0)", count: 16) }
            try db.recordExchange(
                contact(grace, pubKey: "R1JB", edge: e[0]), issuedRoute: route(grace), payloadJSON: "{\"a\":1}", confirmation: .final(edge: e[0]))
            for (i, edge) in e.dropFirst().enumerated() {
                try db.recordExchange(
                    contact(grace, pubKey: "R1JB", edge: edge), issuedRoute: route(grace), payloadJSON: "{\"b\":\(i)}", confirmation: .pending(edge: edge))
            }
            for edge in lowerFirst ? [e[1], e[2]] : [e[2], e[1]] { try db.withdrawExchange(edge: edge) }
            #expect(
                try db.contacts().map(\.graphExportEdgeId) == [e[0]] && db.contacts().first?.sealedRoute == "route of \(e[0])", "lower first: \(lowerFirst)")

            let eve = "did:key:zDnaeEveStacked00000000000000000000000000000000000000"
            try db.recordExchange(
                contact(eve, pubKey: "RVZF", edge: e[1]), issuedRoute: route(eve), payloadJSON: "{\"c\":1}", confirmation: .pending(edge: e[1]))
            try db.recordExchange(
                contact(eve, pubKey: "RVZF", edge: e[2]), issuedRoute: route(eve), payloadJSON: "{\"c\":2}", confirmation: .pending(edge: e[2]))
            for edge in lowerFirst ? [e[1], e[2]] : [e[2], e[1]] { try db.withdrawExchange(edge: edge) }
            #expect(try db.contact(did: eve) == nil, "lower first: \(lowerFirst)")
        }
    }
}

/// The presence key a peer hands over in the exchange is kept with its contact (docs/PROTOCOL.md §3),
/// new or updated, on both backends.
@Suite struct ExchangePresenceKeyTests {
    @Test(arguments: Backend.allCases) func anExchangeKeepsThePeersPresenceKey(_ backend: Backend) throws {
        let (db, dir) = try temporaryDatabase(backend)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let did = "did:key:zDnaeAdaPresence0000000000000000000000000000000000000"
        let first = Sodium.randomBytes(16)
        let second = Sodium.randomBytes(16)
        var c = proximityContact(did: did, name: "Ada Lovelace", message: "hi")
        let route = NearcardDatabase.IssuedRoute(
            mailboxToken: Sodium.randomBytes(32), contactDID: did, issuedAt: Date(), expiresAt: Date().addingTimeInterval(60))
        try db.recordExchange(c, issuedRoute: route, payloadJSON: "{\"n\":1}", presenceKey: first)
        #expect(try db.presenceKey(contactDID: did) == first, "a new contact keeps the key")
        c.card.company = "Engines"
        try db.recordExchange(c, issuedRoute: route, payloadJSON: "{\"n\":2}", presenceKey: second)
        #expect(try db.presenceKey(contactDID: did) == second, "the next exchange's key replaces it")
    }
}

/// The common-contacts setting, its set and its rate (docs/PROTOCOL.md §22.3).
extension AgreementStoreTests {
    @Test(arguments: Backend.allCases) func theCommonContactsRateIsThreeAnHour(_ backend: Backend) throws {
        let (db, dir) = try temporaryDatabase(backend)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(try db.commonContactsSet() == nil, "off by default")
        try db.setCommonContacts(enabled: true)
        let did = "did:key:zDnaeAdaRate000000000000000000000000000000000000000"
        var c = contact(did, pubKey: "QUFB", edge: String(repeating: "0a", count: 16))
        let now = Date()
        for i in 0..<3 {
            #expect(try db.commonContactsAllowed(with: did, now: now.addingTimeInterval(Double(i))))
            // A run counts when it begins, whether or not an exchange is stored after it.
            try db.recordCommonContactsRun(with: did, now: now.addingTimeInterval(Double(i)))
        }
        c.card.company = "Stored"
        try db.recordExchange(c, issuedRoute: route(did), payloadJSON: "{\"run\":1}", commonContacts: [], now: now)
        #expect(try db.commonContacts(with: did) == [], "a run that found none is told apart from none at all")
        try db.deleteContact(id: try #require(db.contacts().first?.id))
        #expect(try db.commonContactsAllowed(with: did, now: now.addingTimeInterval(10)) == false, "deleting the contact does not reset the rate")
        #expect(try db.commonContactsAllowed(with: did, now: now.addingTimeInterval(10)) == false, "a fourth run within the hour is not offered")
        #expect(try db.commonContactsAllowed(with: did, now: now.addingTimeInterval(3601)), "an hour later it is again")
        #expect(try db.commonContactsSet() == [], "the set is the book's DIDs (none left)")
    }

    /// A bot policy's rate counts are the store's: a second connection to the same store — a restarted
    /// bot, another bot of a fleet on one PostgreSQL database — sees the acceptances the first made,
    /// and the windows slide. A visitor is kept as a hash of their DID, gone with their contact.
    @Test(arguments: Backend.allCases) func rateCountsAreSharedAndSurviveARestart(_ backend: Backend) throws {
        let (db, dir) = try temporaryDatabase(backend)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let other = try NearcardDatabase(location: db.location)
        let ada = "did:key:zDnaeAdaRates000000000000000000000000000000000000000"
        let t0 = Date(timeIntervalSince1970: 1_800_000_000)
        let perPeer = NearcardDatabase.AcceptanceLimit(count: 2, seconds: 60)
        let overall = NearcardDatabase.AcceptanceLimit(count: 3, seconds: 10)
        #expect(try db.admitAcceptance(did: ada, perPeer: perPeer, overall: overall, now: t0) == .admitted)
        #expect(try other.admitAcceptance(did: ada, perPeer: perPeer, overall: overall, now: t0.addingTimeInterval(1)) == .admitted)
        #expect(try db.admitAcceptance(did: ada, perPeer: perPeer, overall: overall, now: t0.addingTimeInterval(2)) == .perPeerLimit(perPeer))
        #expect(try other.admitAcceptance(did: "did:key:zB", perPeer: perPeer, overall: overall, now: t0.addingTimeInterval(3)) == .admitted)
        #expect(try db.admitAcceptance(did: "did:key:zC", perPeer: perPeer, overall: overall, now: t0.addingTimeInterval(4)) == .overallLimit(overall))
        #expect(try db.admitAcceptance(did: "did:key:zC", perPeer: perPeer, overall: overall, now: t0.addingTimeInterval(15)) == .admitted)
        #expect(try other.admitAcceptance(did: ada, perPeer: perPeer, overall: overall, now: t0.addingTimeInterval(61)) == .admitted)
    }

    /// A visitor's acceptances are counted under a hash keyed with a secret of the book (one for the
    /// whole fleet), not SHA-256 of the DID: `printf %s DID | sha256sum`, which anyone holding the DID
    /// could compute, matches no row. Two connections (two bots) count under the same key.
    @Test(arguments: Backend.allCases) func aVisitorIsCountedUnderAKeyedHash(_ backend: Backend) throws {
        let (db, dir) = try temporaryDatabase(backend)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let other = try NearcardDatabase(location: db.location)
        let ada = "did:key:zDnaeAdaKeyed0000000000000000000000000000000000000"
        let limit = NearcardDatabase.AcceptanceLimit(count: 1, seconds: 60)
        #expect(try db.admitAcceptance(did: ada, perPeer: limit, overall: nil) == .admitted)
        #expect(try other.admitAcceptance(did: ada, perPeer: limit, overall: nil) == .perPeerLimit(limit), "the fleet counts under one key")
        let rows: [String] = try db.write { try $0.rows("SELECT didHash FROM policyAcceptance").map { try $0[0] ?? "" } }
        let plain = Hex.encode(SHA256.hash(Array(ada.utf8)))
        #expect(rows.count == 1 && rows[0].count == 64 && rows[0] != plain, "\(rows)")
        let secret: String? = try db.write { try $0.value("SELECT value FROM bookSecret WHERE name = 'visitor'") }
        #expect(secret?.count == 64, "32 bytes, made on first use")
        // Another book keys the same DID differently.
        let (third, thirdDir) = try temporaryDatabase(backend)
        defer { try? FileManager.default.removeItem(atPath: thirdDir) }
        #expect(try third.admitAcceptance(did: ada, perPeer: limit, overall: nil) == .admitted)
        let theirs: [String] = try third.write { try $0.rows("SELECT didHash FROM policyAcceptance").map { try $0[0] ?? "" } }
        #expect(theirs.count == 1 && theirs != rows)
    }
}
