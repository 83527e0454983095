import CBaseline
import NearcardCrypto
import NearcardDiscovery
import NearcardModel
import NearcardNode
import NearcardStore

/// Resolving presence tags (PROTOCOL.md §3): 200 announcements on a busy LAN, 10 of them contacts and
/// 190 strangers (a stranger costs a SipHash per contact: the worst case), against 1,000 contacts'
/// presence keys. Nearcard's `PresenceResolver` (what `peers` and a listening node run) beside the same
/// loop in C over libsodium. Target: under 50 ms for the whole list.
func presenceBenchmark(contacts: Int = 1_000, announcements: Int = 200, recognised: Int = 10, rounds: Int = 21) -> String {
    _ = cb_init()
    let people = (0..<contacts).map {
        ContactPresence(did: "did:key:zDnaeContact\($0)", name: "Contact \($0)", presenceKey: Presence.makeKey())
    }
    var peers: [DiscoveredPeer] = []
    for i in 0..<announcements {
        // The recognised ones spread over the list of keys (the last key is the slowest to find).
        let key = i < recognised ? people[(contacts - 1) - i * (contacts / recognised)].presenceKey : Presence.makeKey()
        peers.append(
            DiscoveredPeer(
                instanceName: "nearcard-\(i)", hostName: "nc-\(i).local", port: 7447,
                txt: TXTRecord(tag: Presence.makeTag(key: key), name: nil), addresses: []))
    }
    let resolver = PresenceResolver(contacts: people)
    // The C loop's input: raw tags and keys, prepared once.
    let rawTags = peers.flatMap { (try? Hex.decode($0.txt.tag!)) ?? [] }
    let rawKeys = people.flatMap(\.presenceKey)
    var out = [Int32](repeating: -1, count: announcements)

    var ours: [Double] = []
    var floor: [Double] = []
    var found = 0
    var floorFound: Int32 = 0
    for r in 0..<rounds {
        func swiftPass() {
            let t0 = now()
            found = resolver.resolve(peers).filter { $0.contact != nil }.count
            ours.append(Double(now() - t0))
        }
        func cPass() {
            let t0 = now()
            floorFound = Int32(cb_presence_resolve(rawTags, announcements, rawKeys, contacts, &out))
            floor.append(Double(now() - t0))
        }
        if r % 2 == 0 {
            swiftPass()
            cPass()
        } else {
            cPass()
            swiftPass()
        }
    }
    precondition(found == recognised && Int(floorFound) == recognised, "recognised \(found) (C: \(floorFound)) of \(recognised)")
    var table =
        "| \(announcements) announcements × \(contacts) contacts (\(recognised) recognised) | median of \(rounds) | min | max | target |\n|---|---|---|---|---|\n"
    table += "| `PresenceResolver.resolve` (Nearcard) | \(format(median(ours))) | \(format(ours.min()!)) | \(format(ours.max()!)) | < 50 ms |\n"
    table +=
        "| the same loop in C (crypto_shorthash_siphash24, sodium_memcmp) | \(format(median(floor))) | \(format(floor.min()!)) | \(format(floor.max()!)) | |\n"
    table += "| ratio | \(format2(median(ours) / median(floor)))× | | | |\n"
    return table
}
