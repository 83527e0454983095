import Foundation
import NIOCore
import NIOEmbedded
import NearcardCrypto
import NearcardModel
import NearcardProtocol
import NearcardStore
import Testing

@testable import NearcardNode

// The session handlers over two connected in-memory channels (the swift-nio-ssh habit): what one side
// writes the other reads, time moves only when the test says, and everything else is real — keys,
// the state machines, consent, SQLite. `Pipelines` is the one place that names the node's handler types.

/// A node for these tests: real keys and a real database in a folder of its own.
final class TestNode: @unchecked Sendable {
    let keys = IdentityKeys.generate()
    let name: String
    let dir: String
    let database: NearcardDatabase
    let events = EventBus()
    let recorded: EventRecorder
    var limits = NodeLimits()

    init(_ name: String, title: String = "Engineer") throws {
        self.name = name
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-pipe-\(UUID().uuidString)").path
        database = try NearcardDatabase(path: dir + "/nearcard.sqlite")
        try database.saveMyCard(Card(name: name, email: "\(name.lowercased())@example.org", company: "\(name) Ltd", title: title))
        try database.saveSharingPolicy(SharingPolicy(fields: [.name, .company, .title]))
        recorded = EventRecorder(events.subscribe())
    }

    var identity: PublicIdentity { keys.publicIdentity(name: name) }

    func context(consent: any ConsentProvider) -> NodeContext {
        NodeContext(keys: keys, identity: identity, database: database, consent: consent, events: events, limits: limits)
    }

    deinit { try? FileManager.default.removeItem(atPath: dir) }
}

/// Keeps every event a node emitted, in order.
final class EventRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var seen: [NodeEvent] = []
    private var task: Task<Void, Never>?

    init(_ stream: AsyncStream<NodeEvent>) {
        task = Task { [weak self] in for await e in stream { self?.append(e) } }
    }

    private func append(_ e: NodeEvent) { lock.withLock { seen.append(e) } }
    var all: [NodeEvent] { lock.withLock { seen } }

    var failures: [(code: String, byPeer: Bool)] {
        all.compactMap { if case .exchangeFailed(_, _, let e, let byPeer) = $0 { (e.code.rawValue, byPeer) } else { nil } }
    }
    var completed: [Contact] { all.compactMap { if case .exchangeCompleted(_, let c, _, _, _) = $0 { c } else { nil } } }
    var requestedSAS: [String] { all.compactMap { if case .exchangeRequested(_, _, let sas, _, _, _) = $0 { sas } else { nil } } }
    var started: Int { all.filter { if case .exchangeStarted = $0 { true } else { false } }.count }
    var messagesReceived: [InboxItem] { all.compactMap { if case .messageReceived(let m) = $0 { m } else { nil } } }
}

/// How a dialled session ended, as the dialling face sees it.
enum Ended: Sendable {
    case completed(Contact, sas: String)
    case failed(code: String, byPeer: Bool)

    var contact: Contact? { if case .completed(let c, _) = self { c } else { nil } }
    var code: String? { if case .failed(let c, _) = self { c } else { nil } }
    var byPeer: Bool? { if case .failed(_, let b) = self { b } else { nil } }
}

/// The handlers a connection gets, as the listener and the dialler build them.
enum Pipelines {
    static func responder(_ node: TestNode, consent: any ConsentProvider) -> @Sendable (any Channel) throws -> Void {
        let context = node.context(consent: consent)
        let mailbox = MailboxAuthority(context: context)
        return { channel in
            try SessionPipeline.configureResponder(channel, context: context, mailbox: mailbox, remote: "192.0.2.2:50000")
        }
    }

    static func exchangeInitiator(
        _ node: TestNode, consent: any ConsentProvider, expected: ExpectedPeer = ExpectedPeer(),
        loop: any EventLoop
    ) throws -> (@Sendable (any Channel) throws -> Void, Outcome<Ended>) {
        // The node declines what reaches it; the dial brings its own consent.
        let context = node.context(consent: DeclineAll(reason: "not listening"))
        let promise = loop.makePromise(of: SessionResult.self)
        let ended = promise.futureResult.map { result -> Ended in
            switch result {
            case .completed(let c, let o): .completed(c, sas: o.sas)
            case .unconfirmed(_, _, let e): .failed(code: "unconfirmed:" + e.code.rawValue, byPeer: false)
            case .failed(let e, _, let byPeer, _): .failed(code: e.code.rawValue, byPeer: byPeer)
            }
        }
        return (
            { channel in
                try SessionPipeline.configureExchange(
                    channel, context: context, consent: consent, expected: expected,
                    remote: "192.0.2.1:7447", result: promise)
            }, Outcome(ended)
        )
    }

    /// A follow-up message from `node` to the contact `to`; the future says stored (false) or duplicate (true), or the failure code.
    static func mailSender(
        _ node: TestNode, envelope: MessageEnvelope, to contact: Contact,
        loop: any EventLoop
    ) throws -> (@Sendable (any Channel) throws -> Void, Outcome<Result<Bool, ProtocolError>>) {
        let context = node.context(consent: DeclineAll(reason: "not listening"))
        let target = try MailSender(context: context).target(for: contact)
        let promise = loop.makePromise(of: Result<Bool, ProtocolError>.self)
        let machine = MailboxStateMachine(
            sending: envelope, token: target.route.mailboxToken, to: target.route.pubKey,
            staticKey: node.keys.x25519, ephemeralKey: X25519.PrivateKey())
        return (
            { channel in
                try SessionPipeline.configureMail(channel, context: context, machine: machine, remote: "192.0.2.1:7447", result: promise)
            }, Outcome(promise.futureResult)
        )
    }
}

/// Two channels joined back to back on one loop: bytes written on one are read by the other.
struct Wire {
    let loop: NIOAsyncTestingEventLoop
    let dialler: NIOAsyncTestingChannel
    let listener: NIOAsyncTestingChannel

    init(
        loop: NIOAsyncTestingEventLoop, dialler: @escaping @Sendable (any Channel) throws -> Void,
        listener: @escaping @Sendable (any Channel) throws -> Void
    ) async throws {
        self.loop = loop
        self.listener = try await NIOAsyncTestingChannel(loop: loop) { try listener($0) }
        self.dialler = try await NIOAsyncTestingChannel(loop: loop) { try dialler($0) }
        try await self.listener.connect(to: SocketAddress(ipAddress: "192.0.2.2", port: 50000))
        try await self.dialler.connect(to: SocketAddress(ipAddress: "192.0.2.1", port: 7447))
    }

    /// Moves what each side wrote to the other. A side that closed closes the other (as TCP would tell it).
    /// Returns whether anything moved.
    @discardableResult
    func step() async throws -> Bool {
        var moved = false
        for (from, to) in [(dialler, listener), (listener, dialler)] {
            while let buffer = try await from.readOutbound(as: ByteBuffer.self) {
                moved = true
                if to.isActive { _ = try? await to.writeInbound(buffer) }
            }
        }
        for (a, b) in [(dialler, listener), (listener, dialler)] where !a.isActive && b.isActive {
            try? await b.close()
            moved = true
        }
        await loop.run()
        return moved
    }

    /// Steps until `done` holds (work done off the loop — consent, SQLite, the event recorder — takes real
    /// time, and much more of it while the rest of the suite loads both cores: the suite's blocking tests hold
    /// the two threads of the cooperative pool for a minute and more), or fails after `seconds`, a guard
    /// against a hang rather than a speed limit.
    func run(until done: @Sendable () async -> Bool, seconds: Double = 600) async throws {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if await done() { return }
            if try await !step() { try await Task.sleep(nanoseconds: 2_000_000) }
        }
        Issue.record("the sessions did not reach the expected state within \(seconds) s")
    }
}

/// A listener-side channel alone, for tests that play the peer by hand.
struct LoneListener {
    let loop = NIOAsyncTestingEventLoop()
    let channel: NIOAsyncTestingChannel

    init(_ setup: @escaping @Sendable (any Channel) throws -> Void) async throws {
        channel = try await NIOAsyncTestingChannel(loop: loop) { try setup($0) }
        try await channel.connect(to: SocketAddress(ipAddress: "192.0.2.2", port: 50000))
    }

    /// Writes one frame (length-prefixed) as the peer.
    func send(frame bytes: [UInt8]) async throws {
        var b = channel.allocator.buffer(capacity: bytes.count + 2)
        b.writeInteger(UInt16(bytes.count))
        b.writeBytes(bytes)
        try await channel.writeInbound(b)
        await loop.run()
    }

    /// Every frame the node wrote so far.
    func frames() async throws -> [[UInt8]] {
        var all: [UInt8] = []
        while let b = try await channel.readOutbound(as: ByteBuffer.self) { all += b.readableBytesView }
        var out: [[UInt8]] = []
        var rest = all[...]
        while rest.count >= 2 {
            let n = Int(rest[rest.startIndex]) << 8 | Int(rest[rest.startIndex + 1])
            out.append(Array(rest.dropFirst(2).prefix(n)))
            rest = rest.dropFirst(2 + n)
        }
        return out
    }
}

/// A consent that never answers until the session withdraws it.
struct NeverAnswers: ConsentProvider {
    func decide(_ request: ConsentRequest) async -> ConsentAnswer {
        while !Task.isCancelled { try? await Task.sleep(nanoseconds: 5_000_000) }
        return .decline("withdrawn")
    }
}

/// What a future completed with, readable from the test (nil until then).
final class Outcome<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value?
    init(_ future: EventLoopFuture<Value>) { future.whenSuccess { v in self.lock.withLock { self.value = v } } }
    func peek() -> Value? { lock.withLock { value } }
}

/// Runs one exchange from `grace` (dialling) to `ada` (listening); returns how it ended for Grace.
func exchange(
    _ grace: TestNode, dialling ada: TestNode, graceConsent: any ConsentProvider = AcceptAll(message: nil),
    adaConsent: any ConsentProvider = AcceptAll(message: nil), until: (@Sendable (Ended?) -> Bool)? = nil
) async throws -> (Wire, Outcome<Ended>) {
    let loop = NIOAsyncTestingEventLoop()
    let (dial, result) = try Pipelines.exchangeInitiator(grace, consent: graceConsent, loop: loop)
    let wire = try await Wire(loop: loop, dialler: dial, listener: Pipelines.responder(ada, consent: adaConsent))
    try await wire.run(until: { until?(result.peek()) ?? (result.peek() != nil && !wire.listener.isActive) })
    return (wire, result)
}

@Suite struct SessionPipelineTests {
    @Test func anExchangeCompletesAndEachSideStoresTheOther() async throws {
        let ada = try TestNode("Ada")
        let grace = try TestNode("Grace", title: "Rear Admiral")
        let (wire, result) = try await exchange(
            grace, dialling: ada, graceConsent: AcceptAll(message: "Hi Ada"),
            adaConsent: AcceptAll(message: "Hello Grace"))
        let ended = result.peek()
        let atGrace = try #require(ended?.contact)
        #expect(atGrace.name == "Ada" && atGrace.verificationStatus == .verified && atGrace.theirEphemeralMessage == "Hello Grace")
        try await wire.run(until: { ada.recorded.completed.count == 1 })
        let atAda = try #require(ada.recorded.completed.first)
        #expect(atAda.name == "Grace" && atAda.card.title == "Rear Admiral" && atAda.theirEphemeralMessage == "Hi Ada")
        #expect(try ada.database.contacts().count == 1 && grace.database.contacts().count == 1, "each stored the other once")
        #expect(ada.recorded.started == 1 && ada.recorded.requestedSAS.count == 1)
        if case .completed(_, let sas)? = ended { #expect(ada.recorded.requestedSAS.first == sas, "both screens showed one code") }
        #expect(!wire.dialler.isActive && !wire.listener.isActive, "both sides closed the connection")
    }

    @Test func aDeclineStoresNothingAndBothSidesSayWhy() async throws {
        let ada = try TestNode("Ada")
        let grace = try TestNode("Grace")
        let (wire, result) = try await exchange(
            grace, dialling: ada, adaConsent: DeclineAll(reason: "not today"), until: { _ in ada.recorded.requestedSAS.count == 1 })
        // A refusal decided at once (a policy) leaves no sooner than the session's floor, 1.2–4 s after
        // the request (§8): a stranger cannot tell it from a person's "no".
        await wire.loop.advanceTime(by: .milliseconds(1150))
        for _ in 0..<20 { try await wire.step() }
        #expect(result.peek() == nil && wire.listener.isActive, "not within 1.15 s: \(String(describing: result.peek()))")
        await wire.loop.advanceTime(by: .milliseconds(2900))
        try await wire.run(until: { result.peek() != nil })
        #expect(result.peek()?.code == "declined" && result.peek()?.byPeer == true)
        try await wire.run(until: { !ada.recorded.failures.isEmpty })
        #expect(ada.recorded.failures.first?.code == "declined" && ada.recorded.failures.first?.byPeer == false)
        #expect(try ada.database.contacts().isEmpty && grace.database.contacts().isEmpty)
    }

    /// Nobody answers the listener's request: after the consent timeout it gives up and tells the dialler.
    @Test func theConsentTimeoutEndsTheSessionOnBothSides() async throws {
        let ada = try TestNode("Ada")
        let grace = try TestNode("Grace")
        let (wire, result) = try await exchange(grace, dialling: ada, adaConsent: NeverAnswers(), until: { _ in ada.recorded.requestedSAS.count == 1 })
        #expect(result.peek() == nil, "still waiting for Ada")
        await wire.loop.advanceTime(by: .seconds(59))
        try await wire.step()
        #expect(wire.listener.isActive, "not before the timeout")
        await wire.loop.advanceTime(by: .seconds(2))
        try await wire.run(until: { !ada.recorded.failures.isEmpty && result.peek() != nil })
        #expect(ada.recorded.failures.first?.code == "consent_timeout" && ada.recorded.failures.first?.byPeer == false)
        // The dialler waits for Ada's decision under the same 60 s, then hears what a person's "no" says:
        // declined (§8, revision 2.2). Nothing tells it that nobody answered, nor when Ada gave up.
        #expect(result.peek()?.code == "declined", "the dialler hears a refusal: \(String(describing: result.peek()))")
        #expect(try ada.database.contacts().isEmpty && grace.database.contacts().isEmpty)
    }

    /// §12: the whole session has 300 s, whatever the phases' own timers allow (here a consent timeout
    /// longer than that): past it the session ends with timeout on both sides and nothing is stored.
    @Test func theWholeSessionHasThreeHundredSeconds() async throws {
        let ada = try TestNode("Ada")
        let grace = try TestNode("Grace")
        ada.limits.consentTimeout = 400
        grace.limits.consentTimeout = 400
        let (wire, result) = try await exchange(grace, dialling: ada, adaConsent: NeverAnswers(), until: { _ in ada.recorded.requestedSAS.count == 1 })
        await wire.loop.advanceTime(by: .seconds(299))
        try await wire.step()
        #expect(result.peek() == nil && wire.listener.isActive, "not before 300 s")
        await wire.loop.advanceTime(by: .seconds(2))
        try await wire.run(until: { !ada.recorded.failures.isEmpty && result.peek() != nil })
        #expect(ada.recorded.failures.first?.code == "timeout", "\(ada.recorded.failures)")
        #expect(result.peek()?.code == "timeout")
        #expect(try ada.database.contacts().isEmpty && grace.database.contacts().isEmpty)
    }

    /// A card changed in the store (`nearcard card set` from another process) is the one the next session
    /// sends, also on a node that has served sessions before.
    @Test func theCardSentIsTheOneInTheStoreWhenTheSessionRuns() async throws {
        let ada = try TestNode("Ada")
        let grace = try TestNode("Grace")
        let lin = try TestNode("Lin")
        _ = try await exchange(grace, dialling: ada)
        try ada.database.saveMyCard(Card(name: "Ada", company: "Ada Ltd", title: "Countess"))
        let (_, ended) = try await exchange(lin, dialling: ada)
        #expect(ended.peek()?.contact?.card.title == "Countess")
    }

    /// A connection that opens and closes without a byte (a port scan, `nearcard peers` checking that a
    /// node answers) is not a failed exchange.
    @Test func aSilentProbeIsNotReported() async throws {
        let ada = try TestNode("Ada")
        let lone = try await LoneListener(Pipelines.responder(ada, consent: AcceptAll(message: nil)))
        try await lone.channel.close()
        await lone.loop.run()
        // Then a connection that is reported (another protocol version): events arrive in order, so once its
        // failure is here, anything the silent probe had said would be here before it.
        let reported = try await LoneListener(Pipelines.responder(ada, consent: AcceptAll(message: nil)))
        var noise = NoiseXXHandshake(role: .initiator, prologue: SessionKind.prologue, staticKey: X25519.PrivateKey(), ephemeralKey: X25519.PrivateKey())
        try await reported.send(frame: try noise.writeMessage(payload: Array("nearcard/9".utf8)))
        let deadline = Date().addingTimeInterval(30)
        while ada.recorded.failures.isEmpty && Date() < deadline { try await Task.sleep(nanoseconds: 2_000_000) }
        #expect(
            ada.recorded.failures.map(\.code) == ["unsupported_version"] && ada.recorded.started == 1,
            "only the second connection was reported: \(ada.recorded.all)")
    }

    /// A first message that is not Noise message 1 of a protocol this node speaks ends the connection.
    @Test func aFirstMessageOfAnotherProtocolIsRefused() async throws {
        let ada = try TestNode("Ada")
        let lone = try await LoneListener(Pipelines.responder(ada, consent: AcceptAll(message: nil)))
        var noise = NoiseXXHandshake(role: .initiator, prologue: SessionKind.prologue, staticKey: X25519.PrivateKey(), ephemeralKey: X25519.PrivateKey())
        try await lone.send(frame: try noise.writeMessage(payload: Array("nearcard/9".utf8)))
        try await Task.sleep(nanoseconds: 20_000_000)
        #expect(!lone.channel.isActive, "closed")
        #expect(try await lone.frames().isEmpty, "nothing answered: not even the node's static key")
        #expect(ada.recorded.failures.first?.code == "unsupported_version")
        // Its exchange.failed names a session that was started (docs/JSONL.md): the same id, started first.
        let ids = ada.recorded.all.compactMap { e -> (String, Bool)? in
            switch e {
            case .exchangeStarted(let id, _, _): (id, true)
            case .exchangeFailed(let id, _, _, _): (id, false)
            default: nil
            }
        }
        #expect(ids.count == 2 && ids[0].1 && !ids[1].1 && ids[0].0 == ids[1].0, "\(ids)")
    }

    /// A dialler that sends message 1 and then nothing: the handshake timeout closes the session, and
    /// it is not reported as an exchange (a half-open connection is a probe, summed up by the listener:
    /// PROTOCOL §14).
    @Test func aStalledHandshakeTimesOut() async throws {
        let ada = try TestNode("Ada")
        let lone = try await LoneListener(Pipelines.responder(ada, consent: AcceptAll(message: nil)))
        var noise = NoiseXXHandshake(role: .initiator, prologue: SessionKind.prologue, staticKey: X25519.PrivateKey(), ephemeralKey: X25519.PrivateKey())
        try await lone.send(frame: try noise.writeMessage(payload: SessionKind.exchange.tag))
        #expect(try await lone.frames().count == 1, "message 2")
        await lone.loop.advanceTime(by: .seconds(9))
        #expect(lone.channel.isActive)
        await lone.loop.advanceTime(by: .seconds(2))
        try await Task.sleep(nanoseconds: 20_000_000)
        #expect(!lone.channel.isActive)
        #expect(ada.recorded.failures.isEmpty)
        #expect(!ada.recorded.all.contains { if case .exchangeStarted = $0 { true } else { false } }, "\(ada.recorded.all)")
    }

    /// A listener at its limit closes a dialled connection without a byte (PROTOCOL §4, §14): the dial
    /// ends `busy` (exit 8, an exchange that never began), not `connection_lost`.
    @Test func aConnectionClosedBeforeAnyByteIsBusy() async throws {
        let grace = try TestNode("Grace")
        let loop = NIOAsyncTestingEventLoop()
        let (setup, ended) = try Pipelines.exchangeInitiator(grace, consent: AcceptAll(message: nil), loop: loop)
        let dialler = try await NIOAsyncTestingChannel(loop: loop) { try setup($0) }
        try await dialler.connect(to: SocketAddress(ipAddress: "192.0.2.1", port: 7447))
        await loop.run()
        #expect(try await dialler.readOutbound(as: ByteBuffer.self) != nil, "message 1 went out")
        try await dialler.close()
        await loop.run()
        let deadline = Date().addingTimeInterval(30)
        while ended.peek() == nil && Date() < deadline { try await Task.sleep(nanoseconds: 2_000_000) }
        guard case .failed(let code, _)? = ended.peek() else {
            Issue.record("the dial did not end: \(String(describing: ended.peek()))")
            return
        }
        #expect(code == "busy")
    }

    /// The dialler vanishes after the code was shown: the listener reports a lost connection, stores nothing.
    @Test func aConnectionLostMidExchangeIsReportedAsSuch() async throws {
        let ada = try TestNode("Ada")
        let grace = try TestNode("Grace")
        let (wire, _) = try await exchange(grace, dialling: ada, adaConsent: NeverAnswers(), until: { _ in ada.recorded.requestedSAS.count == 1 })
        try await wire.dialler.close()
        try await wire.run(until: { !ada.recorded.failures.isEmpty })
        #expect(ada.recorded.failures.first?.code == "connection_lost")
        #expect(try ada.database.contacts().isEmpty)
    }

    /// After an exchange, a follow-up message is delivered over its own session, stored once; sent again
    /// it is acknowledged as a duplicate.
    @Test func aMessageIsDeliveredOnceAndAcknowledged() async throws {
        let ada = try TestNode("Ada")
        let grace = try TestNode("Grace")
        let (_, ended) = try await exchange(grace, dialling: ada)
        let contact = try #require(ended.peek()?.contact)
        let envelope = MessageEnvelope.make(
            text: "Lunch?", from: grace.identity.did, to: ada.identity.did,
            sentAt: Int64(Date().timeIntervalSince1970), signer: grace.keys.ed25519)
        for expectDuplicate in [false, true] {
            let loop = NIOAsyncTestingEventLoop()
            let (send, delivered) = try Pipelines.mailSender(grace, envelope: envelope, to: contact, loop: loop)
            let wire = try await Wire(loop: loop, dialler: send, listener: Pipelines.responder(ada, consent: DeclineAll(reason: "mail needs none")))
            try await wire.run(until: { delivered.peek() != nil })
            guard case .success(let duplicate)? = delivered.peek() else {
                Issue.record("not delivered: \(String(describing: delivered.peek()))")
                return
            }
            #expect(duplicate == expectDuplicate)
        }
        #expect(try ada.database.inbox().map(\.text) == ["Lunch?"])
        #expect(ada.recorded.messagesReceived.count == 1)
    }
}

/// §10's hint rule: what a route handed over in one session says about where to reach its sender.
@Suite struct RouteHintTests {
    let lan = [RouteRecord.Hint(host: "192.168.1.20", port: 7447), RouteRecord.Hint(host: "2001:db8::20", port: 7447)]

    @Test func aNodeThatDoesNotListenGivesNoHints() {
        #expect(NodeContext.routeHints(sessionAddress: "192.168.1.20", listening: lan, port: nil).isEmpty)
    }

    @Test func theSessionsOwnAddressComesFirstThenTheOthersWithTheListeningPort() {
        let overLoopback = NodeContext.routeHints(sessionAddress: "127.0.0.1", listening: lan, port: 7447)
        #expect(overLoopback.map(\.host) == ["127.0.0.1", "192.168.1.20", "2001:db8::20"], "a peer on this machine reached us on loopback")
        let overLAN = NodeContext.routeHints(sessionAddress: "2001:db8::20", listening: lan, port: 7447)
        #expect(overLAN.map(\.host) == ["2001:db8::20", "192.168.1.20"], "no address twice")
        #expect(overLAN.allSatisfy { $0.port == 7447 })
    }

    @Test func linkLocalAddressesAreNeverHintsAndThereAreAtMostEight() {
        let many = (1...12).map { RouteRecord.Hint(host: "10.0.0.\($0)", port: 7447) }
        let hints = NodeContext.routeHints(sessionAddress: "fe80::1%veth0", listening: many, port: 7447)
        #expect(!hints.contains { $0.host.hasPrefix("fe80") })
        #expect(hints.count == RouteRecord.maximumHints)
    }
}

/// §12, "deadlines are deadlines": a process that was stopped (SIGSTOP, a suspended laptop) reads
/// the frames queued meanwhile before its overdue timers run; a frame read past the running timer's
/// deadline counts for nothing — the timer's verdict comes first.
@Suite struct DeadlineTests {
    final class Recorder: SessionDriver, @unchecked Sendable {
        var received: [[UInt8]] = []
        var fired: [SessionTimer] = []
        var failures: [ProtocolError] = []
        var finished = false
        weak var connection: (any SessionConnection)?
        var isFinished: Bool { finished }
        func start() { connection?.arm(.cards) }
        func received(_ frame: [UInt8]) { received.append(frame) }
        func timerFired(_ timer: SessionTimer, after seconds: Int) {
            fired.append(timer)
            finished = true
        }
        func failed(_ error: ProtocolError) {
            failures.append(error)
            finished = true
        }
        func closed(heardFromPeer: Bool, after seconds: Double) {}
    }

    final class Clock: @unchecked Sendable {
        var value = NIODeadline.uptimeNanoseconds(1_000_000_000)
    }

    func connected(_ clock: Clock) throws -> (EmbeddedChannel, Recorder) {
        let handler = SessionChannelHandler(limits: NodeLimits(), clock: { clock.value })
        let driver = Recorder()
        driver.connection = handler
        handler.drive(with: driver)
        let channel = EmbeddedChannel(handler: handler)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 7447)).wait()
        return (channel, driver)
    }

    @Test func aFrameReadPastItsPhasesDeadlineCountsForNothing() throws {
        let clock = Clock()
        let (channel, driver) = try connected(clock)
        clock.value = clock.value + .seconds(40) // stopped for 40 s in a 30 s phase; the timer has not run yet
        try channel.writeInbound([UInt8]("done".utf8))
        #expect(driver.received.isEmpty, "the queued frame was not read")
        #expect(driver.fired == [.cards], "the overdue timer decided")
    }

    @Test func aFrameWithinItsDeadlineIsRead() throws {
        let clock = Clock()
        let (channel, driver) = try connected(clock)
        clock.value = clock.value + .seconds(29)
        try channel.writeInbound([UInt8]("done".utf8))
        #expect(driver.received.count == 1 && driver.fired.isEmpty)
    }
}
