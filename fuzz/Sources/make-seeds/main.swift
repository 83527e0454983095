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

// An honest initiator against the targets' responder: the Noise messages, and every frame of a
// whole exchange (the responder is rebuilt exactly as fuzz-session builds it).
let initiatorEphemeral = try! X25519.PrivateKey(secret: SecureBytes([UInt8](repeating: 11, count: 32)))
do {
    var i = NoiseXXHandshake(role: .initiator, prologue: SessionKind.prologue, staticKey: Fuzz.peer.x25519, ephemeralKey: initiatorEphemeral)
    var r = NoiseXXHandshake(role: .responder, prologue: SessionKind.prologue, staticKey: Fuzz.me.x25519,
                             ephemeralKey: try! X25519.PrivateKey(secret: SecureBytes([UInt8](repeating: 9, count: 32))))
    let m1 = try! i.writeMessage()
    _ = try! r.readMessage(m1)
    _ = try! i.readMessage(try! r.writeMessage())
    let m3 = try! i.writeMessage(payload: Array("payload".utf8))
    write("fuzz-noise", "xx-handshake", Fuzz.join([m1, m3]))
}
do {
    var initiator = ExchangeStateMachine(initiatorFor: Fuzz.identity(Fuzz.peer), ephemeralKey: initiatorEphemeral,
                                         sasNonce: [UInt8](repeating: 5, count: SAS.nonceByteCount),
                                         mailboxToken: [UInt8](repeating: 6, count: RouteRecord.mailboxTokenByteCount))
    var sent: [[UInt8]] = []
    var toResponder = Fuzz.serve(&initiator, initiator.start(), message: "hello")
    sent += toResponder
    // The responder is made exactly as fuzz-session makes it, from message 1.
    var (responder, opening) = Fuzz.responder(reading: toResponder.removeFirst())!
    var toInitiator = Fuzz.serve(&responder, opening, message: "hi")
    var rounds = 0
    while (!toResponder.isEmpty || !toInitiator.isEmpty) && rounds < 100 {
        rounds += 1
        if !toResponder.isEmpty { toInitiator += Fuzz.serve(&responder, responder.receive(toResponder.removeFirst(), now: Fuzz.now), message: "hi") }
        if !toInitiator.isEmpty {
            let out = Fuzz.serve(&initiator, initiator.receive(toInitiator.removeFirst(), now: Fuzz.now), message: "hello")
            toResponder += out
            sent += out
        }
    }
    write("fuzz-session", "whole-exchange", [0] + Fuzz.join(sent))
    write("fuzz-session", "handshake-only", [0] + Fuzz.join(Array(sent.prefix(2))))
}

// A valid card from the peer to us, bound to the context fuzz-payload checks.
let payload = try! ProximityPayload.make(card: Fuzz.card, policy: SharingPolicy(fields: [.name, .email, .company]), keys: Fuzz.peer,
                                         receiver: Fuzz.me.publicIdentity(name: nil).did, sessionBinding: [UInt8](repeating: 1, count: 32),
                                         ephemeralMessage: "hi", sealedRoute: nil, now: Fuzz.now)
write("fuzz-payload", "valid-card", JCS.canonicalize(payload.json))
write("fuzz-session", "message-decision", [1] + ExchangeMessage.decision(accept: false, reason: "not now").encoded)
write("fuzz-session", "message-card", [1] + ExchangeMessage.card(payload: payload.json, message: "hi").encoded)

// QR texts: plaintext, zkProof, compressed, chunked, a credential JWT.
let at = Date(timeIntervalSince1970: Double(Fuzz.now))
let plain = Envelope.plaintext(card: Fuzz.card, fields: [.name, .email], cardId: "CARD-1", updatedAt: at, createdAt: at, expires: nil)
let zk = try! Envelope.zkProof(card: Fuzz.card, fields: [.name, .company], keys: Fuzz.peer, createdAt: at, expires: at.addingTimeInterval(3600))
let vc = try! BusinessCardCredential.make(card: Fuzz.card, fields: [.name, .email], signer: Fuzz.peer.p256, issuedAt: at, expires: nil)
write("fuzz-qr", "plaintext", plain)
write("fuzz-qr", "zk", zk)
write("fuzz-qr", "zk-compressed", try! Compressed.encode(zk))
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

// TXT records.
write("fuzz-txt", "full", Fuzz.join(TXTRecord(fingerprint: Fuzz.me.publicIdentity(name: nil).fingerprint, name: "Ada Lovelace").entries))
write("fuzz-txt", "odd", Fuzz.join([Array("v=1".utf8), Array("fp".utf8), Array("=x".utf8), Array("name=".utf8)]))
print("seeds written to \(root)/")
