import Foundation
import NearcardDiscovery
import NearcardModel
import NearcardProtocol
import NearcardStore
internal import NIOConcurrencyHelpers

/// A running node, as `nearcard listen` and `nearcard bot` run it: the TCP listener, the DNS-SD
/// publication and browse (peers found and lost become events), and the outbox worker that delivers
/// queued follow-up messages when their contacts appear. Everything it learns goes to the node context's
/// event bus; it prints nothing.
public final class NodeRuntime: Sendable {
    public struct Options: Sendable {
        /// TCP port; 0 picks a free one.
        public var port: Int = defaultPort
        /// Publish and browse over DNS-SD (false: reachable by host:port only).
        public var discovery = true
        /// Publish only the fingerprint, not the display name.
        public var isPrivate = false
        /// Publish and browse only on these interfaces (empty: all but the denied ones).
        public var interfaces: [String] = []
        /// Never use these (in addition to VPN and container bridges).
        public var excludedInterfaces: [String] = []

        public init() {}
    }

    public let listener: Listener
    public let peers: PeerTable
    public let options: Options
    private let discovery: (any Discovery)?
    private let publication: (any Announcement)?
    private let tasks: NIOLockedValueBox<[Task<Void, Never>]>
    private let appear: AsyncStream<DiscoveredPeer>.Continuation

    /// The node every session of this runtime belongs to (route hints set once the port is known).
    public var context: NodeContext { listener.context }

    /// Binds, publishes and starts browsing. Discovery failing (no avahi-daemon, no D-Bus) is not
    /// fatal: it is reported as `.discoveryUnavailable` and the node serves by address.
    /// `discovery`: how peers are found and this node announced; by default avahi-daemon (DNS-SD).
    public static func start(context: NodeContext, options: Options, discovery chosen: (any Discovery)? = nil) async throws -> NodeRuntime {
        let listener = try await Listener.start(context: context, port: options.port)
        let events = context.events
        var discovery: (any Discovery)?
        var publication: (any Announcement)?
        if options.discovery {
            do throws(DiscoveryError) {
                let d: any Discovery
                if let chosen { d = chosen } else { d = try AvahiDiscovery() }
                let identity = context.identity
                let instance = (options.isPrivate ? nil : identity.name) ?? "nearcard-\(identity.fingerprint.prefix(8))"
                let txt = TXTRecord(fingerprint: identity.fingerprint, name: options.isPrivate ? nil : identity.name)
                publication = try d.publish(instanceName: instance, port: listener.port, txt: txt, interfaces: options.interfaces)
                discovery = d
            } catch {
                events.emit(.discoveryUnavailable(message: error.message))
            }
        }
        let (appeared, appear) = AsyncStream.makeStream(of: DiscoveredPeer.self, bufferingPolicy: .bufferingNewest(64))
        let runtime = NodeRuntime(listener: listener, options: options, discovery: discovery, publication: publication, appear: appear)
        events.emit(.listening(port: listener.port, addresses: LocalAddresses.current(filter: runtime.filter)))
        runtime.startTasks(appeared: appeared)
        return runtime
    }

    private init(listener: Listener, options: Options, discovery: (any Discovery)?, publication: (any Announcement)?,
                 appear: AsyncStream<DiscoveredPeer>.Continuation) {
        self.listener = listener
        self.options = options
        self.discovery = discovery
        self.publication = publication
        self.appear = appear
        self.peers = PeerTable()
        self.tasks = NIOLockedValueBox([])
    }

    var filter: InterfaceFilter { InterfaceFilter(allow: options.interfaces, deny: InterfaceFilter.defaultDeny + options.excludedInterfaces) }

    private func startTasks(appeared: AsyncStream<DiscoveredPeer>) {
        let context = self.context
        let events = context.events
        let own = context.identity.fingerprint
        var started: [Task<Void, Never>] = []
        // Queued follow-up messages go out every few seconds, and when a peer appears.
        started.append(Task { [peers] in await OutboxWorker(context: context).run(peers: peers, appeared: appeared) })
        if let publication {
            started.append(Task {
                do { events.emit(.published(name: try await publication.established())) } catch {
                    events.emit(.error(message: "discovery: this node is not announced on the LAN (\(error)); peers can still reach it by address"))
                }
            })
        }
        if let discovery {
            let filter = self.filter
            started.append(Task { [peers, appear] in
                for await event in discovery.browse(filter: filter) {
                    switch event {
                    case .found(let p) where p.txt.fingerprint == own, .updated(let p) where p.txt.fingerprint == own:
                        continue  // ourselves
                    case .found(let p):
                        let known = peers.all.contains { $0.instanceName == p.instanceName }
                        peers.apply(event)
                        if !known { events.emit(.peerFound(p)) }
                        appear.yield(p)
                    case .updated:
                        peers.apply(event)
                    case .lost(let name):
                        guard peers.all.contains(where: { $0.instanceName == name }) else { continue }
                        peers.apply(event)
                        events.emit(.peerLost(instanceName: name))
                    case .failed(let e):
                        events.emit(.error(message: "discovery: \(e.message)"))
                    }
                }
            })
        }
        tasks.withLockedValue { $0 = started }
    }

    /// Finds a peer by what a user calls it: host:port, or a name or fingerprint prefix among the peers
    /// discovered so far (waiting up to `wait` seconds for it to appear).
    public func target(for text: String, wait: TimeInterval = 5) async throws(NodeError) -> DialTarget {
        let query = PeerQuery(parsing: text)
        switch query {
        case .address(let host, let port):
            return try DialTarget.address(host: host, port: port)
        case .name(let name):
            // Listen before looking, so a peer found in between is not missed; then look again at each arrival.
            let (changes, change) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
            let arrivals = context.events.subscribe()
            let watcher = Task {
                for await event in arrivals {
                    if case .peerFound = event { change.yield() }
                }
            }
            let clock = Task {
                try? await Task.sleep(nanoseconds: UInt64(max(0, wait) * 1e9))
                change.finish()
            }
            defer {
                watcher.cancel()
                clock.cancel()
            }
            change.yield()
            for await _ in changes {
                switch query.select(from: peers.all) {
                case .success(let found?):
                    return DialTarget(discovered: found)
                case .success(nil):
                    continue
                case .failure(let ambiguous):
                    throw NodeError(.ambiguous, ambiguous.description)
                }
            }
            throw NodeError(.notFound, "no peer named \"\(name)\" has been seen on the LAN (use an instance name, a fingerprint prefix, or HOST:PORT)")
        }
    }

    /// Dials a peer and runs one exchange, consenting for this node (the user asked for it).
    /// `consent`: how this side decides once the code is known; by default it consents at once.
    public func exchange(with text: String, message: String?, consent: ConsentProvider? = nil) async throws(NodeError) -> SessionResult {
        let target = try await target(for: text)
        return try await Dialer.exchange(with: target, context: context, consent: consent ?? AcceptAll(message: message))
    }

    /// Queues a follow-up message to a contact and tries to deliver it at once.
    public func send(message text: String, to contact: String) async throws -> OutboxItem {
        if let problem = MessageEnvelope.textProblem(text) { throw NodeError(.invalidInput, problem) }
        let context = self.context
        let found = try context.database.findContact(contact)
        guard let did = found.didPublicKey, found.sealedRoute != nil else {
            throw NodeError(.noRoute, "\(found.name) has no sealed route: only contacts from an in-person exchange can be messaged")
        }
        _ = try MailSender(context: context).target(for: found)
        let envelope = MessageEnvelope.make(text: text, from: context.identity.did, to: did, sentAt: Int64(Date().timeIntervalSince1970),
                                            signer: context.keys.ed25519)
        let queued = try context.database.enqueue(envelope, for: found)
        let results = await OutboxWorker(context: context).deliverDue(peers: peers.all, contactDID: did)
        if let result = results.first(where: { $0.id == queued.id }) { return result }
        return try context.database.outboxItem(id: queued.id) ?? queued
    }

    /// Withdraws the publication, stops browsing and the outbox, and closes the listener.
    public func stop() async {
        for t in tasks.withLockedValue({ $0 }) { t.cancel() }
        appear.finish()
        publication?.withdraw()
        await listener.close()
    }
}
