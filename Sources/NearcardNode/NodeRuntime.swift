public import Foundation
internal import NIOConcurrencyHelpers
import NearcardAddressBook
public import NearcardCrypto
public import NearcardDiscovery
public import NearcardModel
import NearcardProtocol
import NearcardStore

/// The node, as every face uses it: exchange with a peer, send a follow-up message, list the peers on
/// the LAN, deliver what is queued, and (through the context's event bus) every event.
///
/// Two ways to have one: `start` runs a node as `nearcard listen` and `nearcard bot` do (the TCP
/// listener, the DNS-SD publication and a continuous browse whose finds and losses become events, the
/// outbox worker that delivers queued messages when their contacts appear); `open` gives a one-shot face
/// (`nearcard exchange`, `message`, `peers`, `outbox --send`) the same operations without listening or
/// announcing anything: it browses only while an operation looks for a peer. It prints nothing.
public final class NodeRuntime: Sendable {
    public struct Options: Sendable {
        /// TCP port; 0 picks a free one.
        public var port: Int = defaultPort
        /// Publish and browse over DNS-SD (false: reachable by host:port only).
        public var discovery = true
        /// Announce no name: a random instance name and a presence tag only contacts can resolve
        /// (default mode announces the display name the person chose).
        public var isPrivate = false
        /// Seconds between two publications: the presence tag, the SRV host name and (private mode) the
        /// instance name are renewed at start and then every period (docs/PROTOCOL.md §3).
        public var presenceRotation: TimeInterval = defaultPresenceRotation
        /// Publish and browse only on these interfaces (empty: all but the denied ones).
        public var interfaces: [String] = []
        /// Never use these (in addition to VPN and container bridges).
        public var excludedInterfaces: [String] = []
        /// Record the node's metrics (through swift-metrics; the process bootstraps a backend).
        public var metrics = false
        /// Hide a peer whose node stopped answering (`PeerLiveness`): checked when a face offers it, at
        /// most every 20 s. A node that runs for a while (listen, ui, bot) checks; one that does one thing does not.
        public var checksLiveness = true
        /// The one address of this machine the node uses (`--address`): it listens there only, dials
        /// from it, and announces only it. nil: every address (the listener takes both families).
        public var address: String?

        /// Why `address` cannot be this node's only address (not an IP literal), or nil.
        public static func addressProblem(_ address: String) -> String? {
            var v4 = in_addr()
            var v6 = in6_addr()
            if inet_pton(AF_INET, address, &v4) == 1 || inet_pton(AF_INET6, address, &v6) == 1 { return nil }
            return "not an IPv4 or IPv6 address (give a literal such as 127.0.0.2)"
        }

        public init() {}

        /// 15 minutes, as Bluetooth LE's resolvable private addresses.
        public static let defaultPresenceRotation: TimeInterval = 15 * 60

        var filter: InterfaceFilter { InterfaceFilter(allow: interfaces, deny: InterfaceFilter.defaultDeny + excludedInterfaces) }
    }

    /// nil for a runtime that does not listen (`open`).
    package let listener: Listener?
    package let peers: PeerTable
    /// The peers discovery knows now (a peer leaves when avahi removes it or a dial to it fails).
    /// The peers seen, each recognised as the contacts stand now (the store is read again at most every
    /// 2 s, and at once after `contactsChanged`): a contact deleted anywhere in this home stops being
    /// recognised, not at its next announcement.
    public var nearbyPeers: [DiscoveredPeer] { resolver.resolve(peers.all) }

    /// The peers to show a person: those nearby that did not fail their last check (`PeerLiveness`).
    /// Without liveness checks, all of them.
    public var livePeers: [DiscoveredPeer] {
        guard let liveness else { return nearbyPeers }
        return nearbyPeers.filter { liveness.isShown($0.instanceName) }
    }

    /// The peers a face is about to offer a person (the Nearby list, the JSON-lines `peers` reply):
    /// `livePeers`, with a check started for each one that is due (at most `PeerLiveness.maximumInFlight`
    /// at once); one that does not answer leaves (`peer.lost`) within a check's time. A node whose
    /// faces offer nothing makes no checks at all: a crowd costs each node nothing (issue "Crowds").
    public func peersToOffer() -> [DiscoveredPeer] {
        let shown = livePeers
        guard let liveness else { return shown }
        liveness.offered()
        checkDue()
        return shown
    }

    /// Starts the checks that are due, as many as `PeerLiveness` lets run at once.
    private func checkDue() {
        for p in peers.all { check(p, force: false) }
    }
    /// Whether peers are shown only while they answer (nil: every announcement is shown).
    private let liveness: PeerLiveness?

    /// This face changed the contact book (a contact deleted): recognition follows at once.
    public func contactsChanged() { resolver.invalidate() }
    package let options: Options
    /// How peers are found: made when first needed by a one-shot runtime (`open`), so a command that
    /// dials HOST:PORT never connects to D-Bus or avahi-daemon; at start by a serving one (`start`).
    private let discoveryBox: NIOLockedValueBox<DiscoveryState>
    private enum DiscoveryState {
        case made((any Discovery)?, DiscoveryError?)
        case onFirstUse
    }
    private var discovery: (any Discovery)? { discoveryNow().0 }
    /// Why there is no discovery, when it was wanted (`open` reports it when an operation needs it).
    private var discoveryProblem: DiscoveryError? { discoveryNow().1 }

    private func discoveryNow() -> ((any Discovery)?, DiscoveryError?) {
        discoveryBox.withLockedValue { state in
            if case .made(let d, let p) = state { return (d, p) }
            var made: (any Discovery)?
            var problem: DiscoveryError?
            do throws(DiscoveryError) { made = try AvahiDiscovery() } catch { problem = error }
            state = .made(made, problem)
            return (made, problem)
        }
    }
    /// This node's announcer, once discovery runs (a serving node whose avahi-daemon did not answer at
    /// start makes it when the daemon does).
    private let announcerBox = NIOLockedValueBox<PresenceAnnouncer?>(nil)
    private var announcer: PresenceAnnouncer? { announcerBox.withLockedValue { $0 } }
    /// Makes the announcer for a discovery (a serving node's; nil for a one-shot runtime).
    private let makeAnnouncer: (@Sendable (any Discovery) -> PresenceAnnouncer)?
    /// Recognises contacts among the peers discovered (by their presence keys in the store).
    package let resolver: PresenceResolver
    /// A serving node's watch on a shared (PostgreSQL) store: what a command or another bot of the
    /// fleet changes there is followed at once (`followChange`).
    private let changeWatch: NIOLockedValueBox<NearcardDatabase.ChangeWatch?>
    /// Address-book syncs, one at a time: the worker's passes and `syncAddressBooks`.
    private let addressBookGate = SyncGate()
    private let tasks: NIOLockedValueBox<[Task<Void, Never>]>
    private let appear: AsyncStream<DiscoveredPeer>.Continuation
    /// The node every session of this runtime belongs to (route hints set once the port is known).
    package let context: NodeContext

    /// Who this home is: name, DID, fingerprint.
    public var identity: PublicIdentity { context.identity }
    /// The name this node says now (the card's; it follows `card set --name`).
    public var displayName: String? { context.displayName }
    /// Where this node's events go.
    public var events: EventBus { context.events }
    /// The node's limits (timeouts, caps).
    public var limits: NodeLimits { context.limits }
    /// Where a program's accept/decline commands go, when requests wait for one (`listen --jsonl
    /// --accept ask`); nil when a person at a terminal or a policy decides.
    public var pendingDecisions: PendingDecisions? { context.pendingDecisions }

    /// The TCP port this node listens on (nil: it does not listen).
    public var port: Int? { listener?.port }
    /// Whether this node browses and announces (avahi-daemon reachable, discovery not turned off).
    public var discovers: Bool { discovery != nil }

    /// A node that neither listens nor announces itself, for a face that does one thing and exits. Peers
    /// are looked for only while an operation needs one. Discovery that cannot start (no avahi-daemon)
    /// is reported by the operations that need it; an exchange by address and a message to a contact's
    /// route hints work without it.
    public static func open(_ configuration: NodeConfiguration, options: Options = Options(), discovery chosen: (any Discovery)? = nil) -> NodeRuntime {
        open(context: configuration.context, options: options, discovery: chosen)
    }

    package static func open(context: NodeContext, options: Options = Options(), discovery chosen: (any Discovery)? = nil) -> NodeRuntime {
        let (_, appear) = AsyncStream.makeStream(of: DiscoveredPeer.self)
        // avahi-daemon (through D-Bus) only once an operation looks for a peer.
        let state: DiscoveryState = chosen != nil || !options.discovery ? .made(chosen, nil) : .onFirstUse
        return NodeRuntime(
            context: context, listener: nil, options: options, discovery: state, makeAnnouncer: nil, appear: appear)
    }

    /// Binds, publishes and starts browsing. Discovery failing (no avahi-daemon, no D-Bus) is not
    /// fatal: it is reported as `.discoveryUnavailable`, the node serves by address, and it connects
    /// again after 10 s, then 20, 40 and every 60 s: a daemon started later (or one too busy to answer
    /// at first) finds the node announced and browsing once it answers.
    /// `discovery`: how peers are found and this node announced; by default avahi-daemon (DNS-SD).
    /// A home that cannot be written is refused before the node takes any connection.
    public static func start(_ configuration: NodeConfiguration, options: Options, discovery chosen: (any Discovery)? = nil) async throws -> NodeRuntime {
        try await start(context: configuration.context, options: options, discovery: chosen)
    }

    package static func start(context: NodeContext, options: Options, discovery chosen: (any Discovery)? = nil) async throws -> NodeRuntime {
        try checkWritable(context)
        context.localAddress = options.address
        let listener = try await Listener.start(context: context, host: options.address ?? "::", port: options.port)
        if let only = options.address {
            // Routes handed over name that address alone (a loopback one only as the session's own, §10).
            context.routeHints = only.hasPrefix("127.") || only == "::1" ? [] : [RouteRecord.Hint(host: only, port: listener.port)]
        }
        let events = context.events
        var discovery: (any Discovery)?
        var problem: DiscoveryError?
        // A node that uses one address announces only it.
        let ownAddresses: (@Sendable () -> [PeerAddress])? = options.address.map { address in
            let own = PresenceAnnouncer.own(address)
            return { [own] }
        }
        let port = listener.port
        let makeAnnouncer: @Sendable (any Discovery) -> PresenceAnnouncer = { d in
            PresenceAnnouncer(
                discovery: d, database: context.database, displayName: context.displayName, isPrivate: options.isPrivate,
                port: port, interfaces: options.interfaces, filter: options.filter, period: options.presenceRotation,
                addresses: ownAddresses, keyPublished: { [context] in context.presenceKeyPublished($0) })
        }
        if options.discovery {
            do throws(DiscoveryError) {
                if let chosen { discovery = chosen } else { discovery = try AvahiDiscovery() }
            } catch {
                problem = error
                events.emit(.discoveryUnavailable(message: error.message))
            }
        }
        let (appeared, appear) = AsyncStream.makeStream(of: DiscoveredPeer.self, bufferingPolicy: .bufferingNewest(64))
        let runtime = NodeRuntime(
            context: context, listener: listener, options: options, discovery: .made(discovery, problem),
            makeAnnouncer: options.discovery ? makeAnnouncer : nil, appear: appear)
        events.emit(.listening(port: listener.port, addresses: options.address.map { [$0] } ?? LocalAddresses.current(filter: runtime.filter)))
        runtime.startTasks(appeared: appeared)
        return runtime
    }

    private init(
        context: NodeContext, listener: Listener?, options: Options, discovery: DiscoveryState,
        makeAnnouncer: (@Sendable (any Discovery) -> PresenceAnnouncer)?, appear: AsyncStream<DiscoveredPeer>.Continuation
    ) {
        self.context = context
        self.makeAnnouncer = makeAnnouncer
        let watch = NIOLockedValueBox<NearcardDatabase.ChangeWatch?>(nil)
        self.changeWatch = watch
        self.resolver = PresenceResolver(database: context.database, watched: { watch.withLockedValue { $0?.isListening ?? false } })
        self.listener = listener
        self.options = options
        self.discoveryBox = NIOLockedValueBox(discovery)
        self.appear = appear
        self.peers = PeerTable()
        // A node that serves (it listens) and sees peers shows them only while they answer.
        // (Or will once its avahi-daemon answers.)
        var discovers = makeAnnouncer != nil
        if case .made(_?, _) = discovery { discovers = true }
        self.liveness = listener != nil && discovers && options.checksLiveness ? PeerLiveness() : nil
        self.tasks = NIOLockedValueBox([])
    }

    var filter: InterfaceFilter { options.filter }

    private func startTasks(appeared: AsyncStream<DiscoveredPeer>) {
        let context = self.context
        let events = context.events
        var started: [Task<Void, Never>] = []
        if context.database.isShared {
            let watch = context.database.watchChanges { [weak self] change in self?.followChange(change) }
            changeWatch.withLockedValue { $0 = watch }
        }
        // Queued follow-up messages go out every few seconds, and when a peer appears.
        started.append(Task { [peers] in await OutboxWorker(context: context).run(peers: peers, appeared: appeared) })
        // Exchanges stored unconfirmed are settled with their peers on the same schedule (§11).
        started.append(
            Task { [peers] in
                let worker = ConfirmationWorker(context: context)
                while !Task.isCancelled {
                    await worker.settleDue(peers: peers.all)
                    // Follow-ups past their lifetime go from both boxes (§15).
                    _ = try? context.database.purgeExpiredMessages()
                    try? await Task.sleep(nanoseconds: 5_000_000_000)
                }
            })
        if let makeAnnouncer {
            started.append(
                Task { [self] in
                    guard let discovery = await self.connectedDiscovery() else { return }
                    let announcer = makeAnnouncer(discovery)
                    self.announcerBox.withLockedValue { $0 = announcer }
                    // The announcer publishes as it starts, off the start: a daemon too busy to answer D-Bus
                    // delays the announcement, never the node.
                    async let announcing: Void = announcer.run(events: events)
                    await self.browse(discovery, announcer: announcer)
                    await announcing
                })
        } else if let discovery {
            started.append(Task { [self] in await self.browse(discovery, announcer: nil) })
        }
        if let webhook = context.webhook {
            started.append(Task { await WebhookWorker(context: context, webhook: webhook).run() })
        }
        // Contacts go to the person's CardDAV address books within seconds (docs/ADDRESSBOOK.md).
        started.append(Task { [gate = addressBookGate] in await AddressBookWorker(context: context, gate: gate).run() })
        if options.metrics {
            started.append(Task { [self] in await NodeMetrics.record(events, runtime: self) })
        }
        tasks.withLockedValue { $0 = started }
    }

    /// The discovery made at start, or (avahi-daemon did not answer then) one made when it does: tried
    /// again after 10 s, then 20, 40 and every 60 s. Nil once the node stops.
    private func connectedDiscovery() async -> (any Discovery)? {
        var attempts = 0
        while !Task.isCancelled {
            if let discovery { return discovery }
            try? await Task.sleep(nanoseconds: UInt64(PresenceAnnouncer.backoff(attempts) * 1e9))
            attempts += 1
            guard !Task.isCancelled else { return nil }
            // Connecting makes blocking D-Bus calls (25 s each to a daemon too busy to answer).
            let attempt = await onOwnThread("nearcard-avahi-connect") { Result { () throws(DiscoveryError) in try AvahiDiscovery() } }
            switch attempt {
            case .success(let made):
                discoveryBox.withLockedValue { $0 = .made(made, nil) }
                return made
            case .failure(let error):
                discoveryBox.withLockedValue { $0 = .made(nil, error) }
            }
        }
        return nil
    }

    /// Browses the LAN until the node stops: each peer found, updated or lost becomes an event (this
    /// node's own announcements aside). A browse avahi-daemon refuses (a daemon too busy to answer
    /// D-Bus within 25 s) is made again, as the announcer's publication is: a node is never left deaf
    /// to the LAN.
    private func browse(_ discovery: any Discovery, announcer: PresenceAnnouncer?) async {
        let events = context.events
        let resolver = self.resolver
        let (peers, appear) = (self.peers, self.appear)
        let filter = self.filter
        // Addresses are resolved up front only for contacts (the outbox and confirmations reach
        // them); a stranger's when it is dialled (`target(for:)`).
        // In a crowd, the others are listed by name and read in turn (`AddressPolicy`), except a private
        // node (its name says nothing), a name a contact announces and this home's own.
        let policy = AddressPolicy.only(
            { resolver.contact(for: $0.tag) != nil },
            readsAtOnce: { instance in
                instance.hasPrefix(PresenceAnnouncer.privateInstancePrefix) || announcer?.mayBeOwn(instance) == true
                    || resolver.mayBeContact(named: instance)
            })
        var failures = 0
        while !Task.isCancelled {
            for await raw in discovery.browse(filter: filter, addresses: policy) {
                let event = resolver.resolve(raw)
                switch event {
                case .found(let p) where announcer?.isOwn(p) == true, .updated(let p) where announcer?.isOwn(p) == true:
                    // Ourselves (listed by name before its records said so: no longer).
                    if peers.forget(p.instanceName), self.liveness?.forget(p.instanceName) ?? true {
                        events.emit(.peerLost(instanceName: p.instanceName))
                    }
                    continue
                case .found(let p), .updated(let p):
                    // An update of a peer forgotten after a failed dial brings it back.
                    let before = peers.peer(named: p.instanceName)
                    peers.apply(event)
                    // Shown as the LAN announces it. A new publication (a node restarted, or
                    // announcing again: a new host name each time, §3) is a new announcement:
                    // whatever its last check said is forgotten.
                    if let before, before.recordsPending, !p.recordsPending {
                        // Its records read (listed by name in a crowd until now): found again, with
                        // its id, version and whether it is a contact — unless a check hid it.
                        if self.liveness?.isShown(p.instanceName) ?? true { events.emit(.peerFound(p)) }
                    } else if before == nil || p.port != before?.port || p.hostName != before?.hostName {
                        let wasShown = self.liveness?.forget(p.instanceName) ?? true
                        if before == nil || !wasShown { events.emit(.peerFound(p)) }
                    }
                    // A check that found nothing new (only `confirmedAt` moved) is no appearance.
                    var seen = p
                    seen.confirmedAt = before?.confirmedAt
                    if seen != before { appear.yield(p) }
                case .lost(let name):
                    guard peers.contains(name) else { continue }
                    peers.apply(event)
                    if self.liveness?.forget(name) ?? true { events.emit(.peerLost(instanceName: name)) }
                case .failed(let e):
                    // Said once; the browse is made again after 10 s, then 20, 40 and every 60 s.
                    if failures == 0 {
                        events.emit(.error(message: "discovery: \(e.message); browsing again in \(Int(PresenceAnnouncer.settleTimeout)) s"))
                    }
                    failures += 1
                case .settled:
                    continue
                }
            }
            guard failures > 0, !Task.isCancelled else { break }
            try? await Task.sleep(nanoseconds: UInt64(PresenceAnnouncer.backoff(failures - 1) * 1e9))
        }
    }

    /// The discovery an operation needs, or why there is none.
    private func requireDiscovery() throws(NodeError) -> any Discovery {
        if let discovery { return discovery }
        if let discoveryProblem { throw NodeError(.environment, discoveryProblem.phrase) }
        throw NodeError(.environment, Phrase("discovery is off for this node (--no-discovery): name the peer by HOST:PORT"))
    }

    /// Finds a peer by what a user calls it: host:port, or a name (announced, or a recognised contact's),
    /// a contact's DID or a peer id prefix among the peers discovered so far (waiting up to `wait`
    /// seconds for it to appear).
    public func target(for text: String, wait: TimeInterval = 5) async throws(NodeError) -> DialTarget {
        let query = PeerQuery(parsing: text)
        switch query {
        case .address(let host, let port):
            return try DialTarget.address(host: host, port: port)
        case .malformed(_, let reason):
            throw NodeError(.invalidInput, reason)
        case .name where listener == nil:
            return DialTarget(
                discovered: try await PeerBrowser.find(
                    query, in: try requireDiscovery(), filter: filter, seconds: wait,
                    resolver: resolver))
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
            // Among hundreds announced at once, the one named is resolved first (its instance name is the
            // name it announces, in default mode).
            discovery?.hurry(instanceNamed: name)
            for await _ in changes {
                switch query.select(from: nearbyPeers) {
                case .success(let found?):
                    return await DialTarget(discovered: located(found))
                case .success(nil):
                    continue
                case .failure(let ambiguous):
                    throw NodeError(.ambiguous, ambiguous.description)
                }
            }
            // One last look: a peer found as the wait ran out (its event raced the clock) is still taken.
            if case .success(let found?) = query.select(from: nearbyPeers) { return await DialTarget(discovered: located(found)) }
            if let near = Spelling.nearest(to: name, among: nearbyPeers.map(\.displayName)) {
                throw NodeError(
                    .notFound,
                    Phrase(
                        "no peer named \"%1$@\" has been seen on the LAN (did you mean \"%2$@\"? use a name, a peer id as `nearcard peers` shows it, or HOST:PORT)",
                        name, near))
            }
            throw NodeError(
                .notFound, Phrase("no peer named \"%1$@\" has been seen on the LAN (use a name, a peer id as `nearcard peers` shows it, or HOST:PORT)", name))
        }
    }

    /// Checks whether `peer` answers (`PeerLiveness`), unless it was checked lately or enough checks
    /// are under way (`force`: even if checked lately), and says when it comes back (found) or stops
    /// answering (lost).
    private func check(_ peer: DiscoveredPeer, force: Bool) {
        guard let liveness, liveness.begin(peer.instanceName, force: force) else { return }
        // A face is about to offer it: its records are read now, not in their turn.
        if peer.recordsPending { discovery?.hurry(instanceNamed: peer.instanceName) }
        let events = context.events
        Task { [peers] in
            let live = await PeerLiveness.answers(await self.located(peer))
            // Gone from discovery meanwhile: nothing to say.
            guard let current = peers.peer(named: peer.instanceName) else {
                liveness.forget(peer.instanceName)
                return
            }
            switch liveness.record(peer.instanceName, live: live) {
            case .becameLive: events.emit(.peerFound(self.resolver.resolve(current)))
            case .becameDead: events.emit(.peerLost(instanceName: peer.instanceName))
            case .none: break
            }
            // While a face offers them, the next peer due takes this one's place.
            if liveness.isOffered() { self.checkDue() }
        }
    }

    /// The peer with its addresses, resolved now when discovery reported it without them (a
    /// stranger, until it is dialled); none when it no longer resolves (the dial then fails, and the
    /// peer leaves the list).
    func located(_ peer: DiscoveredPeer) async -> DiscoveredPeer {
        guard peer.addresses.isEmpty || peer.recordsPending, let discovery else { return peer }
        let p = await discovery.locate(peer)
        return peer.recordsPending ? resolver.resolve(p) : p
    }

    /// Dials a peer and runs one exchange, consenting for this node (the user asked for it).
    /// `consent`: how this side decides once the code is known; by default it consents at once.
    public func exchange(with text: String, message: String?, consent: (any ConsentProvider)? = nil, wait: TimeInterval = 5) async throws(NodeError)
        -> SessionResult
    {
        try await exchange(with: try await target(for: text, wait: wait), consent: consent ?? AcceptAll(message: message))
    }

    /// Dials a peer for a program that decides after seeing the check code (`confirm`): the request waits
    /// for `answer(request:…)` like an incoming one. Refused when this node's requests are not decided
    /// by commands.
    public func exchange(with text: String, message: String?, confirm: Bool) async throws(NodeError) -> SessionResult {
        guard confirm else { return try await exchange(with: text, message: message) }
        guard let decisions = context.pendingDecisions else {
            throw NodeError(.invalidInput, Phrase("confirm needs accept/decline commands (listen --jsonl --accept ask); this node's policy decides"))
        }
        return try await exchange(with: text, message: message, consent: DecidedByCommand(decisions: decisions, message: message))
    }

    /// Dials the node a QR invitation names and exchanges (§19): the invitation stands for both people's
    /// consent, its node must prove the fingerprint it gives, and no code is compared.
    /// The same from the invitation's text (`nearcard-invite:…`).
    package func exchange(invitationText text: String, message: String?, now: Date = Date()) async throws(NodeError) -> SessionResult {
        try await exchange(invitation: try Self.invitation(text), message: message, now: now)
    }

    /// An invitation's text read, or why it cannot be (invalid input).
    public static func invitation(_ text: String) throws(NodeError) -> ExchangeInvitation {
        do { return ExchangeInvitation(try Invitation(text: text)) } catch {
            throw NodeError(.invalidInput, Phrase("the invitation cannot be read: %1$@", error.phrase))
        }
    }

    /// Whether a QR text is a Nearcard invitation (to route it before other QR formats).
    public static func isInvitation(_ text: String) -> Bool { text.hasPrefix(Invitation.prefix) }

    public func exchange(invitation shown: ExchangeInvitation, message: String?, now: Date = Date()) async throws(NodeError) -> SessionResult {
        let invitation = shown.invitation
        if let message, let problem = ProximityPayload.messageProblemPhrase(message) { throw NodeError(.invalidInput, problem) }
        guard Int64(now.timeIntervalSince1970) <= invitation.expires else {
            throw NodeError(
                .refused,
                Phrase("the invitation expired at %1$@; ask for a new one", ISO8601.string(Date(timeIntervalSince1970: TimeInterval(invitation.expires)))))
        }
        return try await exchange(with: try DialTarget(invitation: invitation), consent: AcceptAll(message: message))
    }

    /// Makes a QR invitation to this node (§19), good for `uses` sessions until `ttl` seconds from now,
    /// naming this machine's addresses with `port` (where this node, or another run of it, listens).
    public func invite(ttl: TimeInterval, uses: Int, port: Int, now: Date = Date()) throws(NodeError) -> ExchangeInvitation {
        var addresses = LocalAddresses.current(filter: filter).map { $0.contains(":") ? "[\($0)]:\(port)" : "\($0):\(port)" }
        if addresses.isEmpty { addresses = ["127.0.0.1:\(port)"] }
        let invitation = Invitation(
            fingerprint: context.identity.fingerprint, name: options.isPrivate ? nil : context.displayName,
            addresses: Array(addresses.prefix(Invitation.maximumAddresses)),
            id: Sodium.randomBytes(Invitation.idByteCount), secret: Sodium.randomBytes(Invitation.secretByteCount),
            expires: Int64(now.addingTimeInterval(ttl).timeIntervalSince1970))
        do {
            try context.database.createInvitation(
                id: invitation.id, secret: invitation.secret,
                expires: Date(timeIntervalSince1970: TimeInterval(invitation.expires)), uses: uses, now: now)
        } catch {
            throw NodeError(storage: error, while: Phrase("saving the invitation"))
        }
        return ExchangeInvitation(invitation)
    }

    /// Answers a request waiting for a decision (incoming, or an outgoing one started with `confirm`).
    /// `.invalidInput` when this node's requests are not decided by commands or the message is too long;
    /// `.notFound` when no request with this id waits (answered, timed out, or ended).
    public func answer(request id: String, accept: Bool, message: String? = nil, reason: String? = nil) throws(NodeError) {
        if let message, let problem = ProximityPayload.messageProblemPhrase(message) { throw NodeError(.invalidInput, problem) }
        guard let decisions = context.pendingDecisions else {
            throw NodeError(.invalidInput, Phrase("this node decides by its policy; accept and decline are not taken"))
        }
        let answer = accept ? ConsentAnswer(accept: true, message: message) : .decline(reason)
        guard decisions.resolve(id, answer) else {
            throw NodeError(.notFound, Phrase("no request %1$@ is waiting for a decision (it may have timed out or ended)", id))
        }
    }

    /// Runs one exchange with a peer already found (`target(for:)`).
    /// Refused before anything is sent when this node's home cannot be written (read-only, full), so the
    /// peer never holds a contact this side could not keep.
    public func exchange(with target: DialTarget, consent: any ConsentProvider) async throws(NodeError) -> SessionResult {
        try Self.checkWritable(context)
        do {
            let result = try await Dialer.exchange(with: target, context: context, consent: consent)
            guard case .unconfirmed(let contact, let outcome, let error) = result else { return result }
            return await settle(contact, outcome, error)
        } catch {
            // A peer that cannot be reached at any address it announced has gone (power off, cable
            // pulled) until its records say otherwise: drop it at once instead of when they expire.
            if error.neverConnected, let name = target.instanceName, peers.forget(name) {
                context.events.emit(.peerLost(instanceName: name))
            }
            throw error
        }
    }

    /// Whether this node can store what an exchange brings (a writable home with room), checked by
    /// `exchange` itself; faces call it first to say so before looking for the peer.
    public func checkCanStore() throws(NodeError) { try Self.checkWritable(context) }

    static func checkWritable(_ context: NodeContext) throws(NodeError) {
        do { try context.database.checkWritable() } catch {
            throw NodeError(.storage, Phrase("cannot store a contact: %1$@; nothing was sent", error.phrase), causes: ["\(error)"])
        }
    }

    /// The peers on the LAN: those seen so far by a listening node, or those a one-shot browse sees
    /// within `seconds` (as soon as `enough` holds, if given).
    package func browse(seconds: Double, until enough: @escaping ([DiscoveredPeer]) -> Bool = { _ in false }) async throws(NodeError) -> [DiscoveredPeer] {
        if listener != nil && discovery != nil { return peers.all }
        return try await PeerBrowser.collect(try requireDiscovery(), filter: filter, seconds: seconds, resolver: resolver, until: enough)
    }

    /// The peers on the LAN within `seconds`, for a face that has no node of its own to run (`nearcard
    /// peers` needs no identity): browsing on the interfaces `options` allows, recognising the
    /// contacts `resolver` knows (none without a store).
    /// Discovery's events, peers resolved against `resolver`'s contacts, until the stream is dropped
    /// (`nearcard peers --watch`). Needs no identity.
    public static func watch(options: Options = Options(), discovery chosen: (any Discovery)? = nil, resolver: PresenceResolver = .none)
        throws(NodeError) -> AsyncStream<DiscoveryEvent>
    {
        let discovery: any Discovery
        if let chosen {
            discovery = chosen
        } else {
            do throws(DiscoveryError) { discovery = try AvahiDiscovery() } catch { throw NodeError(.environment, error.phrase) }
        }
        let events = discovery.browse(filter: options.filter)
        let (stream, continuation) = AsyncStream.makeStream(of: DiscoveryEvent.self, bufferingPolicy: .unbounded)
        let reader = Task {
            // The discovery lives as long as its browse is read.
            defer { withExtendedLifetime(discovery) {} }
            for await e in events { continuation.yield(resolver.resolve(e)) }
            continuation.finish()
        }
        continuation.onTermination = { _ in reader.cancel() }
        return stream
    }

    /// With `untilSettled`, it answers as soon as avahi-daemon has told what it holds (its cache), and
    /// `seconds` is only the longest wait; without, it browses `seconds`.
    public static func browse(
        seconds: Double, options: Options = Options(), discovery chosen: (any Discovery)? = nil,
        resolver: PresenceResolver = .none, untilSettled: Bool = false
    ) async throws(NodeError) -> [DiscoveredPeer] {
        let discovery: any Discovery
        if let chosen {
            discovery = chosen
        } else {
            do throws(DiscoveryError) { discovery = try AvahiDiscovery() } catch { throw NodeError(.environment, error.phrase) }
        }
        return try await PeerBrowser.collect(discovery, filter: options.filter, seconds: seconds, resolver: resolver, untilSettled: untilSettled)
    }

    /// Queues a follow-up message to a contact and tries to deliver it at once: to the contact's node as
    /// discovery shows it (a one-shot runtime looks for it up to `wait` seconds), then at the route's
    /// address hints. Returns the outbox entry: delivered, still queued (a later attempt will deliver
    /// it), or failed.
    /// `expiresIn`: seconds after which both nodes delete the message (§15); nil keeps it.
    public func send(message text: String, to contact: String, wait: TimeInterval = 5, expiresIn: Int64? = nil) async throws -> OutboxItem {
        if let problem = MessageEnvelope.textProblemPhrase(text) { throw NodeError(.invalidInput, problem) }
        let context = self.context
        let found = try context.database.findContact(contact)
        guard let did = found.didPublicKey, found.sealedRoute != nil else {
            throw NodeError(.invalidInput, Phrase("%1$@ has no sealed route: only contacts from an in-person exchange can be messaged", found.name))
        }
        let target = try MailSender(context: context).target(for: found)
        let sentAt = Int64(Date().timeIntervalSince1970)
        let expiresAt = expiresIn.map { sentAt + $0 }
        if let expiresAt, let problem = MessageEnvelope.lifetimeProblemPhrase(sentAt: sentAt, expiresAt: expiresAt) { throw NodeError(.invalidInput, problem) }
        let envelope = MessageEnvelope.make(
            text: text, from: context.identity.did, to: did, sentAt: sentAt, expiresAt: expiresAt,
            signer: context.keys.ed25519)
        let queued = try context.database.enqueue(envelope, for: found)
        // Without discovery the hints are still tried.
        // The contact's node is the one whose presence tag its presence key made.
        let seen = wait > 0 ? ((try? await browse(seconds: wait) { $0.contains { target.isAnnounced(by: $0) } }) ?? []) : peers.all
        let results = await OutboxWorker(context: context).deliverDue(peers: seen, contactDID: did)
        if let result = results.first(where: { $0.id == queued.id }) { return result }
        return try context.database.outboxItem(id: queued.id) ?? queued
    }

    /// Tries every queued message now, whatever its back-off (`outbox --send`), after looking `wait`
    /// seconds for the contacts on the LAN; returns the entries tried.
    public func deliverQueued(wait: TimeInterval) async -> [OutboxItem] {
        // A serving node sees the LAN all along: its peers, without a browse of its own.
        let seen = wait > 0 && listener == nil ? ((try? await browse(seconds: wait)) ?? []) : peers.all
        // Unconfirmed exchanges are asked about on the same pass (§11).
        await ConfirmationWorker(context: context).settleDue(peers: seen, ignoringBackoff: true)
        return await OutboxWorker(context: context).deliverDue(peers: seen, ignoringBackoff: true)
    }

    /// The confirmation a dialled exchange lost with its connection, asked for at once over the mail
    /// channel (§11) — three tries within about ten seconds, for a network that comes back — so the
    /// person hears how it ended: kept on both sides, withdrawn on both, or still unconfirmed (then the
    /// node's next runs keep asking).
    func settle(_ contact: Contact, _ outcome: ExchangeSummary, _ error: ProtocolError) async -> SessionResult {
        let worker = ConfirmationWorker(context: context)
        for delay in [0.5, 2.5, 7.0] {
            try? await Task.sleep(nanoseconds: UInt64(delay * 1e9))
            guard let pending = try? context.database.pendingConfirmations().first(where: { $0.edge == outcome.graphEdgeID }) else {
                return .completed(contact, outcome)
            }
            switch await worker.settle(pending, peers: peers.all, now: Date()) {
            case .confirmed:
                return .completed(contact, outcome)
            case .withdrawn:
                // How the session ended stays its code (a timeout is still exit 10); the words add what
                // became of it ("nothing was stored" follows from the failure itself).
                return .failed(
                    ProtocolError(error.code, "\(error.message); \(contact.name)'s node did not keep the exchange, so it was withdrawn here too"),
                    peer: outcome.peer, byPeer: false)
            case .pending:
                continue
            }
        }
        return .unconfirmed(contact, outcome, error)
    }

    // MARK: What a command changed while the node runs (the control socket, docs/JSONL.md)

    /// An address-book account was removed (`addressbook remove`): returns once a sync in flight has
    /// ended; the worker's next pass reads the accounts as they are now.
    public func addressBooksChanged() async { await addressBookGate.run {} }

    /// How one address book's sync went (`addressbook sync` through the node): the report as
    /// `AddressBookSyncReport.json` writes it, or the error's kind and sentence.
    public struct AddressBookSyncOutcome: Sendable {
        public let url: String
        public let report: JSONValue?
        public let errorKind: String?
        public let message: String?

        public var json: JSONValue {
            var o: JSONObject = ["url": .string(url)]
            if let report { o["report"] = report }
            if let errorKind, let message { o["error"] = .object(["kind": .string(errorKind), "message": .string(message)]) }
            return .object(o)
        }
    }

    /// Syncs the address book at `url` (every one when nil) now, between the worker's passes, never
    /// beside one. An unknown URL is `.notFound`.
    public func syncAddressBooks(url: String?, mirrorDeletes: Bool) async throws(NodeError) -> [AddressBookSyncOutcome] {
        let accounts: [AddressBookAccount]
        do { accounts = try context.database.addressBooks().filter { url == nil || $0.url == url } } catch {
            throw NodeError(storage: error, while: Phrase("reading the address books"))
        }
        if let url, accounts.isEmpty { throw NodeError(.notFound, Phrase("no address book %1$@", url)) }
        let database = context.database
        return await addressBookGate.run {
            var out: [AddressBookSyncOutcome] = []
            for account in accounts {
                do throws(AddressBookError) {
                    let r = try await AddressBookSync.sync(account, database: database, mirrorDeletes: mirrorDeletes)
                    out.append(AddressBookSyncOutcome(url: account.url, report: r.json, errorKind: nil, message: nil))
                } catch {
                    out.append(AddressBookSyncOutcome(url: account.url, report: nil, errorKind: error.kind.rawValue, message: error.message))
                }
            }
            return out
        }
    }

    /// Replaces the presence key (`id rotate-presence`) and announces again with the new one before
    /// returning: from then on no announcement carries a tag made with the old key, and no session
    /// seals this node's identity with it.
    public func rotatePresence(now: Date = Date()) async throws(NodeError) {
        let key: [UInt8]
        do { key = try context.database.rotatePresenceKey(now: now) } catch {
            throw NodeError(storage: error, while: Phrase("replacing the presence key"))
        }
        context.presenceKeyPublished(key)
        await announceAgain(displayName: .none)
    }

    /// The card or what it shares changed (`card set`, `share`): sessions from now on send the new card,
    /// and a new name is announced before this returns. Returns whether the name changed.
    @discardableResult
    public func cardChanged() async throws(NodeError) -> Bool {
        context.database.forgetSharedCard()
        let card: Card?
        do { card = try context.database.myCard()?.card } catch { throw NodeError(storage: error, while: Phrase("reading the card")) }
        let name = card?.name ?? context.identity.name
        guard context.rename(name) else { return false }
        await announceAgain(displayName: .some(name))
        return true
    }

    /// What another process changed in a shared store (docs/OPERATIONS.md, "Several bots, one book"):
    /// recognition reads the contacts again, a new card or presence key is announced. Nil: the watch
    /// was away, anything may have changed. Trust is read at each use and address-book accounts at
    /// each pass of their worker: nothing to do for those.
    private func followChange(_ change: NearcardDatabase.Change?) {
        switch change {
        case .contacts?:
            resolver.invalidate()
        case .card?:
            Task { _ = try? await self.cardChanged() }
        case .presence?:
            resolver.invalidate()
            Task { await self.presenceChanged() }
        case .trust?, .addressBooks?:
            break
        case nil:
            resolver.invalidate()
            Task {
                _ = try? await self.cardChanged()
                await self.presenceChanged()
            }
        }
    }

    /// The store's presence key differs from the one announced (another bot of the fleet rotated it):
    /// announced again with the store's.
    private func presenceChanged() async {
        guard let key = try? context.database.presenceKey(upToDate: true), key != (try? context.presenceKey()) else { return }
        context.presenceKeyPublished(key)
        await announceAgain(displayName: .none)
    }

    /// Publishes again now (a rotation ahead of time); a failure is said as the rotation would say it.
    private func announceAgain(displayName: String??) async {
        guard let announcer else { return }
        do {
            if let name = try await announcer.republish(displayName: displayName) { context.events.emit(.published(name: name)) }
        } catch {
            context.events.emit(.error(message: "discovery: cannot announce this node again (\(error)); peers can still reach it by address"))
        }
    }

    /// Sessions open now (connections admitted and not yet closed).
    public var openSessions: Int { listener?.admission.openSessions ?? 0 }

    /// Stops taking new sessions (the publication withdrawn, the listening socket closed) and waits up
    /// to `grace` seconds for the open ones to finish; then stops the rest (`stop()`). Returns how many
    /// were still open when the grace ran out.
    @discardableResult
    public func drain(grace: TimeInterval) async -> Int {
        announcer?.withdraw()
        await listener?.close()
        await waitForSessions(seconds: grace)
        let left = openSessions
        await stop()
        return left
    }

    /// Whether the node's event loops answer (for a watchdog): a no-op run on one and awaited.
    public func eventLoopsAnswer() async -> Bool {
        await EventLoops.ping()
    }

    /// Withdraws the publication, stops browsing and the outbox, and closes the listener; sessions still
    /// open end then, each telling its peer and reporting its end (`exchange.failed`), within a second.
    public func stop() async {
        changeWatch.withLockedValue { $0?.stop() }
        for t in tasks.withLockedValue({ $0 }) { t.cancel() }
        appear.finish()
        announcer?.withdraw()
        await listener?.close()
        guard let listener, listener.admission.openSessions > 0 else { return }
        listener.admission.stopAll()
        await waitForSessions(seconds: 1)
    }

    /// Returns when no connection is open any more, or after `seconds`.
    private func waitForSessions(seconds: TimeInterval) async {
        let deadline = Date().addingTimeInterval(seconds)
        while openSessions > 0, Date() < deadline {
            try? await Task.sleep(nanoseconds: 10_000_000)
        }
    }
}
