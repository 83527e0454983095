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

    /// The card both sides hand their machine when it asks (`loadCard`).
    public static let localCard = LocalCard(card: card, policy: SharingPolicy(fields: [.name, .email, .company]))

    /// The responder under test, made as a listener makes it: message 1 through `SessionDispatch`, then
    /// resumed and started (fixed ephemeral key and nonces). Nil when message 1 is refused.
    public static func responder(reading message1: [UInt8]) -> (ExchangeStateMachine, [ExchangeStateMachine.Action])? {
        guard let (kind, noise) = try? SessionDispatch.readFirstMessage(message1, staticKey: me.x25519, ephemeralKey: me.x25519),
              kind == .exchange else { return nil }
        var machine = ExchangeStateMachine(resuming: noise, identity: identity(me), sasNonce: [UInt8](repeating: 3, count: SAS.nonceByteCount),
                                           mailboxToken: [UInt8](repeating: 4, count: RouteRecord.mailboxTokenByteCount))
        let actions = machine.start()
        return (machine, actions)
    }

    /// Performs what a node would for `actions`: hands over the card when asked and accepts when asked
    /// to decide. Returns the frames to send.
    @discardableResult
    public static func serve(_ machine: inout ExchangeStateMachine, _ actions: [ExchangeStateMachine.Action], message: String) -> [[UInt8]] {
        var frames: [[UInt8]] = []
        for action in actions {
            switch action {
            case .send(let f): frames.append(f)
            case .loadCard: frames += serve(&machine, machine.cardLoaded(localCard, now: now), message: message)
            case .identified: frames += serve(&machine, machine.decide(accept: true, message: message, now: now), message: message)
            case .arm, .completed, .failed: break
            }
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
