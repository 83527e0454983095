import Foundation
import NearcardControl
import NearcardCrypto
import NearcardModel
import NearcardNode
import NearcardProtocol
import NearcardStore

#if canImport(Glibc)
    import Glibc
#endif

/// Where one side's time goes in an exchange: each step alone, median of `rounds`.
func exchangePartsBenchmark(rounds: Int = 201) throws -> String {
    let scratch = try Scratch("parts")
    let a = try scratch.service("Ada Parts")
    let b = try scratch.service("Bob Parts")
    func time(_ body: () throws -> Void) rethrows -> Double {
        var xs: [Double] = []
        for _ in 0..<rounds {
            let t0 = now()
            try body()
            xs.append(Double(now() - t0))
        }
        return median(xs)
    }
    var rows: [(String, Double)] = []
    rows.append(("loadCard() (card, policy, proof from SQLite)", try time { blackHole(try a.loadCard()) }))
    let party = try a.loadCard()
    let t = Int64(Date().timeIntervalSince1970)
    rows.append(
        (
            "ProximityPayload.make (SD-JWT + signature)",
            try time {
                blackHole(
                    try ProximityPayload.make(
                        card: party.card, policy: party.policy, keys: a.keys, receiver: b.identity.did,
                        sessionBinding: [UInt8](repeating: 1, count: 32), ephemeralMessage: "hi", sealedRoute: nil, now: t))
            }
        ))
    let p = try ProximityPayload.make(
        card: party.card, policy: party.policy, keys: a.keys, receiver: b.identity.did,
        sessionBinding: [UInt8](repeating: 1, count: 32), ephemeralMessage: "hi", sealedRoute: nil, now: t)
    let json = p.json
    let bytes = JCS.canonicalize(json)
    rows.append(("JSON parse of the payload (\(bytes.count) B)", try time { blackHole(try JSONParser.parse(bytes)) }))
    rows.append(("JCS canonicalise the payload", time { blackHole(JCS.canonicalize(json)) }))
    let ctx = PayloadVerificationContext(
        expectedSenderDID: a.identity.did, receiverDID: b.identity.did, sessionBinding: [UInt8](repeating: 1, count: 32),
        peerStaticKey: nil, ephemeralMessage: "hi", now: t, maximumSkew: 300, requireDisclosureProof: true)
    rows.append(("ProximityPayload.verify", time { if case .failure(let f) = ProximityPayload.verify(json: json, context: ctx) { fatalError("\(f)") } }))
    let didKey = try DIDKey(parsing: a.identity.did)
    // A DID never seen before (Base58, point decompression and check, the libcrypto key), then one
    // seen before (the parsed-DID cache: a session reads its peer's DID three times).
    var fresh = (0..<(rounds + 1)).map { _ in DIDKey(P256.PrivateKey().publicKey).did }.makeIterator()
    rows.append(("DIDKey(parsing:) of a new DID", try time { blackHole(try DIDKey(parsing: fresh.next()!)) }))
    rows.append(("DIDKey(parsing:) of a DID seen before", try time { blackHole(try DIDKey(parsing: a.identity.did)) }))
    rows.append(("DIDKey.ecPublicKey() (the key kept from the parse)", time { blackHole(didKey.ecPublicKey()) }))
    rows.append(("DIDKey.did (Base58 encode)", time { blackHole(DIDKey(a.keys.p256.publicKey).did) }))
    rows.append(("P-256 sign (raw)", try time { blackHole(try a.keys.p256.signature(for: bytes)) }))
    rows.append(("both sides' state machines, one whole exchange in memory (no sockets, no SQLite)", try time { blackHole(try inMemoryExchange(a, b)) }))
    let outcome = try inMemoryExchange(a, b)
    rows.append(("record the outcome (contact, graph edge, issued route: one SQLite transaction)", try time { blackHole(try b.record(outcome)) }))
    // What a node pays at the start of each session: its previous session just committed a contact,
    // which drops the page cache of the SQLite connection that reads the local card.
    rows.append(
        (
            "record, then loadCard() (the read right after a commit)",
            try time {
                blackHole(try b.record(outcome))
                blackHole(try b.loadCard())
            }
        ))
    // What a node says of each exchange (docs/JSONL.md): the lines a bot writes, encoded as it does.
    let contact = try b.record(outcome)
    let started = NodeEvent.exchangeStarted(id: "3f9c2a1b", role: .responder, remote: "127.0.0.1:40000")
    let completed = NodeEvent.exchangeCompleted(id: "3f9c2a1b", contact: contact, myMessage: "hi", theirMessage: "hi", elapsed: 0.004)
    rows.append(("JSON line for exchange.started (encode + compact text)", time { blackHole(JSONLines.encode(started, identity: b.identity)?.compactText) }))
    rows.append(
        (
            "JSON line for exchange.completed (the contact as `contacts show --json`)",
            time { blackHole(JSONLines.encode(completed, identity: b.identity)?.compactText) }
        ))
    return "| step (one side) | median |\n|---|---|\n" + rows.map { "| \($0.0) | \(format($0.1)) |" }.joined(separator: "\n") + "\n"
}

/// Runs an initiator (`a`) and a responder (`b`) against each other in memory, both accepting, and
/// returns the responder's outcome: the protocol's CPU without sockets, threads or SQLite writes
/// (each side's commit is answered at once, as a store would).
func inMemoryExchange(_ a: NodeContext, _ b: NodeContext) throws -> ExchangeOutcome {
    let nonce = { Sodium.randomBytes(SAS.nonceByteCount) }
    let token = { Sodium.randomBytes(RouteRecord.mailboxTokenByteCount) }
    var sides: [ExchangeStateMachine?] = [
        ExchangeStateMachine(
            initiatorFor: a.local, sessionKey: X25519.PrivateKey(), ephemeralKey: X25519.PrivateKey(), sasNonce: nonce(),
            mailboxToken: token(), sealKey: X25519.PrivateKey(), psiRandomness: .fresh()),
        nil,
    ]
    let nodes = [a, b]
    let presenceKeys = [try a.database.presenceKey(), try b.database.presenceKey()]
    var queue: [(to: Int, frame: [UInt8])] = []
    var outcome: ExchangeOutcome?
    var confirmed = false
    let t = Int64(Date().timeIntervalSince1970)
    func run(_ actions: [ExchangeStateMachine.Action], from side: Int) throws {
        var decide = false
        var load = false
        var commit = false
        var prepare = false
        for action in actions {
            switch action {
            case .send(let frame): queue.append((1 - side, frame))
            case .identified: decide = true
            case .loadCard: load = true
            case .commit(let o, _):
                if side == 1 { outcome = o }
                commit = true
            case .confirmed: confirmed = true
            case .prepareCard: prepare = true
            case .arm, .sasKnown, .finished, .commonContactsStarted: break
            case .unconfirmed(let e), .failed(let e, _): throw BenchError("in-memory exchange failed: \(e.message)")
            }
        }
        if load { try run(sides[side]!.cardLoaded(try nodes[side].loadCard(presenceKey: presenceKeys[side]), now: t), from: side) }
        if decide { try run(sides[side]!.decide(accept: true, message: "hi", reason: nil, now: t), from: side) }
        if prepare { try run(sides[side]!.prepareCard(now: t), from: side) }
        if commit { try run(sides[side]!.committed(), from: side) }
    }
    try run(sides[0]!.start(), from: 0)
    while !queue.isEmpty {
        let (to, frame) = queue.removeFirst()
        if sides[to] == nil {
            // The responder as a listener makes it: message 1 through the dispatch, then resumed.
            guard
                case .exchange(let noise) = try SessionDispatch.readFirstMessage(
                    frame, ephemeralKey: X25519.PrivateKey(), sessionKey: X25519.PrivateKey(),
                    longTermKey: b.keys.x25519)
            else {
                throw BenchError("message 1 was not read as an exchange")
            }
            sides[to] = ExchangeStateMachine(
                resuming: noise, identity: b.local, presenceKey: presenceKeys[1], sasNonce: nonce(), mailboxToken: token(), sealKey: X25519.PrivateKey(),
                psiRandomness: .fresh())
            try run(sides[to]!.start(), from: to)
        } else {
            try run(sides[to]!.receive(frame, now: t), from: to)
        }
    }
    guard let outcome, confirmed else { throw BenchError("the in-memory exchange did not complete") }
    return outcome
}

/// Runs the in-memory exchange (both sides, their cards read once) for `seconds`, for a profiler to watch.
func profileInMemoryExchange(seconds: Double) throws {
    let scratch = try Scratch("profile")
    let a = try scratch.service("Ada Profile")
    let b = try scratch.service("Bob Profile")
    let end = now() + UInt64(seconds * 1e9)
    var n = 0
    let record = ProcessInfo.processInfo.environment["NEARCARD_BENCH_PROFILE_RECORD"] != nil
    var recordCPU: [Double] = []
    while now() < end {
        let outcome = try inMemoryExchange(a, b)
        if record {
            var c0 = timespec()
            var c1 = timespec()
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0)
            blackHole(try b.record(outcome))
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1)
            recordCPU.append(Double((c1.tv_sec - c0.tv_sec) * 1_000_000_000 + (c1.tv_nsec - c0.tv_nsec)))
        }
        n += 1
    }
    if record { emit("record: median \(format(median(recordCPU))) of thread CPU over \(recordCPU.count) calls") }
    emit("\(n) in-memory exchanges in \(Int(seconds)) s: \(format(seconds * 1e9 / Double(n))) each")
}
