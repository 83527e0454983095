import Foundation
import FuzzSupport

// make-seeds [DIR]: writes the seed corpora (fuzz/corpus/<target>/) from real, valid inputs made
// with the fuzz targets' fixed keys and clock, so each target starts from messages that get deep.
let root = CommandLine.arguments.dropFirst().first ?? "corpus"
func write(_ target: String, _ name: String, _ bytes: [UInt8]) {
    let dir = "\(root)/\(target)"
    try! FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    FileManager.default.createFile(atPath: "\(dir)/\(name)", contents: Data(bytes))
}
func write(_ target: String, _ name: String, _ text: String) { write(target, name, Array(text.utf8)) }

// Frames: a read size byte, then framed messages.
write("fuzz-frame", "two-frames", [15] + FrameParser.frame(Array("hello".utf8)) + FrameParser.frame([UInt8](repeating: 1, count: 300)))
write("fuzz-frame", "empty-frame", [0, 0, 0])  // a zero-length frame, which no sender makes

// An honest initiator against the targets' responder (fixed keys, Fuzz): the Noise messages, then
// whole v2 exchanges (the responder is made and served exactly as fuzz-session makes and serves it).
do {
    var i = NoiseXXHandshake(role: .initiator, prologue: SessionKind.prologue, staticKey: Fuzz.initiatorSessionKey,
                             ephemeralKey: Fuzz.initiatorEphemeral)
    var r = NoiseXXHandshake(role: .responder, prologue: SessionKind.prologue, staticKey: nil, ephemeralKey: Fuzz.responderEphemeral)
    let m1 = try! i.writeMessage(payload: SessionKind.exchange.tag)
    _ = try! r.readMessage(m1)
    r.useStaticKey(Fuzz.responderSessionKey)
    _ = try! i.readMessage(try! r.writeMessage())
    let m3 = try! i.writeMessage(payload: Array("payload".utf8))
    _ = try! r.readMessage(m3)
    write("fuzz-noise", "xx-handshake", Fuzz.join([m1, m3]))
    // A mail session's message 1, made for our long-term key (the IK responder reads it).
    var ik = NoiseIKHandshake(initiatorTo: Fuzz.me.x25519.publicKey, prologue: SessionKind.prologue, staticKey: Fuzz.peer.x25519,
                              ephemeralKey: Fuzz.initiatorEphemeral)
    write("fuzz-noise", "ik-message1", Fuzz.join([try! ik.writeMessage(payload: SessionKind.mail.tag)]))
}

/// The last action of a kind a side performed, to check how an exchange ended.
func ended(_ events: [ExchangeStateMachine.Action]) -> String {
    for event in events.reversed() {
        switch event {
        case .finished: return "finished"
        case .confirmed: return "confirmed"
        case .unconfirmed(let e): return "unconfirmed (\(e))"
        case .failed(let e, _): return "failed (\(e))"
        default: continue
        }
    }
    return "not over"
}

/// A whole v2 exchange between an honest initiator (fixed keys, nonce and token) and the responder
/// exactly as fuzz-session makes and serves it; returns every frame the initiator sent, in order. Traps
/// unless both sides end with the contact: the responder `finished`, the initiator `confirmed`.
func exchange(_ name: String, expected: ExpectedPeer = ExpectedPeer(), invitation: Invitation.Claim? = nil,
              initiatorCard: LocalCard, responderCard: LocalCard) -> [[UInt8]] {
    var initiator = ExchangeStateMachine(initiatorFor: Fuzz.identity(Fuzz.peer), expected: expected, sessionKey: Fuzz.initiatorSessionKey,
                                         ephemeralKey: Fuzz.initiatorEphemeral, sasNonce: [UInt8](repeating: 5, count: SAS.nonceByteCount),
                                         mailboxToken: [UInt8](repeating: 6, count: RouteRecord.mailboxTokenByteCount), sealKey: X25519.PrivateKey(),
                                         psiRandomness: .fresh(), invitation: invitation)
    var iEvents: [ExchangeStateMachine.Action] = []
    var rEvents: [ExchangeStateMachine.Action] = []
    var sent: [[UInt8]] = []
    var toResponder = Fuzz.serve(&initiator, initiator.start(), card: initiatorCard, message: "hello") { iEvents.append($0) }
    sent += toResponder
    var (responder, opening) = Fuzz.responder(reading: toResponder.removeFirst())!
    var toInitiator = Fuzz.serve(&responder, opening, card: responderCard, message: "hi") { rEvents.append($0) }
    var rounds = 0
    while (!toResponder.isEmpty || !toInitiator.isEmpty) && rounds < 100 {
        rounds += 1
        if !toResponder.isEmpty {
            toInitiator += Fuzz.serve(&responder, responder.receive(toResponder.removeFirst(), now: Fuzz.now), card: responderCard, message: "hi") {
                rEvents.append($0)
            }
        }
        if !toInitiator.isEmpty {
            let out = Fuzz.serve(&initiator, initiator.receive(toInitiator.removeFirst(), now: Fuzz.now), card: initiatorCard, message: "hello") {
                iEvents.append($0)
            }
            toResponder += out
            sent += out
        }
    }
    precondition(ended(rEvents) == "finished" && ended(iEvents) == "confirmed",
                 "\(name): the exchange did not complete (responder \(ended(rEvents)), initiator \(ended(iEvents)))")
    // The frames alone, replayed as fuzz-session replays them, take the responder to the end too.
    var (replayed, first) = Fuzz.responder(reading: sent[0])!
    var replayEvents: [ExchangeStateMachine.Action] = []
    Fuzz.serve(&replayed, first, card: responderCard, message: "hi") { replayEvents.append($0) }
    for frame in sent.dropFirst() {
        Fuzz.serve(&replayed, replayed.receive(frame, now: Fuzz.now), card: responderCard, message: "hi") { replayEvents.append($0) }
    }
    precondition(ended(replayEvents) == "finished", "\(name): replayed, the frames end the responder with \(ended(replayEvents))")
    print("\(name): \(sent.count) frames from the initiator, responder \(ended(rEvents)), initiator \(ended(iEvents)), replay \(ended(replayEvents))")
    return sent
}

do {
    let plain = Fuzz.localCard(presenceKey: Fuzz.mePresenceKey)
    let withCommon = Fuzz.localCard(presenceKey: Fuzz.mePresenceKey, commonContacts: Fuzz.commonContacts)
    let initiatorCard = Fuzz.localCard(presenceKey: Fuzz.peerPresenceKey)
    // Byte 0 even: frames; bit 1: the responder's card turns the common-contacts step on (fuzz-session).
    let whole = exchange("whole-exchange", initiatorCard: initiatorCard, responderCard: plain)
    write("fuzz-session", "whole-exchange", [0] + Fuzz.join(whole))
    write("fuzz-session", "handshake-only", [0] + Fuzz.join(Array(whole.prefix(2))))
    // Both offer the private common-contacts step (§22): psi-1 and psi-4 among the frames.
    let common = exchange("common-contacts", initiatorCard: Fuzz.localCard(presenceKey: Fuzz.peerPresenceKey,
                                                                           commonContacts: [Fuzz.me.publicIdentity(name: nil).did] + Fuzz.commonContacts.dropFirst()),
                          responderCard: withCommon)
    write("fuzz-session", "common-contacts", [2] + Fuzz.join(common))
    // A contact recognised by its presence tag: the responder proves itself first (§6.2).
    let recall = exchange("recall", expected: ExpectedPeer(did: Fuzz.me.publicIdentity(name: nil).did, presenceKey: Fuzz.mePresenceKey),
                          initiatorCard: initiatorCard, responderCard: plain)
    write("fuzz-session", "recall", [0] + Fuzz.join(recall))
    // Opened with a QR invitation (§19): the hello carries its proof.
    let invited = exchange("invitation", invitation: Invitation.Claim(id: [UInt8](repeating: 7, count: Invitation.idByteCount),
                                                                     secret: [UInt8](repeating: 8, count: Invitation.secretByteCount)),
                           initiatorCard: initiatorCard, responderCard: plain)
    write("fuzz-session", "invitation", [0] + Fuzz.join(invited))
}

// A valid card from the peer to us, bound to the context fuzz-payload checks.
let payload = try! ProximityPayload.make(card: Fuzz.card, policy: SharingPolicy(fields: [.name, .email, .company]), keys: Fuzz.peer,
                                         receiver: Fuzz.me.publicIdentity(name: nil).did, sessionBinding: [UInt8](repeating: 1, count: 32),
                                         ephemeralMessage: "hi", sealedRoute: nil, now: Fuzz.now)
write("fuzz-payload", "valid-card", JCS.canonicalize(payload.json))
// Decrypted session messages (byte 0 odd).
let identity = ExchangeMessage.Identity(did: Fuzz.peer.publicIdentity(name: nil).did, name: "Ada", pubKey: Fuzz.peer.x25519.publicKey.rawRepresentation,
                                        signPubKey: Fuzz.peer.ed25519.publicKey.rawRepresentation, signature: [UInt8](repeating: 1, count: 64))
write("fuzz-session", "message-hello", [1] + ExchangeMessage.hello(.init(sasCommit: [UInt8](repeating: 2, count: 32), identity: identity,
                                                                          invite: .init(id: [UInt8](repeating: 7, count: 8), proof: [UInt8](repeating: 9, count: 32)))).encoded)
write("fuzz-session", "message-nonce", [1] + ExchangeMessage.nonce(sasNonce: [UInt8](repeating: 3, count: 32), sealedIdentity: [UInt8](repeating: 4, count: 48)).encoded)
write("fuzz-session", "message-sas-reveal", [1] + ExchangeMessage.sasReveal(nonce: [UInt8](repeating: 5, count: 32), identity: identity).encoded)
write("fuzz-session", "message-decision", [1] + ExchangeMessage.decision(accept: false, reason: "not now", identity: nil).encoded)
write("fuzz-session", "message-acceptance", [1] + ExchangeMessage.decision(accept: true, reason: nil, identity: identity, commonContacts: true).encoded)
write("fuzz-session", "message-card", [1] + ExchangeMessage.card(payload: payload.json, message: "hi", presenceKey: Fuzz.peerPresenceKey).encoded)
var psi = PSI.Session(role: .initiator, mine: Fuzz.commonContacts, randomness: .fresh())
write("fuzz-session", "message-psi", [1] + ExchangeMessage.psi(psi.start()).encoded)
write("fuzz-session", "message-abort", [1] + ExchangeMessage.abort(code: "declined", reason: "not now").encoded)

// QR texts: plaintext, zkProof, compressed, chunked, a credential JWT.
let at = Date(timeIntervalSince1970: Double(Fuzz.now))
let plain = Envelope.plaintext(card: Fuzz.card, fields: [.name, .email], cardId: "CARD-1", updatedAt: at, createdAt: at, expires: nil)
let zk = try! Envelope.zkProof(card: Fuzz.card, fields: [.name, .company], keys: Fuzz.peer, createdAt: at, expires: at.addingTimeInterval(3600))
let vc = try! BusinessCardCredential.make(card: Fuzz.card, fields: [.name, .email], signer: Fuzz.peer.p256, issuedAt: at, expires: nil)
write("fuzz-qr", "plaintext", plain)
write("fuzz-qr", "zk", zk)
// Compressed.encode keeps a text that deflate does not shorten (this one): the sce1: form is made here
// so that the seed takes the decompressing path.
write("fuzz-qr", "zk-compressed", Compressed.prefix + Base64.urlEncode(try! RawDeflate.compress(Array(zk.utf8))))
write("fuzz-qr", "zk-chunks", try! Chunks.split(Array(zk.utf8), session: "00112233445566778899aabbccddeeff").joined(separator: "\n"))
write("fuzz-qr", "credential", vc)

// JWTs: the credential, and a plain ES256 token with a did:key kid.
write("fuzz-jwt", "credential", vc)
let claims = JCS.canonicalize(["iss": .string(Fuzz.peer.publicIdentity(name: nil).did), "sub": "x", "iat": .number(Double(Fuzz.now))])
write("fuzz-jwt", "es256", try! CompactJWS.sign(payload: claims, header: ["typ": "JWT"], signer: Fuzz.peer.p256))

// A route from the peer for us: the plaintext inside the sealed box (the target seals it).
let route = RouteRecord(did: Fuzz.peer.publicIdentity(name: nil).did, pubKey: Fuzz.peer.x25519.publicKey, signPubKey: Fuzz.peer.ed25519.publicKey,
                        fingerprint: Fuzz.peer.publicIdentity(name: nil).fingerprint, mailboxToken: [UInt8](repeating: 4, count: 32),
                        recipient: Fuzz.me.publicIdentity(name: nil).did, issuedAt: Fuzz.now - 10, expiresAt: Fuzz.now + 3600,
                        hints: [RouteRecord.Hint(host: "192.0.2.1", port: 7447)])
let sealed = SealedRoute.seal(route, signer: Fuzz.peer.ed25519, to: Fuzz.me.x25519.publicKey)
write("fuzz-route", "inner", [0] + (try! SealedBox.open(try! Base64.decode(sealed), with: Fuzz.me.x25519)))
write("fuzz-route", "sealed-text", [1] + Array(sealed.utf8))

// TXT records: a v2 node's (version, presence tag, name), and a v1 node's and malformed strings.
let tag = Presence.tag(key: Fuzz.mePresenceKey, nonce: [UInt8](repeating: 1, count: Presence.nonceByteCount))
write("fuzz-txt", "full", Fuzz.join(TXTRecord(tag: tag, name: "Ada Lovelace").entries))
write("fuzz-txt", "odd", Fuzz.join([Array("v=1".utf8), Array("fp=0123456789abcdef".utf8), Array("fp".utf8), Array("=x".utf8), Array("name=".utf8),
                                    Array("T=\(tag.uppercased())".utf8)]))
print("seeds written to \(root)/")
