import Foundation
import NearcardCrypto
import NearcardModel
import NearcardStore
import Testing

/// Presence keys (docs/PROTOCOL.md §3) on both backends: this node's own, made once and replaced by a
/// rotation; each contact's, kept by `keep(…, presenceKey:)`, listed for the resolver, and gone with
/// the contact.
@Suite struct PresenceStoreTests {
    @Test(arguments: Backend.allCases) func theNodesPresenceKeyIsMadeOnceAndRotated(_ backend: Backend) throws {
        let (db, dir) = try temporaryDatabase(backend)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(try db.presenceKeyCreatedAt() == nil)
        let first = try db.presenceKey()
        #expect(first.count == 16)
        #expect(try db.presenceKey() == first, "kept, not made again")
        #expect(try NearcardDatabase(location: db.location).presenceKey() == first, "another connection reads the same key")
        let rotated = try db.rotatePresenceKey()
        #expect(rotated.count == 16 && rotated != first)
        #expect(try db.presenceKey() == rotated)
        #expect(try db.presenceKeyCreatedAt() != nil)
    }

    @Test(arguments: Backend.allCases) func contactsKeepThePresenceKeyTheyHandedOver(_ backend: Backend) throws {
        let (db, dir) = try temporaryDatabase(backend)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let adaKey = Presence.makeKey()
        let graceKey = Presence.makeKey()
        let ada = try db.keep(proximityContact(did: "did:key:zAda", name: "Ada Lovelace", message: "hi"), presenceKey: adaKey).contact
        _ = try db.keep(proximityContact(did: "did:key:zGrace", name: "Grace", message: "hi"), presenceKey: graceKey)
        _ = try db.keep(proximityContact(did: "did:key:zLin", name: "Lin", message: "hi"))
        #expect(
            try db.contactPresenceKeys() == [
                .init(did: "did:key:zAda", name: "Ada Lovelace", presenceKey: adaKey),
                .init(did: "did:key:zGrace", name: "Grace", presenceKey: graceKey),
            ])
        // nil keeps the stored key (a QR code, an exchange that brought none); a value replaces it;
        // recording an exchange again leaves it in place.
        _ = try db.keep(proximityContact(did: "did:key:zAda", name: "Ada Lovelace", message: "again"))
        #expect(try db.presenceKey(contactDID: "did:key:zAda") == adaKey)
        _ = try db.recordContact(proximityContact(did: "did:key:zAda", name: "Ada Lovelace", message: "again"), payloadJSON: nil)
        #expect(try db.presenceKey(contactDID: "did:key:zAda") == adaKey)
        let newer = Presence.makeKey()
        _ = try db.keep(proximityContact(did: "did:key:zAda", name: "Ada Lovelace", message: "again"), presenceKey: newer)
        #expect(try db.presenceKey(contactDID: "did:key:zAda") == newer)
        #expect(try db.presenceKey(contactDID: "did:key:zLin") == nil)
        // A key of the wrong length is refused, and nothing is stored.
        #expect(throws: StoreError.self) { try db.keep(proximityContact(did: "did:key:zMo", name: "Mo", message: "x"), presenceKey: [1, 2, 3]) }
        #expect(try db.contact(did: "did:key:zMo") == nil)
        // Deleting the contact deletes the key with the row.
        #expect(try db.deleteContact(id: ada.id))
        #expect(try db.contactPresenceKeys().map(\.did) == ["did:key:zGrace"])
        #expect(try db.presenceKey(contactDID: "did:key:zAda") == nil)
    }
}
