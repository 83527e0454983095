internal import CAvahi
internal import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// DNS-SD through avahi-daemon (libavahi-client over D-Bus), on an Avahi threaded poll.
///
/// Avahi calls back on its own thread; those callbacks only touch per-browse/per-publication state and
/// hand events to Swift concurrency through `AsyncStream`. Calls from any other thread take the poll's
/// lock first (`avahi_threaded_poll_lock`), as Avahi requires.
public final class AvahiDiscovery: Discovery, @unchecked Sendable {
    let poll: OpaquePointer
    let client: OpaquePointer
    private let context: ClientContext

    final class ClientContext: @unchecked Sendable {
        var failure: DiscoveryError?
        var onFailure: [(DiscoveryError) -> Void] = []
    }

    /// Connects to avahi-daemon. Fails with `.daemonUnavailable` and a message naming the fix when
    /// avahi-daemon or the D-Bus system bus is not running.
    public init() throws(DiscoveryError) {
        guard let poll = avahi_threaded_poll_new() else { throw DiscoveryError(.avahi, "avahi_threaded_poll_new failed") }
        let context = ClientContext()
        var error: Int32 = 0
        guard let client = avahi_client_new(avahi_threaded_poll_get(poll), AvahiClientFlags(rawValue: 0), clientCallback,
                                            Unmanaged.passUnretained(context).toOpaque(), &error) else {
            avahi_threaded_poll_free(poll)
            throw Self.unavailable(error)
        }
        self.poll = poll
        self.client = client
        self.context = context
        guard avahi_threaded_poll_start(poll) >= 0 else {
            avahi_client_free(client)
            avahi_threaded_poll_free(poll)
            throw DiscoveryError(.avahi, "cannot start Avahi's event thread")
        }
    }

    static func unavailable(_ error: Int32) -> DiscoveryError {
        let why = String(cString: avahi_strerror(error))
        let dbus = FileManager_exists("/run/dbus/system_bus_socket") || (getenv("DBUS_SYSTEM_BUS_ADDRESS") != nil)
        let fix = dbus
            ? "start avahi-daemon (systemctl start avahi-daemon)"
            : "start the D-Bus system bus and avahi-daemon (systemctl start dbus avahi-daemon)"
        return DiscoveryError(.daemonUnavailable, "cannot reach avahi-daemon (\(why)): \(fix), or exchange by address with `nearcard exchange HOST:PORT`")
    }

    deinit {
        avahi_threaded_poll_stop(poll)
        avahi_client_free(client)
        avahi_threaded_poll_free(poll)
    }

    func withLock<T>(_ body: () throws -> T) rethrows -> T {
        avahi_threaded_poll_lock(poll)
        defer { avahi_threaded_poll_unlock(poll) }
        return try body()
    }

    // MARK: browsing

    /// How often a browse resolves each announcement again, to drop those whose records expired.
    public static let reconfirmInterval: TimeInterval = 15

    /// Browses `_nearcard._tcp` and reports peers as they come, change and go. Stop iterating to stop browsing.
    public func browse(filter: InterfaceFilter = InterfaceFilter()) -> AsyncStream<DiscoveryEvent> {
        browse(filter: filter, serviceType: TXTRecord.serviceType)
    }

    /// Browses another service type (`nearcard doctor`'s probe, which Nearcard nodes do not list).
    public func browse(filter: InterfaceFilter, serviceType: String) -> AsyncStream<DiscoveryEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: DiscoveryEvent.self, bufferingPolicy: .unbounded)
        let ctx = BrowseContext(client: client, filter: filter, serviceType: serviceType, continuation: continuation)
        let opaque = Unmanaged.passRetained(ctx).toOpaque()
        let browser: OpaquePointer? = withLock {
            avahi_service_browser_new(client, nearcard_avahi_if_unspec(), nearcard_avahi_proto_unspec(), serviceType,
                                      nil, AvahiLookupFlags(rawValue: 0), browseCallback, opaque)
        }
        guard let browser else {
            let error = DiscoveryError(.avahi, "cannot browse: \(String(cString: avahi_strerror(avahi_client_errno(client))))")
            continuation.yield(.failed(error))
            continuation.finish()
            Unmanaged<BrowseContext>.fromOpaque(opaque).release()
            return stream
        }
        ctx.browser = browser
        // Every `reconfirmInterval`, each announcement is resolved again. From Avahi's cache while its
        // records live, that is instant and silent; once they have expired (a node gone without a
        // goodbye: its SRV and address records live 120 s, its PTR 4,500 s) the resolve asks the
        // network, and no answer drops the peer. Resolvers are not kept open between passes: a
        // long-lived one keeps querying its records, and the answers it draws can hide another
        // node's probe for the same name, so a newcomer would take an established node's name.
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue.global())
        timer.schedule(deadline: .now() + Self.reconfirmInterval, repeating: Self.reconfirmInterval)
        timer.setEventHandler { [self] in self.withLock { ctx.reconfirm() } }
        timer.resume()
        ctx.timer = timer
        // Stopping the iteration frees the browser and its resolvers under the poll lock (so no
        // callback runs during or after), then drops the context's retain. Not here and now: this
        // handler runs inside the Swift runtime's cancellation of the consuming task, holding that
        // task's status lock, while Avahi's thread may hold the poll lock and be yielding an event to
        // that very task (which needs the status lock): taking the poll lock here would deadlock both.
        continuation.onTermination = { [self] _ in
            DispatchQueue.global().async {
                self.withLock { ctx.close() }
                Unmanaged.passUnretained(ctx).release()
            }
        }
        return stream
    }

    // MARK: publishing

    /// Publishes this node; the returned publication stays until `withdraw()` or until it is released.
    /// With `host`, the SRV record names `host.name` and its address records go in the same entry group.
    public func publish(instanceName: String, port: Int, txt: TXTRecord, interfaces: [String], host: PublishedHost?) throws(DiscoveryError) -> any Announcement {
        try publish(instanceName: instanceName, port: port, txt: txt, interfaces: interfaces, serviceType: TXTRecord.serviceType, host: host)
    }

    /// Publishes a service of another type (`nearcard doctor`'s probe).
    public func publish(instanceName: String, port: Int, txt: TXTRecord, interfaces: [String], serviceType: String,
                        host: PublishedHost? = nil) throws(DiscoveryError) -> any Announcement {
        var indices: [Int32] = []
        for name in interfaces {
            let index = if_nametoindex(name)
            guard index != 0 else { throw DiscoveryError(.invalidInput, "no network interface named \(name)") }
            indices.append(Int32(index))
        }
        var addresses: [(interface: Int32, address: AvahiAddress)] = []
        for a in host?.addresses ?? [] {
            var parsed = AvahiAddress()
            guard a.interfaceIndex > 0, avahi_address_parse(a.ip, nearcard_avahi_proto_unspec(), &parsed) != nil else {
                throw DiscoveryError(.invalidInput, "cannot publish the address \(a.ip) on interface \(a.interfaceName)")
            }
            addresses.append((a.interfaceIndex, parsed))
        }
        let publication = Publication(discovery: self, name: TXTRecord.instanceName(for: instanceName), port: port, txt: txt, interfaces: indices,
                                      serviceType: serviceType, hostName: host?.name, addresses: addresses)
        var failure: DiscoveryError?
        withLock {
            do throws(DiscoveryError) { try publication.register() } catch { failure = error }
        }
        if let failure { throw failure }
        return publication
    }
}

private func FileManager_exists(_ path: String) -> Bool {
    var st = stat()
    return stat(path, &st) == 0
}

private let clientCallback: AvahiClientCallback = { client, state, userdata in
    guard let userdata else { return }
    let ctx = Unmanaged<AvahiDiscovery.ClientContext>.fromOpaque(userdata).takeUnretainedValue()
    if state == AVAHI_CLIENT_FAILURE {
        let e = DiscoveryError(.daemonUnavailable, "lost avahi-daemon (\(String(cString: avahi_strerror(avahi_client_errno(client))))); discovery has stopped")
        ctx.failure = e
        for f in ctx.onFailure { f(e) }
    }
}

/// One browse: its Avahi objects and the peers it has seen, touched only on Avahi's thread (or under its lock).
final class BrowseContext: @unchecked Sendable {
    let client: OpaquePointer
    let filter: InterfaceFilter
    let serviceType: String
    let continuation: AsyncStream<DiscoveryEvent>.Continuation
    var browser: OpaquePointer?
    var timer: DispatchSourceTimer?
    /// The announcements the browser shows (instance, interface, protocol), resolved or not.
    var adverts: Set<Advert> = []
    /// Resolvers running now, each freed once it answers.
    var resolving: [OpaquePointer: Advert] = [:]
    var closed = false

    struct Advert: Hashable {
        var instance: String
        var key: Key
    }

    struct Key: Hashable {
        var interface: Int32
        var proto: Int32
    }

    struct Entry {
        var hostName: String
        var port: Int
        var txt: TXTRecord
        var addresses: [PeerAddress]
        /// When the records were last resolved.
        var confirmedAt: Date
    }

    /// instance name → (interface, protocol) → what that announcement resolved to.
    var peers: [String: [Key: Entry]] = [:]
    var announced: Set<String> = []

    init(client: OpaquePointer, filter: InterfaceFilter, serviceType: String, continuation: AsyncStream<DiscoveryEvent>.Continuation) {
        self.client = client
        self.filter = filter
        self.serviceType = serviceType
        self.continuation = continuation
    }

    func close() {
        closed = true
        timer?.cancel()
        timer = nil
        for r in resolving.keys { avahi_service_resolver_free(r) }
        resolving.removeAll()
        adverts.removeAll()
        if let browser { avahi_service_browser_free(browser) }
        browser = nil
    }

    /// Starts a resolver for an announcement unless one runs for it already.
    func resolve(_ a: Advert) {
        guard !closed, !resolving.values.contains(a) else { return }
        let userdata = Unmanaged.passUnretained(self).toOpaque()
        if let r = avahi_service_resolver_new(client, a.key.interface, a.key.proto, a.instance, serviceType, nil,
                                              nearcard_avahi_proto_unspec(), AvahiLookupFlags(rawValue: 0), resolveCallback, userdata) {
            resolving[r] = a
        }
    }

    /// Resolves every announcement again (the periodic pass).
    func reconfirm() {
        guard !closed else { return }
        for a in adverts { resolve(a) }
    }

    func peer(named name: String) -> DiscoveredPeer? {
        guard let entries = peers[name], !entries.isEmpty else { return nil }
        let all = entries.values.sorted { $0.hostName < $1.hostName }
        var addresses: [PeerAddress] = []
        for e in all { for a in e.addresses where !addresses.contains(a) { addresses.append(a) } }
        let first = all[0]
        return DiscoveredPeer(instanceName: name, hostName: first.hostName, port: first.port, txt: first.txt, addresses: addresses,
                              confirmedAt: all.map(\.confirmedAt).max())
    }

    /// Forgets what an announcement resolved to (gone from the browse, or its records expired) and says
    /// what changed.
    func drop(_ a: Advert) {
        peers[a.instance]?[a.key] = nil
        if peers[a.instance]?.isEmpty == true { peers[a.instance] = nil }
        publish(a.instance)
    }

    func publish(_ name: String) {
        guard let p = peer(named: name) else {
            if announced.remove(name) != nil { continuation.yield(.lost(instanceName: name)) }
            return
        }
        if announced.insert(name).inserted { continuation.yield(.found(p)) } else { continuation.yield(.updated(p)) }
    }
}

func interfaceName(_ index: Int32) -> String {
    var buf = [CChar](repeating: 0, count: Int(IF_NAMESIZE) + 1)
    guard index > 0, if_indextoname(UInt32(index), &buf) != nil else { return "if\(index)" }
    return String(cString: buf)
}

private let browseCallback: AvahiServiceBrowserCallback = { browser, interface, proto, event, name, type, domain, flags, userdata in
    guard let userdata, let name else { return }
    let ctx = Unmanaged<BrowseContext>.fromOpaque(userdata).takeUnretainedValue()
    guard !ctx.closed else { return }
    let instance = String(cString: name)
    switch event {
    case AVAHI_BROWSER_NEW:
        guard ctx.filter.permits(interfaceName(interface)) else { return }
        let a = BrowseContext.Advert(instance: instance, key: BrowseContext.Key(interface: interface, proto: proto))
        ctx.adverts.insert(a)
        ctx.resolve(a)
    case AVAHI_BROWSER_REMOVE:
        let a = BrowseContext.Advert(instance: instance, key: BrowseContext.Key(interface: interface, proto: proto))
        ctx.adverts.remove(a)
        for (r, b) in ctx.resolving where b == a {
            ctx.resolving[r] = nil
            avahi_service_resolver_free(r)
        }
        ctx.drop(a)
    case AVAHI_BROWSER_FAILURE:
        let why = String(cString: avahi_strerror(avahi_client_errno(ctx.client)))
        ctx.continuation.yield(.failed(DiscoveryError(.avahi, "browsing failed: \(why)")))
    default:
        break  // CACHE_EXHAUSTED, ALL_FOR_NOW: nothing to report
    }
}

private let resolveCallback: AvahiServiceResolverCallback = { resolver, interface, proto, event, name, type, domain, host, address, port, txt, flags, userdata in
    guard let userdata, let resolver else { return }
    let ctx = Unmanaged<BrowseContext>.fromOpaque(userdata).takeUnretainedValue()
    guard !ctx.closed, let announcement = ctx.resolving.removeValue(forKey: resolver) else { return }
    defer { avahi_service_resolver_free(resolver) }
    // No answer: its records expired (or never came). The browser still shows it, so the next pass
    // resolves it again, and it comes back if it answers.
    guard event == AVAHI_RESOLVER_FOUND, let name, let address else {
        ctx.drop(announcement)
        return
    }
    var buf = [CChar](repeating: 0, count: Int(AVAHI_ADDRESS_STR_MAX))
    avahi_address_snprint(&buf, buf.count, address)
    var strings: [[UInt8]] = []
    var item = txt
    while let node = item, strings.count < TXTRecord.maximumEntries {
        let size = avahi_string_list_get_size(node)
        if let text = avahi_string_list_get_text(node) { strings.append(Array(UnsafeBufferPointer(start: text, count: size))) }
        item = avahi_string_list_get_next(node)
    }
    let instance = String(cString: name)
    let entry = BrowseContext.Entry(
        hostName: host.map { String(cString: $0) } ?? "", port: Int(port), txt: TXTRecord(parsing: strings),
        addresses: [PeerAddress(ip: String(cString: buf), port: Int(port), interfaceName: interfaceName(interface), interfaceIndex: interface)],
        confirmedAt: Date())
    ctx.peers[instance, default: [:]][announcement.key] = entry
    ctx.publish(instance)
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
    private var waiters: [CheckedContinuation<String, Error>] = []

    init(discovery: AvahiDiscovery, name: String, port: Int, txt: TXTRecord, interfaces: [Int32], serviceType: String,
         hostName: String? = nil, addresses: [(interface: Int32, address: AvahiAddress)] = []) {
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
            group = avahi_entry_group_new(discoveryRef.client, groupCallback, Unmanaged.passUnretained(self).toOpaque())
            guard group != nil else { throw DiscoveryError(.avahi, "cannot create an Avahi entry group: \(String(cString: avahi_strerror(avahi_client_errno(discoveryRef.client))))") }
        }
        var list: UnsafeMutablePointer<AvahiStringList>? = nil
        for entry in txt.entries.reversed() {
            list = entry.withUnsafeBufferPointer { avahi_string_list_add_arbitrary(list, $0.baseAddress, $0.count) }
        }
        defer { avahi_string_list_free(list) }
        for index in (interfaces.isEmpty ? [nearcard_avahi_if_unspec()] : interfaces) {
            let rc = avahi_entry_group_add_service_strlst(group, index, nearcard_avahi_proto_unspec(), AvahiPublishFlags(rawValue: 0),
                                                          name, serviceType, nil, hostName, UInt16(port), list)
            guard rc >= 0 else {
                if rc == Int32(AVAHI_ERR_COLLISION) { try rename(); return }
                throw DiscoveryError(.avahi, "cannot publish \"\(name)\": \(String(cString: avahi_strerror(rc)))")
            }
        }
        // The service's own host: its A/AAAA records, each on its interface. No reverse (PTR) record:
        // the machine's host name already answers for the address, and a second would collide.
        if let hostName {
            for (index, address) in addresses {
                var a = address
                let rc = avahi_entry_group_add_address(group, index, nearcard_avahi_proto_unspec(), AVAHI_PUBLISH_NO_REVERSE, hostName, &a)
                guard rc >= 0 else {
                    throw DiscoveryError(.avahi, "cannot publish the address records of \(hostName): \(String(cString: avahi_strerror(rc)))")
                }
            }
        }
        let rc = avahi_entry_group_commit(group)
        guard rc >= 0 else { throw DiscoveryError(.avahi, "cannot publish \"\(name)\": \(String(cString: avahi_strerror(rc)))") }
    }

    /// Another node has our name: take Avahi's alternative ("Name #2") and try again.
    func rename() throws(DiscoveryError) {
        if let alt = avahi_alternative_service_name(name) {
            name = TXTRecord.instanceName(for: String(cString: alt))
            avahi_free(alt)
        }
        if let group { avahi_entry_group_reset(group) }
        try register()
    }

    func groupEvent(_ event: AvahiEntryGroupState) {
        switch event {
        case AVAHI_ENTRY_GROUP_ESTABLISHED:
            state.established = true
            let w = waiters
            waiters = []
            for c in w { c.resume(returning: name) }
        case AVAHI_ENTRY_GROUP_COLLISION:
            do { try rename() } catch { fail(error) }
        case AVAHI_ENTRY_GROUP_FAILURE:
            fail(DiscoveryError(.avahi, "publishing failed: \(String(cString: avahi_strerror(avahi_client_errno(discoveryRef.client))))"))
        default:
            break
        }
    }

    private func fail(_ error: DiscoveryError) {
        state.error = error
        let w = waiters
        waiters = []
        for c in w { c.resume(throwing: error) }
    }

    /// Waits until Avahi reports the service established (probing done, name settled); returns the name.
    public func established() async throws -> String {
        try await withCheckedThrowingContinuation { (c: CheckedContinuation<String, Error>) in
            discoveryRef.withLock {
                if let e = state.error { c.resume(throwing: e) } else if state.established { c.resume(returning: name) } else { waiters.append(c) }
            }
        }
    }

    /// The name currently published (Avahi may have changed it after a collision).
    public var currentName: String { discoveryRef.withLock { name } }

    /// Takes the service off the network (a goodbye is sent).
    public func withdraw() {
        discoveryRef.withLock {
            if let group { avahi_entry_group_free(group) }
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
