@_exported import NearcardCrypto
@_exported import NearcardDiscovery
@_exported import NearcardModel
@_exported import NearcardProtocol
@_exported import NearcardQR

/// What every fuzz target shares: fixed keys (so a crash reproduces from its input alone), a fixed
/// clock, and a way to cut one input into several messages.
public enum Fuzz {
    public static let now: Int64 = 1_790_000_000

    /// Keys from fixed seeds: `me` is the side under test, `peer` the other side.
    public static let me = keys(1)
    public static let peer = keys(2)

    static func keys(_ n: UInt8) -> IdentityKeys {
        let seed = [UInt8](repeating: n, count: 31) + [7]
        return IdentityKeys(p256: try! P256.PrivateKey(rawRepresentation: SecureBytes(seed)),
                            x25519: try! X25519.PrivateKey(secret: SecureBytes(seed.map { $0 ^ 0x5A })),
                            ed25519: try! Ed25519.PrivateKey(seed: SecureBytes(seed.map { $0 ^ 0xA5 })))
    }

    public static let card = Card(name: "Ada Lovelace", email: "ada@example.org", company: "Analytical Engines", title: "Programmer")

    public static func identity(_ keys: IdentityKeys) -> LocalIdentity { LocalIdentity(keys: keys, name: "Ada") }

    /// Each side's presence key (fixed): the responder's seals its identity for a recall (§6.2).
    public static let mePresenceKey = [UInt8](repeating: 0x31, count: ProtocolLimits.presenceKeyByteCount)
    public static let peerPresenceKey = [UInt8](repeating: 0x32, count: ProtocolLimits.presenceKeyByteCount)

    /// The keys the responder under test uses for one session (fresh per session in the node, fixed
    /// here): the Noise ephemeral key and the exchange's own static key (§5).
    public static let responderEphemeral = fixedX25519(9)
    public static let responderSessionKey = fixedX25519(10)
    /// The honest initiator's (make-seeds).
    public static let initiatorEphemeral = fixedX25519(11)
    public static let initiatorSessionKey = fixedX25519(12)

    public static func fixedX25519(_ n: UInt8) -> X25519.PrivateKey {
        try! X25519.PrivateKey(secret: SecureBytes([UInt8](repeating: n, count: 32)))
    }

    /// Contacts the responder's card offers to the common-contacts step (§22) when it is on: the
    /// initiator among them (a DID the step leaves out) and two others.
    public static let commonContacts = [peer.publicIdentity(name: nil).did, keys(3).publicIdentity(name: nil).did,
                                        keys(4).publicIdentity(name: nil).did]

    /// The card a side hands its machine when it asks (`loadCard`), with its presence key and, when
    /// `commonContacts` is set, the private common-contacts step turned on.
    public static func localCard(presenceKey: [UInt8], commonContacts: [String]? = nil) -> LocalCard {
        LocalCard(card: card, policy: SharingPolicy(fields: [.name, .email, .company]), presenceKey: presenceKey,
                  routeHints: [RouteRecord.Hint(host: "192.0.2.1", port: 7447)], commonContacts: commonContacts)
    }

    /// The responder under test, made as a listener makes it: message 1 through `SessionDispatch` (fixed
    /// ephemeral, session and long-term keys), then resumed and started (fixed nonce and token). Nil when
    /// message 1 is refused or opens a mail session (not an exchange).
    public static func responder(reading message1: [UInt8]) -> (ExchangeStateMachine, [ExchangeStateMachine.Action])? {
        guard case .exchange(let noise)? = try? SessionDispatch.readFirstMessage(message1, ephemeralKey: responderEphemeral,
                                                                               sessionKey: responderSessionKey, longTermKey: me.x25519) else { return nil }
        var machine = ExchangeStateMachine(resuming: noise, identity: identity(me), presenceKey: mePresenceKey,
                                           sasNonce: [UInt8](repeating: 3, count: SAS.nonceByteCount),
                                           mailboxToken: [UInt8](repeating: 4, count: RouteRecord.mailboxTokenByteCount),
                                           sealKey: X25519.PrivateKey(), psiRandomness: .fresh())
        let actions = machine.start()
        return (machine, actions)
    }

    /// Performs what a node would for `actions` (as the tests' ExchangeHarness does): hands over `card`
    /// when asked (`loadCard`), makes the card ahead when asked (`prepareCard`), accepts when the peer is
    /// identified, and answers a commit as a store that wrote the contact (`committed()`). Returns the
    /// frames to send, in order; `observe` sees every action, those the answers bring included.
    @discardableResult
    public static func serve(_ machine: inout ExchangeStateMachine, _ actions: [ExchangeStateMachine.Action], card: LocalCard,
                             message: String, observe: (ExchangeStateMachine.Action) -> Void = { _ in }) -> [[UInt8]] {
        var frames: [[UInt8]] = []
        for action in actions {
            observe(action)
            let answer: [ExchangeStateMachine.Action]
            switch action {
            case .send(let f): frames.append(f); continue
            case .loadCard: answer = machine.cardLoaded(card, now: now)
            case .prepareCard: answer = machine.prepareCard(now: now)
            case .identified: answer = machine.decide(accept: true, message: message, now: now)
            case .commit: answer = machine.committed()
            case .arm, .commonContactsStarted, .sasKnown, .confirmed, .unconfirmed, .finished, .failed: continue
            }
            frames += serve(&machine, answer, card: card, message: message, observe: observe)
        }
        return frames
    }

    /// Cuts an input into messages: each is a 2-byte big-endian length and that many bytes; what is
    /// left at the end is the last message. The seeds are written the same way (`join`).
    public static func split(_ bytes: [UInt8], limit: Int = 16) -> [[UInt8]] {
        var out: [[UInt8]] = []
        var i = 0
        while i < bytes.count && out.count < limit {
            guard i + 2 <= bytes.count else { out.append(Array(bytes[i...])); break }
            let n = Int(bytes[i]) << 8 | Int(bytes[i + 1])
            let end = min(bytes.count, i + 2 + n)
            out.append(Array(bytes[(i + 2)..<end]))
            i = end
        }
        return out
    }

    public static func join(_ messages: [[UInt8]]) -> [UInt8] {
        messages.flatMap { [UInt8($0.count >> 8 & 0xFF), UInt8($0.count & 0xFF)] + $0 }
    }

    public static func bytes(_ data: UnsafePointer<UInt8>?, _ size: Int) -> [UInt8] {
        guard let data, size > 0 else { return [] }
        return Array(UnsafeBufferPointer(start: data, count: size))
    }
}
