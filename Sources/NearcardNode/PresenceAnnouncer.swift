import Foundation
internal import NIOCore
import NearcardCrypto
import NearcardDiscovery
import NearcardStore
import Synchronization

/// Announces this node on the LAN with nothing that lasts (docs/PROTOCOL.md §3): every publication has
/// a fresh presence tag, a random SRV host name with this machine's addresses under it, and in
/// private mode a random instance name; default mode keeps the display name the person chose to
/// announce. All of it is renewed at start and every rotation period.
final class PresenceAnnouncer: Sendable {
    /// What one publication says.
    struct Advert: Sendable, Equatable {
        var instanceName: String
        var txt: TXTRecord
        var host: PublishedHost
    }

    let discovery: any Discovery
    let database: NearcardDatabase
    let isPrivate: Bool
    let port: Int
    /// Interfaces named by the user (empty: every interface `filter` permits).
    let interfaces: [String]
    let filter: InterfaceFilter
    /// Seconds between two publications.
    let period: TimeInterval
    /// This machine's addresses on the announced interfaces, as published (`currentAddresses` by
    /// default; a test gives its own).
    let addressSource: @Sendable () -> [PeerAddress]
    /// How often the addresses are compared with the published ones: a node started before its
    /// network was up (an address still being assigned, Wi-Fi joined later, DHCP handing out another)
    /// announces again as soon as they change, not at the next rotation.
    let addressCheckInterval: TimeInterval
    /// Told the key each publication tags with (the node hands the same one over in its sessions).
    let keyPublished: @Sendable ([UInt8]) -> Void

    private struct State {
        var publication: (any Announcement)?
        /// The tags of this node's recent publications (to tell itself apart from peers while a
        /// goodbye is under way); the newest last.
        var ownTags: [String] = []
        var lastKey: [UInt8]?
        var stopped = false
        /// The addresses the current publication carries.
        var publishedAddresses: [PeerAddress] = []
        /// The name announced in default mode: the card's, changed while the node runs by `republish`.
        var displayName: String?
        /// When the next rotation is due; a `republish` sets it a whole period from then.
        var due = Date.distantFuture
    }
    private let state = Mutex(State())

    /// The name announced in default mode (nil: none, or private mode).
    var displayName: String? { state.withLock { $0.displayName } }

    init(
        discovery: any Discovery, database: NearcardDatabase, displayName: String?, isPrivate: Bool, port: Int,
        interfaces: [String], filter: InterfaceFilter, period: TimeInterval, addressCheckInterval: TimeInterval = 2,
        retryAfter: TimeInterval = PresenceAnnouncer.settleTimeout,
        addresses: (@Sendable () -> [PeerAddress])? = nil, keyPublished: @escaping @Sendable ([UInt8]) -> Void = { _ in }
    ) {
        self.retryAfter = retryAfter
        self.keyPublished = keyPublished
        self.discovery = discovery
        self.database = database
        state.withLock { $0.displayName = displayName }
        self.isPrivate = isPrivate
        self.port = port
        self.interfaces = interfaces
        self.filter = filter
        self.period = period
        self.addressCheckInterval = addressCheckInterval
        if let addresses {
            addressSource = addresses
        } else {
            addressSource = { Self.currentAddresses(interfaces: interfaces, filter: filter) }
        }
    }

    /// How long avahi-daemon may take to confirm a publication (probing takes about a second) before
    /// it is made again; doubled at each further try, up to a minute.
    static let settleTimeout: TimeInterval = 10

    /// The wait before try number `attempt` (from 0) of something avahi-daemon did not take: `first`,
    /// then twice as long each time, at most 60 s (10, 20, 40, 60, 60 … s by default).
    static func backoff(_ attempt: Int, first: TimeInterval = settleTimeout) -> TimeInterval {
        min(first * Double(1 << min(attempt, 3)), 60)
    }
    /// The first wait before a publication avahi-daemon did not take is tried again (then twice as long,
    /// up to 60 s): `settleTimeout` (shorter in tests).
    let retryAfter: TimeInterval
    /// The prefix of a private instance name; 8 random hex digits follow.
    static let privateInstancePrefix = "nearcard-"

    /// Whether `instance` may be this node's own announcement, or another node's of the same home (the
    /// same name, or avahi's alternative for it): such an announcement is read at once, so that its
    /// tag tells it apart (`isOwn`, `PresenceResolver`) before it could be listed as a peer.
    func mayBeOwn(_ instance: String) -> Bool {
        guard !isPrivate, let name = displayName else { return false }
        return TXTRecord.instance(instance, announces: name)
    }

    /// A new advert: a fresh tag made with `presenceKey`, a fresh host name over `addresses`, and
    /// the display name (default mode) or a fresh random instance name (private mode).
    static func makeAdvert(displayName: String?, isPrivate: Bool, presenceKey: [UInt8], addresses: [PeerAddress]) -> Advert {
        let name = isPrivate ? nil : displayName
        let instance = name ?? privateInstancePrefix + Hex.encode(Sodium.randomBytes(4))
        return Advert(
            instanceName: instance, txt: TXTRecord(tag: Presence.makeTag(key: presenceKey), name: name),
            host: PublishedHost(name: "nc-\(Hex.encode(Sodium.randomBytes(8))).local", addresses: addresses))
    }

    /// `address` as announced by a node that uses it alone (`--address`), on the interface that holds
    /// it — loopback for any address of 127.0.0.0/8, which loopback answers for whole.
    static func own(_ address: String) -> PeerAddress {
        let devices = (try? System.enumerateDevices()) ?? []
        let holder =
            devices.first { $0.address?.ipAddress == address && $0.interfaceIndex > 0 }
            ?? (address.hasPrefix("127.") ? devices.first { $0.address?.ipAddress == "127.0.0.1" && $0.interfaceIndex > 0 } : nil)
        return PeerAddress(ip: address, port: 0, interfaceName: holder?.name ?? "", interfaceIndex: Int32(holder?.interfaceIndex ?? 0))
    }

    /// This machine's addresses on the interfaces the node announces on, IPv4 and IPv6, each with its
    /// interface (loopback only on loopback).
    static func currentAddresses(interfaces: [String], filter: InterfaceFilter) -> [PeerAddress] {
        guard let devices = try? System.enumerateDevices() else { return [] }
        var out: [PeerAddress] = []
        for d in devices where interfaces.isEmpty ? filter.permits(d.name) : interfaces.contains(d.name) {
            guard let ip = d.address?.ipAddress, d.interfaceIndex > 0 else { continue }
            let a = PeerAddress(
                ip: ip.split(separator: "%").first.map(String.init) ?? ip, port: 0, interfaceName: d.name,
                interfaceIndex: Int32(d.interfaceIndex))
            if !out.contains(a) { out.append(a) }
        }
        return out
    }

    /// The presence key to tag with now: the store's (read each time, so `id rotate-presence` in
    /// another process takes effect at the next rotation); the last one known if the store does not
    /// answer, else a throw-away key nobody holds.
    func presenceKey() -> [UInt8] {
        if let key = try? database.presenceKey(upToDate: true) {
            state.withLock { $0.lastKey = key }
            return key
        }
        return state.withLock { s in
            if s.lastKey == nil { s.lastKey = Presence.makeKey() }
            return s.lastKey!
        }
    }

    /// Withdraws the current publication (a goodbye) and publishes a new advert. Returns the new
    /// publication, or nil once stopped.
    @discardableResult
    func publish() throws(DiscoveryError) -> (any Announcement)? {
        let addresses = addressSource()
        let key = presenceKey()
        keyPublished(key)
        let advert = Self.makeAdvert(displayName: self.displayName, isPrivate: isPrivate, presenceKey: key, addresses: addresses)
        // The service goes on the interfaces its host's addresses are on, so it is never announced
        // where it cannot be resolved (nor on an interface the filter denies).
        var on = interfaces
        if on.isEmpty {
            for a in addresses where !on.contains(a.interfaceName) { on.append(a.interfaceName) }
        }
        let old: (any Announcement)? = state.withLock { s in
            guard !s.stopped else { return nil }
            s.ownTags = Array((s.ownTags + [advert.txt.tag!]).suffix(8))
            defer { s.publication = nil }
            return s.publication
        }
        old?.withdraw()
        guard !state.withLock({ $0.stopped }) else { return nil }
        let publication = try discovery.publish(instanceName: advert.instanceName, port: port, txt: advert.txt, interfaces: on, host: advert.host)
        let kept = state.withLock { s -> Bool in
            guard !s.stopped else { return false }
            s.publication = publication
            s.publishedAddresses = addresses
            return true
        }
        if !kept {
            publication.withdraw()
            return nil
        }
        return publication
    }

    /// `publish()` on a thread of its own: each of its D-Bus calls may wait up to 25 s on an avahi-daemon
    /// too busy to answer, and the cooperative pool (two threads on a 2-core laptop) must never wait on it.
    func publishAside() async throws(DiscoveryError) -> (any Announcement)? {
        try await onOwnThread("nearcard-publish") { Result { () throws(DiscoveryError) in try self.publish() } }.get()
    }

    /// Announces again now, as a rotation does (a goodbye for the old publication, a fresh tag with the
    /// store's presence key, a fresh host name), under `displayName` when given: what a command
    /// changed while the node runs (`id rotate-presence`, a new name on the card) is on the LAN when
    /// this returns, not at the next rotation. The next rotation is then a whole period away.
    /// Returns the new publication's settled name, or nil once stopped.
    @discardableResult
    func republish(displayName: String?? = .none) async throws -> String? {
        state.withLock { s in
            if case .some(let name) = displayName { s.displayName = name }
            s.due = Date().addingTimeInterval(max(1, period))
        }
        guard let publication = try await publishAside() else { return nil }
        return try await publication.established()
    }

    /// Whether a discovered announcement is this node's own (one of its recent tags).
    func isOwn(_ peer: DiscoveredPeer) -> Bool {
        guard let tag = peer.txt.tag else { return false }
        return state.withLock { $0.ownTags.contains(tag) }
    }

    /// Publishes now, then again every `period` seconds until cancelled, reporting each settled name
    /// (or why the node is not announced). A publication avahi-daemon does not take (a daemon too busy
    /// to answer D-Bus within 25 s, a refusal) is tried again after 10 s, then 20, 40 and every 60 s:
    /// the node serves by address meanwhile, and browses.
    func run(events: EventBus) async {
        var current: (any Announcement)?
        var attempts = 0
        while !Task.isCancelled {
            do throws(DiscoveryError) {
                guard let made = try await publishAside() else { return } // stopped
                current = made
                break
            } catch {
                if attempts == 0 {
                    events.emit(
                        .error(
                            message:
                                "discovery: cannot announce this node yet (\(error.message)); trying again in \(Int(retryAfter.rounded(.up))) s, meanwhile peers can reach it by address"
                        ))
                }
            }
            try? await Task.sleep(nanoseconds: UInt64(Self.backoff(attempts, first: retryAfter) * 1e9))
            attempts += 1
        }
        while !Task.isCancelled {
            // A publication avahi-daemon never confirms (nor fails) is made again, after a longer wait
            // each time (10, 20, 40, then 60 s), never waited on forever: the node would stay off the
            // LAN and never rotate.
            var unsettled = 0
            while let publication = current, !Task.isCancelled {
                do {
                    let wait = Self.backoff(unsettled)
                    if let name = try await publication.established(within: wait) {
                        events.emit(.published(name: name))
                        break
                    }
                    unsettled += 1
                    if unsettled == 1 {
                        events.emit(
                            .error(
                                message:
                                    "discovery: avahi-daemon did not confirm this node's announcement within \(Int(Self.settleTimeout)) s; announcing again"))
                    }
                    do throws(DiscoveryError) { current = try await publishAside() } catch {
                        events.emit(.error(message: "discovery: cannot announce this node again (\(error.message)); peers can still reach it by address"))
                        current = nil
                    }
                } catch {
                    events.emit(.error(message: "discovery: this node is not announced on the LAN (\(error)); peers can still reach it by address"))
                    break
                }
            }
            await waitForRotation()
            if Task.isCancelled { break }
            do throws(DiscoveryError) {
                current = try await publishAside()
                if current == nil { break }
            } catch {
                current = nil
                events.emit(.error(message: "discovery: cannot announce this node again (\(error.message)); peers can still reach it by address"))
            }
        }
    }

    /// Waits until the next publication is due: the rotation period, or sooner when the machine's
    /// addresses on the announced interfaces are no longer the published ones.
    func waitForRotation() async {
        state.withLock { $0.due = Date().addingTimeInterval(max(1, period)) }
        while !Task.isCancelled {
            let left = state.withLock { $0.due }.timeIntervalSinceNow
            if left <= 0 { return }
            try? await Task.sleep(nanoseconds: UInt64(min(left, max(0.1, addressCheckInterval)) * 1e9))
            if addressesChanged() { return }
        }
    }

    /// Whether the machine's addresses differ from those the current publication carries (in any
    /// order).
    func addressesChanged() -> Bool {
        let now = Set(addressSource())
        return state.withLock { Set($0.publishedAddresses) } != now
    }

    /// Takes the node off the network for good.
    func withdraw() {
        let old = state.withLock { s -> (any Announcement)? in
            s.stopped = true
            defer { s.publication = nil }
            return s.publication
        }
        old?.withdraw()
    }
}
