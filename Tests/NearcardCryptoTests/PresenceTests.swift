import Foundation
import NearcardCrypto
import Testing

/// Presence tags (docs/PROTOCOL.md §3) against vectors PyNaCl computed (Tests/Vectors/presence).
@Suite struct PresenceTests {
    @Test func sipHashMatchesThePaper() throws {
        let v = try Vectors.json("presence/tags.json") as! [String: Any]
        #expect(Hex.encode(Presence.siphash24(key: Array(0..<16), message: Array(0..<15))) == v["sipHashPaperVector"] as? String)
    }

    @Test func tagsMatchPyNaCl() throws {
        let v = try Vectors.json("presence/tags.json") as! [String: Any]
        let cases = v["tags"] as! [[String: Any]]
        #expect(cases.count == 3)
        for c in cases {
            let key = hex(c["presenceKey"])
            let nonce = hex(c["nonce"])
            let tag = Presence.tag(key: key, nonce: nonce)
            #expect(tag == c["tag"] as? String, "\(c["comment"] ?? "")")
            #expect(Presence.matches(tag, key: key))
            #expect(Presence.resolve(tag, among: [Presence.makeKey(), key, Presence.makeKey()]) == 1)
        }
    }

    @Test func aFreshTagIsRecognisedOnlyWithItsKey() {
        let key = Presence.makeKey()
        let other = Presence.makeKey()
        let a = Presence.makeTag(key: key)
        let b = Presence.makeTag(key: key)
        #expect(a != b, "every publication has a fresh nonce")
        #expect(a.count == 32 && Presence.isWellFormed(a))
        #expect(Presence.matches(a, key: key) && Presence.matches(b, key: key))
        #expect(!Presence.matches(a, key: other))
        #expect(Presence.resolve(a, among: [other]) == nil)
        #expect(Presence.resolve(a, among: []) == nil)
    }

    @Test func malformedTagsResolveToNobody() {
        let key = Array(repeating: UInt8(7), count: 16)
        let good = Presence.tag(key: key, nonce: Array(repeating: 1, count: 8))
        for bad in [good.uppercased(), String(good.dropLast()), good + "0", "", "zz" + good.dropFirst(2), String(good.prefix(16))] {
            #expect(!Presence.isWellFormed(bad))
            #expect(!Presence.matches(bad, key: key))
            #expect(Presence.resolve(bad, among: [key]) == nil)
        }
        // A key of the wrong length recognises nothing.
        #expect(!Presence.matches(good, key: Array(key.prefix(15))))
    }
}
