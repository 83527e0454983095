internal import CAvahi
internal import Dispatch
public import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// libavahi-client's functions, loaded when discovery first starts rather than at every start of the
/// program (`CAvahi`); a missing library is said as how to install it.
let avahiLibrary: Result<nearcard_avahi, DiscoveryError> = {
    var reason = [CChar](repeating: 0, count: 256)
    guard let table = nearcard_avahi_load(&reason, reason.count) else {
        let why = String(decoding: reason.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return .failure(
            DiscoveryError(
                .daemonUnavailable,
                Phrase(
                    "cannot load Avahi's client library (%1$@): install it (apt install libavahi-client3), or exchange by address with `nearcard exchange HOST:PORT`",
                    why)))
    }
    return .success(table.pointee)
}()

/// The functions, for the code below: every path to them starts at `AvahiDiscovery.init`, which
/// loads the library first and throws when it cannot.
var avahi: nearcard_avahi {
    switch avahiLibrary {
    case .success(let table): table
    case .failure: preconditionFailure("Avahi was used before AvahiDiscovery loaded it")
    }
}

/// Avahi's words for an error code.
func avahiMessage(_ code: Int32) -> String {
    avahi.strerror(code).map { String(cString: $0) } ?? "error \(code)"
}

/// DNS-SD through avahi-daemon (libavahi-client over D-Bus), on an Avahi threaded poll.
///
/// Avahi calls back on its own thread; those callbacks only touch per-browse/per-publication state and
/// hand events to Swift concurrency through `AsyncStream`. Calls from any other thread take the poll's
/// lock first (`avahi_threaded_poll_lock`), as Avahi requires.
public final class AvahiDiscovery: Discovery, @unchecked Sendable {
    let poll: OpaquePointer
    let client: OpaquePointer
    /// The browses running now (under the poll lock), for `hurry(instanceNamed:)`.
    var browses: [ObjectIdentifier: BrowseContext] = [:]
    private let context: ClientContext

    final class ClientContext: @unchecked Sendable {
        var failure: DiscoveryError?
        var onFailure: [(DiscoveryError) -> Void] = []
    }

    /// Connects to avahi-daemon. Fails with `.daemonUnavailable` and a message naming the fix when
    /// avahi-daemon or the D-Bus system bus is not running.
    public init() throws(DiscoveryError) {
        _ = try avahiLibrary.get()
        guard let poll = avahi.threaded_poll_new() else { throw DiscoveryError(.avahi, Phrase("%1$@ failed", "avahi_threaded_poll_new")) }
        let context = ClientContext()
        var error: Int32 = 0
        guard
            let client = avahi.client_new(
                avahi.threaded_poll_get(poll), AvahiClientFlags(rawValue: 0), clientCallback,
                Unmanaged.passUnretained(context).toOpaque(), &error)
        else {
            avahi.threaded_poll_free(poll)
            throw Self.unavailable(error)
        }
        self.poll = poll
        self.client = client
        self.context = context
        guard avahi.threaded_poll_start(poll) >= 0 else {
            avahi.client_free(client)
            avahi.threaded_poll_free(poll)
            throw DiscoveryError(.avahi, Phrase("cannot start Avahi's event thread"))
        }
    }

    static func unavailable(_ error: Int32) -> DiscoveryError {
        let why = avahiMessage(error)
        let dbus = fileExists("/run/dbus/system_bus_socket") || (getenv("DBUS_SYSTEM_BUS_ADDRESS") != nil)
        return DiscoveryError(
            .daemonUnavailable,
            dbus
                ? Phrase(
                    "cannot reach avahi-daemon (%1$@): start avahi-daemon (systemctl start avahi-daemon), or exchange by address with `nearcard exchange HOST:PORT`",
                    why)
                : Phrase(
                    "cannot reach avahi-daemon (%1$@): start the D-Bus system bus and avahi-daemon (systemctl start dbus avahi-daemon), or exchange by address with `nearcard exchange HOST:PORT`",
                    why))
    }

    deinit {
        _ = avahi.threaded_poll_stop(poll)
        avahi.client_free(client)
        avahi.threaded_poll_free(poll)
    }

    /// The host name avahi-daemon publishes for this machine (`laptop.local`; it may differ from the
    /// kernel's host name after a name conflict or by its configuration); nil when it has none yet.
    public var hostName: String? {
        withLock { avahi.client_get_host_name_fqdn(client).map { String(cString: $0) } }
    }

    func withLock<T>(_ body: () throws -> T) rethrows -> T {
        avahi.threaded_poll_lock(poll)
        defer { avahi.threaded_poll_unlock(poll) }
        return try body()
    }

    // MARK: browsing

    /// How often a browse resolves each peer again, to drop those whose records expired.
    public static let reconfirmInterval: TimeInterval = 15
    /// The most announcements one browse resolves again in a second, however many there are: on a
    /// crowded LAN each is checked less often (500 peers: every ~4 minutes), so a node's cost stays the
    /// same as the crowd grows (docs/PERFORMANCE.md, "Crowds"). A peer a person is about to act on is
    /// checked over TCP when it is offered (`PeerLiveness`), whatever this interval.
    public static let maximumChecksPerSecond: Double = 2
    /// What the browses of every node on a LAN together resolve again in a second, however many nodes
    /// there are: a browse that sees N announcements resolves again at most `lanChecksPerSecond / N` a
    /// second. Each check is a query every avahi-daemon on the LAN receives and handles, so checks at a
    /// fixed rate per node would cost each laptop N × that rate; this way the LAN's check traffic stays
    /// the same as the crowd grows (100 peers: each re-resolved every ~8 minutes). A peer that left
    /// without a goodbye is still dropped when a face is about to offer it (`PeerLiveness`, a TCP
    /// check) or a dial fails.
    public static let lanChecksPerSecond: Double = 20

    /// Resolvers one browse runs at once; the other announcements wait their turn. avahi-daemon 0.8
    /// walks a list holding every browser and resolver of every client each time it handles a
    /// message, so resolvers left to pile up (200 nodes on one daemon, each seeing 199 announcements
    /// at once) slow every client of the daemon (docs/PERFORMANCE.md, "Simulation scale"). A node
    /// that runs for long is one of many clients where nodes share a machine (a simulation, a bot
    /// fleet): 4. A one-shot listing (`AddressPolicy.always`) wants everything within its few seconds,
    /// alone on its daemon: 16.
    static func maximumResolvers(_ policy: AddressPolicy) -> Int { policy.always ? 16 : 4 }

    /// Past this many announcements a browse of a node that runs for long is in a crowd: an
    /// announcement its policy does not read at once (`AddressPolicy.readsAtOnce`) is listed by its
    /// instance name, and its records (SRV, TXT) are read later, at `readsPerSecond`. Below it, every
    /// announcement is read as soon as it is seen (a few milliseconds each, from avahi's cache).
    public static let crowd = 64
    /// What the browses of every node on a LAN together read of the announcements they list by name, a
    /// second: a browse that sees N announcements reads at most `lanReadsPerSecond / N` a second (at
    /// most `maximumReadsPerSecond`). Where nodes share one avahi-daemon (a simulation, a bot fleet),
    /// every read is a D-Bus call, a signal and a free through that one daemon, and N nodes reading
    /// N announcements each at once is N² of them: 500 nodes kept the daemon busy for minutes, and the
    /// hub saw all 499 others only after 60 s (docs/PERFORMANCE.md, "Crowds").
    public static let lanReadsPerSecond: Double = 200
    public static let maximumReadsPerSecond: Double = 16

    /// How many records a crowded browse reads a second when it sees `announcements`.
    static func readsPerSecond(seeing announcements: Int) -> Double {
        min(maximumReadsPerSecond, lanReadsPerSecond / Double(max(1, announcements)))
    }

    /// Browses `_nearcard._tcp` and reports peers as they come, change and go, each with its
    /// addresses. Stop iterating to stop browsing.
    public func browse(filter: InterfaceFilter = InterfaceFilter()) -> AsyncStream<DiscoveryEvent> {
        browse(filter: filter, serviceType: TXTRecord.serviceType, addresses: .always)
    }

    /// Browses `_nearcard._tcp`, resolving addresses only for the peers `addresses` wants.
    public func browse(filter: InterfaceFilter, addresses: AddressPolicy) -> AsyncStream<DiscoveryEvent> {
        browse(filter: filter, serviceType: TXTRecord.serviceType, addresses: addresses)
    }

    /// Browses another service type (`nearcard doctor`'s probe, which Nearcard nodes do not list).
    public func browse(filter: InterfaceFilter, serviceType: String, addresses: AddressPolicy = .always) -> AsyncStream<DiscoveryEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: DiscoveryEvent.self, bufferingPolicy: .unbounded)
        let ctx = BrowseContext(client: client, filter: filter, serviceType: serviceType, policy: addresses, continuation: continuation)
        let opaque = Unmanaged.passRetained(ctx).toOpaque()
        let browser: OpaquePointer? = withLock {
            avahi.service_browser_new(
                client, nearcard_avahi_if_unspec(), nearcard_avahi_proto_unspec(), serviceType,
                nil, AvahiLookupFlags(rawValue: 0), browseCallback, opaque)
        }
        guard let browser else {
            let error = DiscoveryError(.avahi, Phrase("cannot browse: %1$@", avahiMessage(avahi.client_errno(client))))
            continuation.yield(.failed(error))
            continuation.finish()
            Unmanaged<BrowseContext>.fromOpaque(opaque).release()
            return stream
        }
        ctx.browser = browser
        withLock { browses[ObjectIdentifier(ctx)] = ctx }
        // Each peer is resolved again `reconfirmInterval` after it last was. From Avahi's cache while
        // its records live, that is instant and silent; once they have expired (a node gone without a
        // goodbye: its SRV and address records live 120 s, its PTR 4,500 s) the resolve asks the
        // network, and no answer drops the peer. Resolvers are not kept open between checks: a
        // long-lived one keeps querying its records, and the answers it draws can hide another
        // node's probe for the same name, so a newcomer would take an established node's name. The
        // timer only hands due checks to the queue, once a second.
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue.global())
        timer.schedule(deadline: .now() + 1, repeating: 1)
        timer.setEventHandler { [self] in self.withLock { ctx.tick() } }
        timer.resume()
        ctx.timer = timer
        // Stopping the iteration frees the browser and its resolvers under the poll lock (so no
        // callback runs during or after), then drops the context's retain. Not here and now: this
        // handler runs inside the Swift runtime's cancellation of the consuming task, holding that
        // task's status lock, while Avahi's thread may hold the poll lock and be yielding an event to
        // that very task (which needs the status lock): taking the poll lock here would deadlock both.
        continuation.onTermination = { [self] _ in
            DispatchQueue.global().async {
                self.withLock {
                    ctx.close()
                    self.browses[ObjectIdentifier(ctx)] = nil
                }
                Unmanaged.passUnretained(ctx).release()
            }
        }
        return stream
    }

    /// An announcement a person is about to act on (`exchange NAME` names it) is resolved now, ahead
    /// of the announcements waiting their turn: among hundreds announced at once, a browse resolves
    /// them a few at a time, and the one named would otherwise wait for all before it.
    public func hurry(instanceNamed name: String) {
        withLock { for ctx in browses.values { ctx.hurry(name) } }
    }

    /// Resolves the addresses of a peer a browse reported without them: the service on each
    /// announcement it was seen on, all at once (each answers from Avahi's cache, or from the network
    /// within Avahi's 5 s). Empty when none resolves.
    public func addresses(of peer: DiscoveredPeer) async -> [PeerAddress] {
        if !peer.addresses.isEmpty { return peer.addresses }
        return await lookUp(peer).addresses
    }

    /// The peer with its addresses, and with the records it was listed without (`recordsPending`):
    /// resolved as `addresses(of:)` does, one resolve per announcement.
    public func locate(_ peer: DiscoveredPeer) async -> DiscoveredPeer {
        guard peer.addresses.isEmpty || peer.recordsPending else { return peer }
        let found = await lookUp(peer)
        var p = peer
        p.addresses = found.addresses
        if p.recordsPending, let records = found.records {
            p.txt = records.txt
            p.hostName = records.hostName
            p.port = records.port
            p.recordsPending = false
            p.confirmedAt = Date()
        }
        return p
    }

    private func lookUp(_ peer: DiscoveredPeer) async -> AddressLookup.Found {
        let on = peer.announcedOn.isEmpty ? [Announced(interface: nearcard_avahi_if_unspec(), proto: nearcard_avahi_proto_unspec())] : peer.announcedOn
        return await withCheckedContinuation { (c: CheckedContinuation<AddressLookup.Found, Never>) in
            let lookup = AddressLookup(continuation: c)
            let opaque = Unmanaged.passRetained(lookup).toOpaque()
            withLock {
                for a in on {
                    if let r = avahi.service_resolver_new(
                        client, a.interface, a.proto, peer.instanceName, TXTRecord.serviceType, nil,
                        nearcard_avahi_proto_unspec(), AvahiLookupFlags(rawValue: 0), addressCallback, opaque)
                    {
                        lookup.resolvers.insert(r)
                    }
                }
                lookup.finishIfDone()
            }
        }
    }

    // MARK: publishing

    /// Publishes this node; the returned publication stays until `withdraw()` or until it is released.
    /// With `host`, the SRV record names `host.name` and its address records go in the same entry group.
    public func publish(instanceName: String, port: Int, txt: TXTRecord, interfaces: [String], host: PublishedHost?) throws(DiscoveryError) -> any Announcement
    {
        try publish(instanceName: instanceName, port: port, txt: txt, interfaces: interfaces, serviceType: TXTRecord.serviceType, host: host)
    }

    /// Publishes a service of another type (`nearcard doctor`'s probe).
    public func publish(
        instanceName: String, port: Int, txt: TXTRecord, interfaces: [String], serviceType: String,
        host: PublishedHost? = nil
    ) throws(DiscoveryError) -> any Announcement {
        var indices: [Int32] = []
        for name in interfaces {
            let index = if_nametoindex(name)
            guard index != 0 else { throw DiscoveryError(.invalidInput, Phrase("no network interface named %1$@", name)) }
            indices.append(Int32(index))
        }
        var addresses: [(interface: Int32, address: AvahiAddress)] = []
        for a in host?.addresses ?? [] {
            var parsed = AvahiAddress()
            guard a.interfaceIndex > 0, avahi.address_parse(a.ip, nearcard_avahi_proto_unspec(), &parsed) != nil else {
                throw DiscoveryError(.invalidInput, Phrase("cannot publish the address %1$@ on interface %2$@", a.ip, a.interfaceName))
            }
            addresses.append((a.interfaceIndex, parsed))
        }
        let publication = Publication(
            discovery: self, name: TXTRecord.instanceName(for: instanceName), port: port, txt: txt, interfaces: indices,
            serviceType: serviceType, hostName: host?.name, addresses: addresses)
        var failure: DiscoveryError?
        withLock {
            do throws(DiscoveryError) { try publication.register() } catch { failure = error }
        }
        if let failure { throw failure }
        return publication
    }
}

private func fileExists(_ path: String) -> Bool {
    var st = stat()
    return stat(path, &st) == 0
}

private let clientCallback: AvahiClientCallback = { client, state, userdata in
    guard let userdata else { return }
    let ctx = Unmanaged<AvahiDiscovery.ClientContext>.fromOpaque(userdata).takeUnretainedValue()
    if state == AVAHI_CLIENT_FAILURE {
        let e = DiscoveryError(.daemonUnavailable, Phrase("lost avahi-daemon (%1$@); discovery has stopped", avahiMessage(avahi.client_errno(client))))
        ctx.failure = e
        for f in ctx.onFailure { f(e) }
    }
}

/// One browse: its Avahi objects and the peers it has seen, touched only on Avahi's thread (or under
/// its lock).
///
/// Every announcement (an instance on one interface, over IPv4 or IPv6) waits in a queue for one of
/// `AvahiDiscovery.maximumResolvers` resolvers: those never resolved first, then the periodic checks.
/// A peer the policy wants addresses for is resolved on each of its announcements, with an address
/// (the way every browse worked before). Any other is resolved on one announcement only, SRV and TXT
/// without an address (`AVAHI_LOOKUP_NO_ADDRESS`): its name and presence tag are all a listing needs,
/// and a dial resolves the rest (`AvahiDiscovery.addresses(of:)`).
final class BrowseContext: @unchecked Sendable {
    let client: OpaquePointer
    let filter: InterfaceFilter
    let serviceType: String
    let policy: AddressPolicy
    let continuation: AsyncStream<DiscoveryEvent>.Continuation
    /// Resolvers at most at once (`AvahiDiscovery.maximumResolvers`).
    let limit: Int
    var browser: OpaquePointer?
    var timer: (any DispatchSourceTimer)?
    var closed = false

    struct Advert: Hashable {
        var instance: String
        var key: Announced
    }

    struct Entry {
        var hostName: String
        var port: Int
        var txt: TXTRecord
        /// Empty when resolved without addresses.
        var addresses: [PeerAddress]
        /// When the records were last resolved.
        var confirmedAt: Date
    }

    /// instance name → the announcements the browser shows for it.
    var adverts: [String: Set<Announced>] = [:]
    /// instance name → announcement → what it resolved to.
    var peers: [String: [Announced: Entry]] = [:]
    /// The instances resolved with addresses, on every announcement (the policy wants them).
    var located: Set<String> = []
    /// When each announcement is next to be resolved: at once when new, then its periodic check.
    var due: [Advert: Date] = [:]
    /// Announcements waiting for a resolver: `first` (never resolved, or resolving failed) before
    /// `checks`.
    var first = Queue(), checks = Queue()
    /// Announcements listed by their instance name only, waiting for their records to be read
    /// (`AvahiDiscovery.readsPerSecond`), and the reads this browse may make now.
    var later = Queue()
    var readAllowance: Double = 0
    /// The instances listed by name before their records were read.
    var byName: Set<String> = []
    /// Resolvers running now, each freed once it answers.
    var resolving: [OpaquePointer: Advert] = [:]
    var busy: Set<Advert> = []
    /// What was last reported of each instance.
    var reported: [String: DiscoveredPeer] = [:]
    /// The daemon said its cache has been told (CACHE_EXHAUSTED); `.settled` follows once what it held is resolved.
    var cacheTold = false
    var settledSent = false

    /// A first-in, first-out queue of announcements, each in it once.
    struct Queue {
        private var items: [Advert] = []
        private var head = 0
        private var members: Set<Advert> = []
        func contains(_ a: Advert) -> Bool { members.contains(a) }
        var isEmpty: Bool { head >= items.count }
        mutating func push(_ a: Advert) {
            if members.insert(a).inserted { items.append(a) }
        }
        mutating func pop() -> Advert? {
            guard head < items.count else { return nil }
            let a = items[head]
            head += 1
            if head > 64 && head * 2 > items.count {
                items.removeFirst(head)
                head = 0
            }
            members.remove(a)
            return a
        }
    }

    init(
        client: OpaquePointer, filter: InterfaceFilter, serviceType: String, policy: AddressPolicy,
        continuation: AsyncStream<DiscoveryEvent>.Continuation
    ) {
        self.client = client
        self.filter = filter
        self.serviceType = serviceType
        self.policy = policy
        self.continuation = continuation
        limit = AvahiDiscovery.maximumResolvers(policy)
    }

    func close() {
        closed = true
        timer?.cancel()
        timer = nil
        for r in resolving.keys { _ = avahi.service_resolver_free(r) }
        resolving.removeAll()
        busy.removeAll()
        adverts.removeAll()
        if let browser { _ = avahi.service_browser_free(browser) }
        browser = nil
    }

    // MARK: what the browser says

    /// Says `.settled` once the daemon's cache has been told and each announcement in it resolved
    /// (or failed) once: nothing waits for a first resolution.
    func checkSettled() {
        guard cacheTold, !settledSent, !closed, first.isEmpty, !resolving.values.contains(where: { peers[$0.instance]?[$0.key] == nil }) else { return }
        settledSent = true
        continuation.yield(.settled)
    }

    func appeared(_ a: Advert) {
        adverts[a.instance, default: []].insert(a.key)
        if policy.always { located.insert(a.instance) }
        due[a] = Date()
        if !policy.always, peers[a.instance] == nil, adverts.count > AvahiDiscovery.crowd, !policy.readsAtOnce(a.instance) {
            byName.insert(a.instance)
        }
        if wants(a) { queueUnread(a) }
        pump()
        report(a.instance) // a new announcement of a peer already reported: one more place to resolve it
    }

    func disappeared(_ a: Advert) {
        for (r, b) in resolving where b == a {
            resolving[r] = nil
            _ = avahi.service_resolver_free(r)
        }
        busy.remove(a)
        due[a] = nil
        adverts[a.instance]?.remove(a.key)
        if !handOver(a) { forget(a) }
        if adverts[a.instance]?.isEmpty == true {
            adverts[a.instance] = nil
            located.remove(a.instance)
            byName.remove(a.instance)
        } else {
            retry(a.instance)
        }
        report(a.instance)
        pump()
    }

    // MARK: resolving

    /// Whether an announcement is to be resolved: every announcement of a located instance; otherwise
    /// the one its instance resolved on, or (none has yet) one at a time.
    func wants(_ a: Advert) -> Bool {
        guard let keys = adverts[a.instance], keys.contains(a.key) else { return false }
        if located.contains(a.instance) { return true }
        if let entries = peers[a.instance], !entries.isEmpty { return entries[a.key] != nil }
        return !keys.contains { $0 != a.key && busy.contains(Advert(instance: a.instance, key: $0)) }
    }

    /// Starts resolvers for waiting announcements while fewer than the limit run.
    func pump() {
        while !closed, resolving.count < limit, let a = first.pop() ?? checks.pop() ?? nextRead() {
            guard !busy.contains(a), wants(a) else { continue }
            // The daemon refused (it is going away, or this client holds too many objects): the
            // check comes round again.
            if !resolve(a) { due[a] = Date().addingTimeInterval(checkInterval) }
        }
    }

    /// Starts a resolver for one announcement (with addresses when its instance is located); false
    /// when the daemon refused it.
    func resolve(_ a: Advert) -> Bool {
        let flags = located.contains(a.instance) ? 0 : AVAHI_LOOKUP_NO_ADDRESS.rawValue
        guard
            let r = avahi.service_resolver_new(
                client, a.key.interface, a.key.proto, a.instance, serviceType, nil,
                nearcard_avahi_proto_unspec(), AvahiLookupFlags(rawValue: flags), resolveCallback, Unmanaged.passUnretained(self).toOpaque())
        else { return false }
        resolving[r] = a
        busy.insert(a)
        return true
    }

    /// An announcement never resolved waits in `later` when its instance is listed by name, else in `first`.
    func queueUnread(_ a: Advert) {
        if byName.contains(a.instance) { later.push(a) } else { first.push(a) }
    }

    /// The next announcement listed by name to read, while the allowance lasts (`tick` adds to it).
    func nextRead() -> Advert? {
        while readAllowance >= 1, let a = later.pop() {
            guard peers[a.instance] == nil, !busy.contains(a), wants(a) else { continue }
            readAllowance -= 1
            return a
        }
        return nil
    }

    /// Resolves the announcements of the instance called `name` (as avahi compares names: ignoring
    /// case) that have never resolved, at once and beside the limit: one peer someone named.
    func hurry(_ name: String) {
        guard !closed else { return }
        for (instance, keys) in adverts where instance.caseInsensitiveCompare(name) == .orderedSame && (peers[instance]?.isEmpty ?? true) {
            for key in keys.sorted() where !busy.contains(Advert(instance: instance, key: key)) {
                _ = resolve(Advert(instance: instance, key: key))
            }
        }
    }

    /// How long after a resolve an announcement is resolved again: `reconfirmInterval`, or longer when
    /// there are so many that this browse would resolve more than `maximumChecksPerSecond` a second, or
    /// the LAN's browses together more than `lanChecksPerSecond`.
    var checkInterval: TimeInterval {
        let n = Double(due.count)
        return max(AvahiDiscovery.reconfirmInterval, n / AvahiDiscovery.maximumChecksPerSecond, n * n / AvahiDiscovery.lanChecksPerSecond)
    }

    /// Queues the announcements that are due (the timer, once a second).
    func tick() {
        guard !closed else { return }
        let now = Date()
        for (a, when) in due where when <= now && !busy.contains(a) && !first.contains(a) && !checks.contains(a) && !later.contains(a) && wants(a) {
            if peers[a.instance]?[a.key] == nil { queueUnread(a) } else { checks.push(a) }
        }
        let rate = AvahiDiscovery.readsPerSecond(seeing: adverts.count)
        readAllowance = later.isEmpty ? 0 : min(readAllowance + rate, max(1, rate))
        pump()
    }

    /// An instance none of whose announcements resolves now: its other announcements are tried at
    /// once, unless they were lately.
    func retry(_ instance: String) {
        guard !located.contains(instance), peers[instance]?.isEmpty ?? true else { return }
        let now = Date()
        for key in adverts[instance] ?? [] {
            let a = Advert(instance: instance, key: key)
            if (due[a] ?? now) <= now, !busy.contains(a), wants(a) { queueUnread(a) }
        }
    }

    func resolved(_ a: Advert, _ entry: Entry) {
        let firstTime = peers[a.instance]?[a.key] == nil
        peers[a.instance, default: [:]][a.key] = entry
        // Checks of peers found together are spread over the interval, not made in one burst.
        let interval = checkInterval
        due[a] = entry.confirmedAt.addingTimeInterval(firstTime ? Double.random(in: interval / 2...interval) : interval)
        if !located.contains(a.instance), policy.wants(entry.txt) {
            // Wanted with its addresses: resolved again on each announcement, with an address.
            located.insert(a.instance)
            for key in adverts[a.instance] ?? [] { first.push(Advert(instance: a.instance, key: key)) }
        } else if located.contains(a.instance), entry.addresses.isEmpty {
            // Asked without an address just before the instance was located.
            first.push(a)
        }
        report(a.instance)
        pump()
        checkSettled()
    }

    /// No answer: its records expired (or never came). The browser still shows it, so it is resolved
    /// again later, and comes back if it answers.
    func failed(_ a: Advert) {
        due[a] = Date().addingTimeInterval(checkInterval)
        // Tried and not answering: no longer listed by its name alone (it leaves the list, and comes
        // back when a later resolve answers).
        byName.remove(a.instance)
        if !handOver(a) {
            forget(a)
            retry(a.instance)
        }
        report(a.instance)
        pump()
        checkSettled()
    }

    /// Drops what an announcement resolved to.
    func forget(_ a: Advert) {
        peers[a.instance]?[a.key] = nil
        if peers[a.instance]?.isEmpty == true { peers[a.instance] = nil }
    }

    /// An instance resolved on one announcement only, which no longer answers for it (gone, or its
    /// check failed) while it has others: what it resolved to moves to one of them not tried lately,
    /// checked at once, so the peer stays listed unless that check fails too. False when there is
    /// none to move to.
    func handOver(_ a: Advert) -> Bool {
        guard !located.contains(a.instance), let entry = peers[a.instance]?[a.key] else { return false }
        let now = Date()
        let others = (adverts[a.instance] ?? []).sorted().map { Advert(instance: a.instance, key: $0) }
        guard let next = others.first(where: { $0 != a && (due[$0] ?? now) <= now && !busy.contains($0) }) else { return false }
        forget(a)
        peers[a.instance, default: [:]][next.key] = entry
        due[next] = now
        first.push(next)
        return true
    }

    // MARK: reporting

    /// What the browse shows of an instance: nil until it has resolved (with an address, when located).
    func peer(named name: String) -> DiscoveredPeer? {
        guard var entries = peers[name].map({ Array($0.values) }), !entries.isEmpty else {
            guard byName.contains(name), let on = adverts[name], !on.isEmpty else { return nil }
            var p = DiscoveredPeer(
                instanceName: name, hostName: "", port: 0, txt: TXTRecord(version: nil, highestVersion: nil, tag: nil, name: nil), addresses: [])
            p.recordsPending = true
            p.announcedOn = on.sorted()
            return p
        }
        if located.contains(name) {
            entries = entries.filter { !$0.addresses.isEmpty }
            if entries.isEmpty { return nil }
        }
        entries.sort { $0.hostName < $1.hostName }
        var addresses: [PeerAddress] = []
        for e in entries { for a in e.addresses where !addresses.contains(a) { addresses.append(a) } }
        let first = entries[0]
        var p = DiscoveredPeer(
            instanceName: name, hostName: first.hostName, port: first.port, txt: first.txt, addresses: addresses,
            confirmedAt: entries.map(\.confirmedAt).max())
        p.announcedOn = (adverts[name] ?? []).sorted()
        return p
    }

    /// Says what changed of an instance: found, updated (a check counts: `confirmedAt` moves) or lost.
    func report(_ name: String) {
        guard let p = peer(named: name) else {
            if reported.removeValue(forKey: name) != nil { continuation.yield(.lost(instanceName: name)) }
            return
        }
        guard let before = reported.updateValue(p, forKey: name) else {
            continuation.yield(.found(p))
            return
        }
        if before != p { continuation.yield(.updated(p)) }
    }
}

/// An address lookup for one peer (`AvahiDiscovery.addresses(of:)`): its resolvers, what they found.
final class AddressLookup: @unchecked Sendable {
    struct Found: Sendable {
        var addresses: [PeerAddress] = []
        /// The records of the first announcement that resolved.
        var records: (hostName: String, port: Int, txt: TXTRecord)?
    }

    var resolvers: Set<OpaquePointer> = []
    var found = Found()
    private var continuation: CheckedContinuation<Found, Never>?

    init(continuation: CheckedContinuation<Found, Never>) {
        self.continuation = continuation
    }

    /// Called under the poll lock: once every resolver has answered, hands the addresses over and
    /// drops the retain its callbacks held.
    func finishIfDone() {
        guard resolvers.isEmpty, let c = continuation else { return }
        continuation = nil
        c.resume(returning: found)
        Unmanaged.passUnretained(self).release()
    }
}

func interfaceName(_ index: Int32) -> String {
    var buf = [CChar](repeating: 0, count: Int(IF_NAMESIZE) + 1)
    guard index > 0, if_indextoname(UInt32(index), &buf) != nil else { return "if\(index)" }
    return buf.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
}

private let browseCallback: AvahiServiceBrowserCallback = { browser, interface, proto, event, name, type, domain, flags, userdata in
    guard let userdata else { return }
    let ctx = Unmanaged<BrowseContext>.fromOpaque(userdata).takeUnretainedValue()
    guard !ctx.closed else { return }
    // CACHE_EXHAUSTED and ALL_FOR_NOW name no service.
    if event == AVAHI_BROWSER_CACHE_EXHAUSTED {
        ctx.cacheTold = true
        ctx.checkSettled()
        return
    }
    guard let name else { return }
    let a = BrowseContext.Advert(instance: String(cString: name), key: Announced(interface: interface, proto: proto))
    switch event {
    case AVAHI_BROWSER_NEW:
        guard ctx.filter.permits(interfaceName(interface)) else { return }
        ctx.appeared(a)
    case AVAHI_BROWSER_REMOVE:
        ctx.disappeared(a)
    case AVAHI_BROWSER_FAILURE:
        let why = avahiMessage(avahi.client_errno(ctx.client))
        ctx.continuation.yield(.failed(DiscoveryError(.avahi, Phrase("browsing failed: %1$@", why))))
    default:
        break // ALL_FOR_NOW: the first query's window; the cache is what a listing waits for
    }
}

/// The address a resolver found, as a `PeerAddress` on the interface it was found on.
private func peerAddress(_ address: UnsafePointer<AvahiAddress>, port: UInt16, interface: Int32) -> PeerAddress {
    var buf = [CChar](repeating: 0, count: Int(AVAHI_ADDRESS_STR_MAX))
    _ = avahi.address_snprint(&buf, buf.count, address)
    return PeerAddress(
        ip: buf.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }, port: Int(port), interfaceName: interfaceName(interface),
        interfaceIndex: interface)
}

private let resolveCallback: AvahiServiceResolverCallback = {
    resolver, interface, proto, event, name, type, domain, host, address, port, txt, flags, userdata in
    guard let userdata, let resolver else { return }
    let ctx = Unmanaged<BrowseContext>.fromOpaque(userdata).takeUnretainedValue()
    guard !ctx.closed, let announcement = ctx.resolving.removeValue(forKey: resolver) else { return }
    _ = avahi.service_resolver_free(resolver)
    ctx.busy.remove(announcement)
    guard event == AVAHI_RESOLVER_FOUND, name != nil else {
        ctx.failed(announcement)
        return
    }
    let entry = BrowseContext.Entry(
        hostName: host.map { String(cString: $0) } ?? "", port: Int(port), txt: readTXT(txt),
        addresses: address.map { [peerAddress($0, port: port, interface: interface)] } ?? [], confirmedAt: Date())
    ctx.resolved(announcement, entry)
}

private let addressCallback: AvahiServiceResolverCallback = {
    resolver, interface, proto, event, name, type, domain, host, address, port, txt, flags, userdata in
    guard let userdata, let resolver else { return }
    let lookup = Unmanaged<AddressLookup>.fromOpaque(userdata).takeUnretainedValue()
    guard lookup.resolvers.remove(resolver) != nil else { return }
    _ = avahi.service_resolver_free(resolver)
    if event == AVAHI_RESOLVER_FOUND, let address {
        let a = peerAddress(address, port: port, interface: interface)
        if !lookup.found.addresses.contains(a) { lookup.found.addresses.append(a) }
        if lookup.found.records == nil { lookup.found.records = (host.map { String(cString: $0) } ?? "", Int(port), readTXT(txt)) }
    }
    lookup.finishIfDone()
}

/// A resolved TXT record's strings (at most `TXTRecord.maximumEntries`), parsed.
private func readTXT(_ txt: UnsafeMutablePointer<AvahiStringList>?) -> TXTRecord {
    var strings: [[UInt8]] = []
    var item = txt
    while let node = item, strings.count < TXTRecord.maximumEntries {
        let size = avahi.string_list_get_size(node)
        if let text = avahi.string_list_get_text(node) { strings.append(Array(UnsafeBufferPointer(start: text, count: size))) }
        item = avahi.string_list_get_next(node)
    }
    return TXTRecord(parsing: strings)
}

/// A published service. Withdraws when released.
public final class Publication: Announcement, @unchecked Sendable {
    weak var discovery: AvahiDiscovery?
    private let discoveryRef: AvahiDiscovery
    private(set) var group: OpaquePointer?
    private let baseName: String
    let serviceType: String
    private(set) var name: String
    let port: Int
    let txt: TXTRecord
    let interfaces: [Int32]
    /// The SRV target (nil: the machine's host name) and the address records published under it.
    let hostName: String?
    let addresses: [(interface: Int32, address: AvahiAddress)]
    private var state: (established: Bool, error: DiscoveryError?) = (false, nil)
    private var waiters: [CheckedContinuation<String, any Error>] = []
    private var timedWaiters: [UUID: CheckedContinuation<String?, any Error>] = [:]

    init(
        discovery: AvahiDiscovery, name: String, port: Int, txt: TXTRecord, interfaces: [Int32], serviceType: String,
        hostName: String? = nil, addresses: [(interface: Int32, address: AvahiAddress)] = []
    ) {
        self.hostName = hostName
        self.addresses = addresses
        self.serviceType = serviceType
        self.discovery = discovery
        self.discoveryRef = discovery
        self.baseName = name
        self.name = name
        self.port = port
        self.txt = txt
        self.interfaces = interfaces
    }

    /// Called with the poll lock held.
    func register() throws(DiscoveryError) {
        if group == nil {
            group = avahi.entry_group_new(discoveryRef.client, groupCallback, Unmanaged.passUnretained(self).toOpaque())
            guard group != nil else {
                throw DiscoveryError(.avahi, Phrase("cannot create an Avahi entry group: %1$@", avahiMessage(avahi.client_errno(discoveryRef.client))))
            }
        }
        var list: UnsafeMutablePointer<AvahiStringList>? = nil
        for entry in txt.entries.reversed() {
            list = entry.withUnsafeBufferPointer { avahi.string_list_add_arbitrary(list, $0.baseAddress, $0.count) }
        }
        defer { avahi.string_list_free(list) }
        for index in (interfaces.isEmpty ? [nearcard_avahi_if_unspec()] : interfaces) {
            let rc = avahi.entry_group_add_service_strlst(
                group, index, nearcard_avahi_proto_unspec(), AvahiPublishFlags(rawValue: 0),
                name, serviceType, nil, hostName, UInt16(port), list)
            guard rc >= 0 else {
                if rc == Int32(AVAHI_ERR_COLLISION) {
                    try rename()
                    return
                }
                throw DiscoveryError(.avahi, Phrase("cannot publish \"%1$@\": %2$@", name, avahiMessage(rc)))
            }
        }
        // The service's own host: its A/AAAA records, each on its interface. No reverse (PTR) record:
        // the machine's host name already answers for the address, and a second would collide.
        if let hostName {
            for (index, address) in addresses {
                var a = address
                let rc = avahi.entry_group_add_address(group, index, nearcard_avahi_proto_unspec(), AVAHI_PUBLISH_NO_REVERSE, hostName, &a)
                guard rc >= 0 else {
                    throw DiscoveryError(.avahi, Phrase("cannot publish the address records of %1$@: %2$@", hostName, avahiMessage(rc)))
                }
            }
        }
        let rc = avahi.entry_group_commit(group)
        guard rc >= 0 else { throw DiscoveryError(.avahi, Phrase("cannot publish \"%1$@\": %2$@", name, avahiMessage(rc))) }
    }

    /// Another node has our name: take Avahi's alternative ("Name #2") and try again.
    func rename() throws(DiscoveryError) {
        if let alt = avahi.alternative_service_name(name) {
            name = TXTRecord.instanceName(for: String(cString: alt))
            avahi.free(alt)
        }
        if let group { _ = avahi.entry_group_reset(group) }
        try register()
    }

    func groupEvent(_ event: AvahiEntryGroupState) {
        switch event {
        case AVAHI_ENTRY_GROUP_ESTABLISHED:
            state.established = true
            let w = waiters
            waiters = []
            for c in w { c.resume(returning: name) }
            let t = timedWaiters
            timedWaiters = [:]
            for c in t.values { c.resume(returning: name) }
        case AVAHI_ENTRY_GROUP_COLLISION:
            do { try rename() } catch { fail(error) }
        case AVAHI_ENTRY_GROUP_FAILURE:
            fail(DiscoveryError(.avahi, Phrase("publishing failed: %1$@", avahiMessage(avahi.client_errno(discoveryRef.client)))))
        default:
            break
        }
    }

    private func fail(_ error: DiscoveryError) {
        state.error = error
        let w = waiters
        waiters = []
        for c in w { c.resume(throwing: error) }
        let t = timedWaiters
        timedWaiters = [:]
        for c in t.values { c.resume(throwing: error) }
    }

    /// Waits until Avahi reports the service established (probing done, name settled); returns the name.
    public func established() async throws -> String {
        try await withCheckedThrowingContinuation { (c: CheckedContinuation<String, Error>) in
            discoveryRef.withLock {
                if let e = state.error { c.resume(throwing: e) } else if state.established { c.resume(returning: name) } else { waiters.append(c) }
            }
        }
    }

    /// Waits at most `seconds` for avahi-daemon to say the service is established; nil when it has
    /// not (nothing is left waiting: the timer takes the waiter back).
    public func established(within seconds: TimeInterval) async throws -> String? {
        let id = UUID()
        return try await withCheckedThrowingContinuation { (c: CheckedContinuation<String?, Error>) in
            let done = discoveryRef.withLock { () -> Bool in
                if let e = state.error {
                    c.resume(throwing: e)
                    return true
                }
                if state.established {
                    c.resume(returning: name)
                    return true
                }
                timedWaiters[id] = c
                return false
            }
            guard !done else { return }
            Task {
                try? await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
                let waiting = self.discoveryRef.withLock { self.timedWaiters.removeValue(forKey: id) }
                waiting?.resume(returning: nil)
            }
        }
    }

    /// The name currently published (Avahi may have changed it after a collision).
    public var currentName: String { discoveryRef.withLock { name } }

    /// Takes the service off the network (a goodbye is sent).
    public func withdraw() {
        discoveryRef.withLock {
            if let group { _ = avahi.entry_group_free(group) }
            group = nil
        }
    }

    deinit {
        if group != nil { withdraw() }
    }
}

private let groupCallback: AvahiEntryGroupCallback = { group, state, userdata in
    guard let userdata else { return }
    Unmanaged<Publication>.fromOpaque(userdata).takeUnretainedValue().groupEvent(state)
}
