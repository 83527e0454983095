internal import CSodium

/// Presence tags (docs/PROTOCOL.md §3): how a node tells its contacts "I am here" in DNS-SD without
/// telling anyone else anything that lasts.
///
/// Each node holds a random 16-byte *presence key* and hands it to its contacts inside the encrypted
/// exchange. Its announcement carries `t` = hex(nonce ‖ SipHash-2-4(presence key, nonce)), with a
/// fresh 8-byte nonce at every (re)publication: to a stranger it is 16 random bytes; a contact
/// holding the key recomputes the MAC and recognises the node (the idea of Bluetooth LE's resolvable
/// private addresses). A tag proves nothing about identity (anyone can replay one): a dial to the
/// contact it names must still be answered by that contact's DID.
public enum Presence {
    /// The presence key: 16 bytes, SipHash-2-4's key (`crypto_shorthash_siphash24_KEYBYTES`).
    public static let keyByteCount = 16
    public static let nonceByteCount = 8
    /// SipHash-2-4's output (`crypto_shorthash_siphash24_BYTES`).
    public static let macByteCount = 8
    /// The tag as TXT `t` carries it: 32 lower-case hex digits.
    public static let tagLength = 2 * (nonceByteCount + macByteCount)

    /// A fresh presence key.
    public static func makeKey() -> [UInt8] { Sodium.randomBytes(keyByteCount) }

    /// SipHash-2-4 of `message` under a 16-byte key (`crypto_shorthash_siphash24`).
    public static func siphash24(key: [UInt8], message: [UInt8]) -> [UInt8] {
        precondition(key.count == keyByteCount, "a SipHash key is \(keyByteCount) bytes")
        Sodium.ensureInitialized()
        var out = [UInt8](repeating: 0, count: macByteCount)
        // An empty message still needs a valid pointer.
        let input = message.isEmpty ? [0] : message
        _ = out.withUnsafeMutableBufferPointer { o in
            input.withUnsafeBufferPointer { m in
                key.withUnsafeBufferPointer { k in
                    crypto_shorthash_siphash24(o.baseAddress!, m.baseAddress!, UInt64(message.count), k.baseAddress!)
                }
            }
        }
        return out
    }

    /// The tag for `key` with this nonce (8 bytes): hex(nonce ‖ SipHash-2-4(key, nonce)).
    public static func tag(key: [UInt8], nonce: [UInt8]) -> String {
        precondition(nonce.count == nonceByteCount, "a presence nonce is \(nonceByteCount) bytes")
        return Hex.encode(nonce + siphash24(key: key, message: nonce))
    }

    /// A tag with a fresh random nonce (one per publication).
    public static func makeTag(key: [UInt8]) -> String {
        tag(key: key, nonce: Sodium.randomBytes(nonceByteCount))
    }

    /// Whether `text` is a well-formed tag: exactly 32 lower-case hex digits.
    public static func isWellFormed(_ text: String) -> Bool {
        text.utf8.count == tagLength && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    /// A tag's nonce and MAC, or nil when it is not well formed.
    static func split(_ tag: String) -> (nonce: [UInt8], mac: [UInt8])? {
        guard isWellFormed(tag), let bytes = try? Hex.decode(tag) else { return nil }
        return (Array(bytes[..<nonceByteCount]), Array(bytes[nonceByteCount...]))
    }

    /// Whether `tag` was made with `key` (the MAC compared in constant time).
    public static func matches(_ tag: String, key: [UInt8]) -> Bool {
        guard key.count == keyByteCount, let (nonce, mac) = split(tag) else { return false }
        return Sodium.constantTimeEquals(siphash24(key: key, message: nonce), mac)
    }

    /// The index of the first key in `keys` that made `tag`, or nil (a stranger, or a malformed tag).
    /// Every key is tried with one SipHash of the 8-byte nonce: 1,000 contacts cost about 1,000 short
    /// hashes per announcement (no allocation per key).
    public static func resolve(_ tag: String, among keys: [[UInt8]]) -> Int? {
        guard let (nonce, mac) = split(tag) else { return nil }
        Sodium.ensureInitialized()
        var out = [UInt8](repeating: 0, count: macByteCount)
        return nonce.withUnsafeBufferPointer { n in
            mac.withUnsafeBufferPointer { m in
                out.withUnsafeMutableBufferPointer { o -> Int? in
                    for (i, key) in keys.enumerated() where key.count == keyByteCount {
                        let made = key.withUnsafeBufferPointer { k -> Bool in
                            crypto_shorthash_siphash24(o.baseAddress!, n.baseAddress!, UInt64(nonceByteCount), k.baseAddress!)
                            return sodium_memcmp(o.baseAddress!, m.baseAddress!, macByteCount) == 0
                        }
                        if made { return i }
                    }
                    return nil
                }
            }
        }
    }
}
