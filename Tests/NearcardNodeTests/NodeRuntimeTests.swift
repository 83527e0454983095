import Foundation
import NearcardCrypto
import NearcardDiscovery
import NearcardModel
import NearcardProtocol
import NearcardStore
import Testing

@testable import NearcardNode

/// The facade every face uses: a one-shot node (what `nearcard exchange` and `message` are) finds a
/// listening node by name and exchanges with it; requests are answered through the runtime, which
/// refuses what the node's consent does not take; without discovery, a name is a clear error.
@Suite(.timeLimit(.minutes(5))) struct NodeRuntimeTests {
    final class Home: Sendable {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-runtime-\(UUID().uuidString)").path
        deinit { try? FileManager.default.removeItem(atPath: dir) }

        /// Timers far beyond the test's needs: the rest of the suite can hold the cooperative pool for a
        /// minute, and a test that waits on an event must not lose its session to a timer meanwhile.
        func context(_ name: String, consent: any ConsentProvider, adjust: (inout NodeLimits) -> Void = { _ in }) throws -> NodeContext {
            let keys = IdentityKeys.generate()
            var limits = NodeLimits()
            limits.handshakeTimeout = 600
            limits.consentTimeout = 600
            limits.idleTimeout = 600
            limits.sessionTimeout = 1200
            adjust(&limits)
            return NodeContext(
                keys: keys, identity: keys.publicIdentity(name: name),
                database: try NearcardDatabase(path: "\(dir)/\(name)/nearcard.sqlite"), consent: consent, limits: limits)
        }
    }

    static func listening(_ context: NodeContext) async throws -> NodeRuntime {
        var options = NodeRuntime.Options()
        options.port = 0
        options.discovery = false
        return try await NodeRuntime.start(context: context, options: options)
    }

    /// What DNS-SD would show for a node listening on loopback.
    static func advert(of node: NodeRuntime) throws -> DiscoveredPeer {
        let identity = node.context.identity
        return DiscoveredPeer(
            instanceName: identity.name ?? "?", hostName: "localhost", port: try #require(node.port),
            txt: TXTRecord(tag: Presence.makeTag(key: try node.context.database.presenceKey()), name: identity.name),
            addresses: [PeerAddress(ip: "127.0.0.1", port: try #require(node.port), interfaceName: "", interfaceIndex: 0)])
    }

    @Test func aOneShotNodeFindsAListeningOneByNameAndExchanges() async throws {
        let home = Home()
        let ada = try await Self.listening(try home.context("Ada", consent: AcceptAll(message: "Hello from Ada")))
        defer { Task { await ada.stop() } }
        let grace = NodeRuntime.open(
            context: try home.context("Grace", consent: DeclineAll(reason: "not listening")),
            discovery: StaticDiscovery(peers: [try Self.advert(of: ada)]))
        #expect(grace.port == nil, "a one-shot node does not listen")
        #expect(try await grace.browse(seconds: 0.2).map(\.instanceName) == ["Ada"])
        let result = try await grace.exchange(with: "ada", message: "Hi Ada")
        guard case .completed(let contact, let outcome) = result else {
            Issue.record("not completed: \(result)")
            return
        }
        #expect(contact.name == "Ada" && contact.didPublicKey == ada.context.identity.did)
        #expect(outcome.theirMessage == "Hello from Ada" && outcome.myMessage == "Hi Ada")
        #expect(try grace.context.database.contacts().map(\.name) == ["Ada"], "the one-shot side stored the contact")
    }

    /// The name a node says in its sessions and announces is its card's, cut to the hello's 64 scalars
    /// at a character boundary (a card's name may hold 256; the card carries it whole).
    /// docs/ADDRESSBOOK.md "When it syncs": with the server down the node tries again after 2 s, 4 s,
    /// 8 s … at most 5 minutes.
    @Test func anAddressBookIsTriedAgainAsTheDocSays() {
        #expect((1...10).map { AddressBookWorker.backoff(failures: $0) } == [2, 4, 8, 16, 32, 64, 128, 256, 300, 300])
    }

    @Test func aLongCardNameIsCutForTheHello() {
        let long = String(repeating: "é", count: 70)
        #expect(NodeContext.sayable(long) == String(repeating: "é", count: 64))
        let decomposed = String(repeating: "e\u{301}", count: 40) // 2 scalars a character
        #expect(NodeContext.sayable(decomposed)?.unicodeScalars.count == 64 && NodeContext.sayable(decomposed)?.count == 32)
        #expect(NodeContext.sayable("Ada") == "Ada" && NodeContext.sayable(nil) == nil)
    }

    @Test func requestsAreAnsweredThroughTheRuntime() async throws {
        let home = Home()
        let ada = try await Self.listening(try home.context("Ada", consent: DecidedByCommand(decisions: PendingDecisions(), message: nil)))
        defer { Task { await ada.stop() } }
        let events = ada.context.events.subscribe()
        let grace = NodeRuntime.open(
            context: try home.context("Grace", consent: DeclineAll(reason: "not listening")),
            options: {
                var o = NodeRuntime.Options()
                o.discovery = false
                return o
            }())
        let dial = Task { try await grace.exchange(with: "127.0.0.1:\(try #require(ada.port))", message: nil) }
        var requested: String?
        for await event in events {
            if case .exchangeRequested(let id, _, _, _, let awaitsCommand, _) = event {
                #expect(awaitsCommand, "the request waits for a command")
                requested = id
                break
            }
        }
        let id = try #require(requested)
        #expect(throws: NodeError.self) { try ada.answer(request: id, accept: true, message: String(repeating: "x", count: 141)) }
        do throws(NodeError) {
            try ada.answer(request: "no-such-request", accept: true)
            Issue.record("an unknown request was answered")
        } catch {
            #expect(error.kind == .notFound)
        }
        try ada.answer(request: id, accept: false, reason: "not now")
        guard case .failed(let error, _, let byPeer, _) = try await dial.value else {
            Issue.record("the declined exchange completed")
            return
        }
        #expect(error.code == .declined && byPeer, "Grace hears that Ada declined")
        #expect(try ada.context.database.contacts().isEmpty && grace.context.database.contacts().isEmpty, "nothing stored on either side")

        // A node whose policy decides takes no answers, and an outgoing confirm is refused there.
        let bot = try await Self.listening(try home.context("Bot", consent: AcceptAll(message: nil)))
        defer { Task { await bot.stop() } }
        do throws(NodeError) {
            try bot.answer(request: id, accept: true)
            Issue.record("a policy node took an answer")
        } catch {
            #expect(error.kind == .invalidInput && error.message.contains("policy"))
        }
        await #expect(throws: NodeError.self) { try await bot.exchange(with: "127.0.0.1:1", message: nil, confirm: true) }
    }

    @Test func aNameWithoutDiscoveryIsAnEnvironmentError() async throws {
        let home = Home()
        var options = NodeRuntime.Options()
        options.discovery = false
        let node = NodeRuntime.open(context: try home.context("Lin", consent: DeclineAll(reason: "not listening")), options: options)
        do throws(NodeError) {
            _ = try await node.target(for: "Ada", wait: 0.1)
            Issue.record("a name was resolved without discovery")
        } catch {
            #expect(error.kind == .environment && error.message.contains("HOST:PORT"))
        }
    }
}
