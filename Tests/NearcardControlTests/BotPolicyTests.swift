import Foundation
import NearcardCrypto
import NearcardModel
import NearcardNode
import NearcardProtocol
import NearcardStore
import Testing

@testable import NearcardControl

@Suite struct BotPolicyTests {
    func parse(_ text: String, directory: String = "/nonexistent") -> Result<BotPolicy, BotPolicy.Failure> {
        Result { () throws(BotPolicy.Failure) in try BotPolicy.parse(Array(text.utf8), source: "policy.json", directory: directory) }
    }

    func error(_ text: String) -> String? {
        if case .failure(let f) = parse(text) { return f.description }
        return nil
    }

    func peer(_ keys: IdentityKeys, name: String? = "Ada Lovelace") -> PeerIdentity {
        let id = keys.publicIdentity(name: name)
        return PeerIdentity(
            did: id.did, didKey: try! DIDKey(parsing: id.did), name: name, pubKey: keys.x25519.publicKey,
            signPubKey: keys.ed25519.publicKey, fingerprint: id.fingerprint)
    }

    @Test func readsEveryMember() throws {
        let did = IdentityKeys.generate().publicIdentity(name: nil).did
        let p = try parse(
            """
            {"version": 1, "accept": {"allowlist": ["\(did)"]}, "requireFields": ["email", "company"],
             "message": "Hi {name} ({fingerprint})", "rateLimits": {"perPeer": {"count": 2, "seconds": 60}, "overall": {"count": 10, "seconds": 1}},
             "maxConcurrentSessions": 5, "knownContact": "decline"}
            """
        ).get()
        #expect(p.accept == .allowlist([did]) && p.requireFields == [.email, .company] && p.knownContact == .decline)
        #expect(p.perPeer == BotPolicy.Rate(count: 2, seconds: 60) && p.overall == BotPolicy.Rate(count: 10, seconds: 1))
        #expect(p.limits(NodeLimits()).maximumSessions == 5)
        let keys = IdentityKeys.generate()
        #expect(p.message(for: peer(keys)) == "Hi Ada Lovelace (\(keys.publicIdentity(name: nil).fingerprint))")
        #expect(p.message(for: peer(keys, name: nil))?.hasPrefix("Hi there") == true)
        // A placeholder in the peer's own name is their text, not the template's.
        #expect(p.message(for: peer(keys, name: "{fingerprint} {x"))?.hasPrefix("Hi {fingerprint} {x (") == true)
        // Defaults: everyone, update, no message.
        let d = try parse(#"{"version": 1}"#).get()
        #expect(d.accept == .everyone && d.knownContact == .update && d.messageTemplate == nil && d.requireFields.isEmpty)
    }

    /// A typo or a bad value is refused with the file and the member named, never ignored.
    @Test func refusesWhatItCannotRead() {
        #expect(error(#"{"version": 1, "acept": "everyone"}"#)?.contains("unknown member \"acept\"") == true)
        #expect(error(#"{"version": 2}"#)?.contains("\"version\" must be 1") == true)
        #expect(error(#"{"version": 1, "accept": "nobody"}"#)?.hasPrefix("policy.json: \"accept\"") == true)
        #expect(error(#"{"version": 1, "accept": {"allowlist": ["did:web:x"]}}"#)?.contains("not a did:key") == true)
        #expect(error(#"{"version": 1, "requireFields": ["shoeSize"]}"#)?.contains("shoeSize") == true)
        #expect(error(#"{"version": 1, "message": "\#(String(repeating: "x", count: 100)) {name}"}"#)?.contains("64-character name") == true)
        #expect(error(#"{"version": 1, "rateLimits": {"perPeer": {"count": 0, "seconds": 60}}}"#)?.contains("rateLimits.perPeer") == true)
        #expect(error(#"{"version": 1, "maxConcurrentSessions": 0}"#) != nil)
        #expect(error(#"{"version": 1, "knownContact": "ignore"}"#) != nil)
        #expect(
            error(#"{"version": 1, "accept": {"allowlistFile": "missing.txt"}}"#)?.contains("cannot read the allowlist file /nonexistent/missing.txt") == true)
        #expect(error("[1]") != nil && error("{") != nil)
        // A placeholder the bot does not fill would go out as typed: refused, named.
        #expect(error(#"{"version": 1, "message": "Hi {nmae}!"}"#)?.contains("unknown placeholder {nmae}") == true)
        #expect(error(#"{"version": 1, "message": "Hi {name}, {fingerprint} {x}"}"#)?.contains("{x}") == true)
        #expect(error(#"{"version": 1, "message": "Hi {name} :-} { }"}"#) == nil, "braces that are not a placeholder are text")
    }

    /// A webhook's URL and secret: read strictly, a secret file kept private, the signature the
    /// documented HMAC over "TIMESTAMP." + body.
    @Test func readsAWebhookAndRefusesAWeakOne() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-wh-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let secret = String(repeating: "k", count: 32)
        try (secret + "\n").write(toFile: dir + "/hook.secret", atomically: true, encoding: .utf8)
        chmod(dir + "/hook.secret", 0o600)
        let ok = try parse(#"{"version":1,"webhook":{"url":"https://crm.example/in","secretFile":"hook.secret"}}"#, directory: dir).get()
        #expect(ok.webhook?.url == "https://crm.example/in" && ok.webhook?.description == "https://crm.example/in")
        let body = Array(#"{"name":"Ada"}"#.utf8)
        let expected = "sha256=" + Hex.encode(HMACSHA256.authenticate(key: Array(secret.utf8), message: Array("1700000000.".utf8) + body))
        #expect(ok.webhook?.signature(body: body, timestamp: 1_700_000_000) == expected)
        chmod(dir + "/hook.secret", 0o644)
        if case .failure(let f) = parse(#"{"version":1,"webhook":{"url":"https://crm.example/in","secretFile":"hook.secret"}}"#, directory: dir) {
            #expect(f.description.contains("readable by others"))
        } else {
            Issue.record("a world-readable secret file was accepted")
        }
        for bad in [
            #"{"version":1,"webhook":{"url":"ftp://x/y","secret":"0123456789abcdef"}}"#,
            #"{"version":1,"webhook":{"url":"https://x/y","secret":"short"}}"#,
            #"{"version":1,"webhook":{"url":"https://u:p@x/y","secret":"0123456789abcdef"}}"#,
            #"{"version":1,"webhook":{"url":"https://x/y"}}"#,
            #"{"version":1,"webhook":{"url":"https://x/y","secret":"0123456789abcdef","retries":3}}"#,
        ] {
            #expect(error(bad) != nil, "\(bad)")
        }
        #expect(error(#"{"version":1,"webhook":{"url":"https://x/y","secret":"short"}}"#)?.contains("at least 16 bytes") == true)
    }

    @Test func decidesByAllowlistKnownContactsAndRates() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-bot-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let db = try NearcardDatabase(path: dir + "/nearcard.sqlite")
        let ada = IdentityKeys.generate()
        let grace = IdentityKeys.generate()
        let eve = IdentityKeys.generate()
        let t0 = Date(timeIntervalSince1970: 1_800_000_000)

        var policy = try parse(
            #"{"version": 1, "message": "Hi {name}", "rateLimits": {"perPeer": {"count": 2, "seconds": 60}, "overall": {"count": 3, "seconds": 10}}}"#
        ).get()
        let consent = PolicyConsent(policy: policy, book: Book(db))
        #expect(consent.decide(peer(ada), now: t0) == ConsentAnswer(accept: true, message: "Hi Ada Lovelace"))
        #expect(consent.decide(peer(ada), now: t0.addingTimeInterval(1)).accept)
        let third = consent.decide(peer(ada), now: t0.addingTimeInterval(2))
        #expect(!third.accept && third.reason?.contains("2 exchanges per 1 min with one person") == true)
        #expect(consent.decide(peer(grace), now: t0.addingTimeInterval(3)).accept, "per-peer limits are per peer")
        let overall = consent.decide(peer(eve), now: t0.addingTimeInterval(4))
        #expect(!overall.accept && overall.reason?.contains("this bot is at its limit") == true)
        #expect(consent.decide(peer(eve), now: t0.addingTimeInterval(15)).accept, "the overall window slides")
        #expect(consent.decide(peer(ada), now: t0.addingTimeInterval(70)).accept, "the per-peer window slides")
        // The counts are the store's: a restarted bot (a new policy on the same file) keeps them.
        let restarted = PolicyConsent(policy: policy, book: Book(try NearcardDatabase(path: dir + "/nearcard.sqlite")))
        #expect(restarted.decide(peer(ada), now: t0.addingTimeInterval(71)).accept)
        #expect(restarted.decide(peer(ada), now: t0.addingTimeInterval(72)).reason?.contains("2 exchanges per 1 min") == true)

        policy = try parse(#"{"version": 1, "accept": {"allowlist": ["\#(ada.publicIdentity(name: nil).did)"]}, "knownContact": "decline"}"#).get()
        let strict = PolicyConsent(policy: policy, book: Book(db))
        #expect(strict.decide(peer(grace), now: t0).reason == "not on this bot's allowlist")
        #expect(strict.decide(peer(ada), now: t0).accept)
        try db.recordExchange(
            Contact(
                card: Card(name: "Ada"), source: .proximity, verificationStatus: .verified, receivedAt: t0,
                didPublicKey: ada.publicIdentity(name: nil).did),
            issuedRoute: IssuedRoute(
                mailboxToken: Sodium.randomBytes(32), contactDID: ada.publicIdentity(name: nil).did,
                issuedAt: t0, expiresAt: t0.addingTimeInterval(60)), payloadJSON: "{}")
        #expect(strict.decide(peer(ada), now: t0).reason == "this bot has already exchanged cards with you")
    }

    /// A session asks a bot's policy on its own loop (no task): the answer counts against the rates as
    /// `decide` does; the message for an invited guest (whose invitation stood for the decision)
    /// counts nothing.
    @Test func answersAtOnceAndCountsOnce() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-bot-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let db = try NearcardDatabase(path: dir + "/nearcard.sqlite")
        let ada = IdentityKeys.generate()
        let consent = PolicyConsent(
            policy: try parse(#"{"version": 1, "message": "Hi {name}", "rateLimits": {"perPeer": {"count": 1, "seconds": 60}}}"#).get(),
            book: Book(db))
        let request = ConsentRequest(exchangeID: "e1", peer: peer(ada), sas: "123456", role: .responder, remoteAddress: "192.0.2.1:5000")
        for _ in 0..<3 { #expect(consent.acceptanceMessage(request) == "Hi Ada Lovelace") }
        #expect(consent.immediateAnswer(request) == ConsentAnswer(accept: true, message: "Hi Ada Lovelace"))
        #expect(consent.immediateAnswer(request)?.reason?.contains("1 exchanges per 1 min with one person") == true)
        // With knownContact "decline" on a local store, the book is read at once too.
        let strict = PolicyConsent(policy: try parse(#"{"version": 1, "knownContact": "decline"}"#).get(), book: Book(db))
        #expect(strict.immediateAnswer(request)?.accept == true)
    }
}

@Suite struct JSONLinesTests {
    func parsed(_ line: String) -> ControlCommand? {
        if case .success(let p)? = ControlCommand.parse(line) { return p.command }
        return nil
    }

    func refused(_ line: String) -> String? {
        if case .failure(let e)? = ControlCommand.parse(line) { return e.message }
        return nil
    }

    @Test func readsJSONAndWordCommands() throws {
        #expect(parsed(#"{"cmd":"exchange","peer":"Ada","message":"hi","ref":7}"#) == .exchange(peer: "Ada", message: "hi"))
        if case .success(let p)? = ControlCommand.parse(#"{"cmd":"peers","ref":{"n":1}}"#) { #expect(p.ref == ["n": 1]) } else { Issue.record("peers") }
        #expect(parsed(#"exchange "Ada Lovelace" Hello there"#) == .exchange(peer: "Ada Lovelace", message: "Hello there"))
        #expect(parsed(#"{"cmd":"exchange","peer":"Ada","confirm":true}"#) == .exchange(peer: "Ada", message: nil, confirm: true))
        #expect(parsed("accept 1a2b3c4d") == .accept(id: "1a2b3c4d", message: nil))
        #expect(parsed(#"decline 1a2b "not today""#) == .decline(id: "1a2b", reason: "not today"))
        #expect(parsed(#"message did:key:zDn… "See you \"soon\"""#) == .message(contact: "did:key:zDn…", text: "See you \"soon\""))
        #expect(parsed("  quit  ") == .quit && parsed("peers") == .peers)
        #expect(parsed(#"{"cmd":"invite"}"#) == .invite(ttl: 300, uses: 1), "one use, five minutes unless said")
        #expect(parsed(#"{"cmd":"invite","ttl":3600,"uses":3}"#) == .invite(ttl: 3600, uses: 3))
        #expect(ControlCommand.parse("   ") == nil)
    }

    @Test func refusesBadCommandsWithAReason() {
        #expect(refused(#"{"cmd":"exchange"}"#) == "exchange: \"peer\" is required")
        #expect(refused(#"{"cmd":"exchange","peer":"a","mesage":"x"}"#) == "exchange: unknown member \"mesage\"")
        #expect(refused(#"{"cmd":"fly"}"#)?.hasPrefix("unknown command \"fly\"") == true)
        #expect(refused(#"{"cmd":"exchange","peer":"a","confirm":"yes"}"#) == "exchange: \"confirm\" must be true or false")
        #expect(refused(#"{"cmd":"message","contact":"a","text":5}"#) == "message: \"text\" must be a string")
        #expect(refused("{nope")?.hasPrefix("not a JSON command") == true)
        #expect(
            refused(#"{"cmd":"peers","ref":"a","ref":"b"}"#)?.contains("duplicate") == true,
            "the parser's own words: \(refused(#"{"cmd":"peers","ref":"a","ref":"b"}"#) ?? "")")
        #expect(refused(#"{"cmd":"invite","uses":0}"#) == "invite: \"uses\" must be a whole number from 1 to 1000")
        #expect(refused(#"{"cmd":"invite","ttl":0}"#)?.hasPrefix("invite: \"ttl\" must be") == true)
        #expect(refused(#"{"cmd":5}"#)?.contains("\"cmd\" must be a command name") == true)
        #expect(refused(#"{"cmd":"exchange","peer":""}"#) == "exchange: \"peer\" is empty")
        #expect(refused(#"exchange "Ada"#)?.hasPrefix("a quote is not closed") == true)
        #expect(refused(#"exchange "" hello"#)?.contains("empty") == true)
        #expect(refused("dance now")?.contains("use exchange PEER") == true)
        #expect(refused(String(repeating: "x", count: JSONLines.maximumCommandLength + 1))?.contains("longer than") == true)
        // A refused command's reply still carries its ref, so the program can match it.
        guard case .failure(let e)? = ControlCommand.parse(#"{"cmd":"fly","ref":"r1"}"#) else {
            Issue.record("an unknown command was accepted")
            return
        }
        #expect(e.ref == "r1")
    }

    @Test func eventLinesCarryVersionNameAndTime() throws {
        let keys = IdentityKeys.generate()
        let identity = keys.publicIdentity(name: "Bot")
        let started = try #require(JSONLines.encode(.listening(port: 7447, addresses: ["192.0.2.1"]), identity: identity))
        #expect(started["v"] == 1 && started["event"] == "started" && started["port"] == 7447 && started["did"]?.stringValue == identity.did)
        #expect(started["time"]?.stringValue?.count == 24, "ISO 8601 with milliseconds")
        for (seconds, text) in [
            (1_700_000_000.0, "2023-11-14T22:13:20.000Z"), (1_700_000_000.007, "2023-11-14T22:13:20.007Z"),
            (1_700_000_000.045, "2023-11-14T22:13:20.045Z"), (1_700_000_000.9995, "2023-11-14T22:13:20.999Z"),
        ] {
            #expect(JSONLines.line("x", now: Date(timeIntervalSince1970: seconds))["time"]?.stringValue == text)
        }
        let otherKeys = IdentityKeys.generate()
        let other = otherKeys.publicIdentity(name: "Ada")
        let peer = PeerIdentity(
            did: other.did, didKey: try DIDKey(parsing: other.did), name: "Ada", pubKey: otherKeys.x25519.publicKey,
            signPubKey: otherKeys.ed25519.publicKey, fingerprint: other.fingerprint)
        let asked = try #require(
            JSONLines.encode(.exchangeRequested(id: "ab", peer: peer, sas: "111 222", role: .responder, awaitsCommand: true), identity: identity))
        #expect(asked["decision"] == "pending" && asked["sas"] == "111 222" && asked["peer"]?["did"]?.stringValue == other.did)
        let auto = try #require(
            JSONLines.encode(.exchangeRequested(id: "ab", peer: peer, sas: "111 222", role: .responder, awaitsCommand: false), identity: identity))
        #expect(auto["decision"] == "automatic")
        let failed = try #require(JSONLines.encode(.exchangeFailed(id: "ab", peer: nil, error: ProtocolError(.busy, "full"), byPeer: true), identity: identity))
        #expect(failed["code"] == "busy" && failed["byPeer"] == true && failed["peer"] == .null)
        // Every kind of probe JSONL.md names is counted, 0 included; a node-level error has a null ref.
        // One line per address (null: the addresses past the per-interval limit, together).
        let probed = try #require(
            JSONLines.encode(.connectionsProbed(count: 3, seconds: 30, address: "192.0.2.7", kinds: ["silent": 2, "foreign": 1]), identity: identity))
        #expect(probed["kinds"] == ["evicted": 0, "foreign": 1, "halfOpen": 0, "silent": 2, "timedOut": 0])
        #expect(probed["address"] == "192.0.2.7")
        let others = try #require(JSONLines.encode(.connectionsProbed(count: 1, seconds: 30, address: nil, kinds: ["halfOpen": 1]), identity: identity))
        #expect(others["address"] == .null && others["kinds"]?["halfOpen"] == 1)
        let problem = try #require(JSONLines.encode(.error(message: "the webhook gave up"), identity: identity))
        #expect(problem["ref"] == .null && problem.objectValue?.keys.contains("ref") == true)
    }
}

/// Consent by command (listen --jsonl --accept ask): the program may answer the moment it reads
/// exchange.requested, possibly before the session has started waiting.
@Suite struct PendingDecisionsTests {
    func request(_ id: String) -> ConsentRequest {
        let keys = IdentityKeys.generate()
        let identity = keys.publicIdentity(name: "Ada")
        let peer = PeerIdentity(
            did: identity.did, didKey: try! DIDKey(parsing: identity.did), name: "Ada", pubKey: keys.x25519.publicKey,
            signPubKey: keys.ed25519.publicKey, fingerprint: identity.fingerprint)
        return ConsentRequest(exchangeID: id, peer: peer, sas: "123 456", role: .responder, remoteAddress: "127.0.0.1:1")
    }

    @Test func anAnswerBeforeTheSessionAsksIsKept() async {
        let pending = PendingDecisions()
        pending.announce("a1")
        #expect(pending.pending == ["a1"])
        #expect(pending.resolve("a1", ConsentAnswer(accept: true, message: "hi")))
        #expect(!pending.resolve("a1", .decline("again")), "a request is decided once")
        let answer = await pending.decide(request("a1"))
        #expect(answer == ConsentAnswer(accept: true, message: "hi"))
        #expect(pending.pending.isEmpty)
    }

    @Test func anUnknownRequestIsRefusedAndAWaitingOneIsAnswered() async throws {
        let pending = PendingDecisions()
        #expect(!pending.resolve("nope", .decline("x")))
        let waiter = Task { await pending.decide(request("b2")) }
        while pending.pending != ["b2"] { try await Task.sleep(nanoseconds: 1_000_000) }
        #expect(pending.resolve("b2", .decline("not now")))
        #expect(await waiter.value.accept == false)
        #expect(pending.pending.isEmpty)
    }
}
