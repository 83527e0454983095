import NearcardCrypto

/// 8 hex digits naming a session in events and commands.
enum SessionID {
    static func make() -> String { Hex.encode(Sodium.randomBytes(4)) }
}
