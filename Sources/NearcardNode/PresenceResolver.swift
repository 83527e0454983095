package import Foundation
import NearcardCrypto
package import NearcardDiscovery
public import NearcardModel
package import NearcardStore
import Synchronization

/// Recognises contacts among the anonymous announcements on the LAN (docs/PROTOCOL.md §3): a peer's
/// presence tag is checked against every contact's presence key; the one that made it names the
/// contact. The keys are read from the store at most once every `refresh` seconds (an exchange that
/// hands over a new key is seen within that time), or, while a watch on a shared store tells every
/// change as it commits, when told (`invalidate()`) and once a minute besides.
public final class PresenceResolver: Sendable {
    private let load: @Sendable () -> [ContactPresence]
    /// This home's own presence key, if it has one: its own nodes are told apart from peers by it.
    private let loadOwnKey: @Sendable () -> [UInt8]?
    private let refresh: @Sendable () -> TimeInterval
    private let cache = Mutex<(at: Date, contacts: [ContactPresence], keys: [[UInt8]], own: [UInt8]?)?>(nil)

    /// A resolver over a fixed list of contacts (a face that read them once, a test, a benchmark), and
    /// this home's own presence key (`ownKey`) to mark its own nodes.
    public init(contacts: [ContactPresence], ownKey: [UInt8]? = nil) {
        self.load = { contacts }
        self.loadOwnKey = { ownKey }
        self.refresh = { .infinity }
    }

    /// A resolver over the store's contacts and own key, read again when older than `refresh` seconds;
    /// `watched` says whether a watch on the store calls `invalidate()` at each change now, so the
    /// keys are read again only when told (and every `watchedRefresh` seconds, in case).
    package init(database: NearcardDatabase, refresh: TimeInterval = 2, watched: @escaping @Sendable () -> Bool = { false }) {
        self.load = { (try? database.contactPresenceKeys()) ?? [] }
        self.loadOwnKey = { Self.ownKey(database) }
        self.refresh = { watched() ? Self.watchedRefresh : refresh }
    }

    /// How often the keys are read while a watch tells each change.
    package static let watchedRefresh: TimeInterval = 60

    /// The home's presence key, without making one (a home that never announced has none).
    package static func ownKey(_ database: NearcardDatabase) -> [UInt8]? {
        (try? database.presenceKeyCreatedAt()) != nil ? try? database.presenceKey() : nil
    }

    /// A resolver over what `book` holds now (the contacts' presence keys and this home's own), read
    /// once: for a command that lists the LAN and exits (`peers`). The keys never leave the resolver.
    public convenience init(reading book: Book) throws(NodeError) {
        self.init(contacts: try book.contactPresenceKeys(), ownKey: Self.ownKey(book.database))
    }

    /// Nobody is recognised (no store to read contacts from).
    public static let none = PresenceResolver(contacts: [])

    private func current(now: Date = Date()) -> (contacts: [ContactPresence], keys: [[UInt8]], own: [UInt8]?) {
        if let c = cache.withLock({ $0 }), now.timeIntervalSince(c.at) < refresh() { return (c.contacts, c.keys, c.own) }
        let contacts = load()
        let keys = contacts.map(\.presenceKey)
        let own = loadOwnKey()
        cache.withLock { $0 = (now, contacts, keys, own) }
        return (contacts, keys, own)
    }

    /// Reads the contacts again at the next resolution.
    package func invalidate() { cache.withLock { $0 = nil } }

    /// The contact whose presence key made `tag`, or nil (a stranger, or no well-formed tag).
    package func contact(for tag: String?) -> RecognisedContact? {
        guard let tag else { return nil }
        let (contacts, keys, _) = current()
        guard let i = Presence.resolve(tag, among: keys) else { return nil }
        let c = contacts[i]
        return RecognisedContact(did: c.did, name: c.name, presenceKey: c.presenceKey)
    }

    /// Whether `instance` is the name a contact would announce (the name they are kept under): in a
    /// crowd, such an announcement is read at once, so the contact is recognised by their tag without
    /// waiting for its turn (`AddressPolicy.readsAtOnce`). A contact announcing another name is
    /// recognised when its turn comes.
    package func mayBeContact(named instance: String) -> Bool {
        current().contacts.contains { TXTRecord.instance(instance, announces: $0.name) }
    }

    /// The peer with `contact` set to whom its tag resolves (nil: a stranger).
    package func resolve(_ peer: DiscoveredPeer) -> DiscoveredPeer {
        var p = peer
        if let tag = peer.txt.tag, let own = current().own, Presence.matches(tag, key: own) {
            p.isThisNode = true
            return p
        }
        p.contact = contact(for: peer.txt.tag)
        return p
    }

    /// Each peer resolved (the keys read once for all of them).
    package func resolve(_ peers: [DiscoveredPeer]) -> [DiscoveredPeer] {
        peers.map(resolve)
    }

    /// A discovery event with its peer resolved.
    func resolve(_ event: DiscoveryEvent) -> DiscoveryEvent {
        switch event {
        case .found(let p): .found(resolve(p))
        case .updated(let p): .updated(resolve(p))
        case .lost, .failed, .settled: event
        }
    }
}
