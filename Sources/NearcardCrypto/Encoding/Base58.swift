/// Base58btc (the Bitcoin alphabet), as multibase `z` uses it.
public enum Base58 {
    private static let alphabet = Array("123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz".utf8)
    private static let table: [UInt8] = {
        var t = [UInt8](repeating: 0xFF, count: 256)
        for (i, c) in alphabet.enumerated() { t[Int(c)] = UInt8(i) }
        return t
    }()

    /// The longest text `decode` accepts: did:key values are under 200 characters; this bounds the
    /// quadratic conversion against hostile input.
    public static let maximumEncodedLength = 1024

    public static func encode(_ bytes: [UInt8]) -> String {
        let zeros = bytes.prefix { $0 == 0 }.count
        var digits = [UInt8]() // base-58 digits, little-endian
        digits.reserveCapacity(bytes.count * 138 / 100 + 1)
        for byte in bytes[zeros...] {
            var carry = Int(byte)
            for j in 0..<digits.count {
                carry += Int(digits[j]) << 8
                digits[j] = UInt8(carry % 58)
                carry /= 58
            }
            while carry > 0 {
                digits.append(UInt8(carry % 58))
                carry /= 58
            }
        }
        let out = [UInt8](repeating: alphabet[0], count: zeros) + digits.reversed().map { alphabet[Int($0)] }
        return String(decoding: out, as: UTF8.self)
    }

    public static func decode(_ text: String) throws(CryptoError) -> [UInt8] {
        let chars = Array(text.utf8)
        guard chars.count <= maximumEncodedLength else {
            throw CryptoError(.malformedEncoding, Phrase("base58 text is longer than %1$@ characters", String(maximumEncodedLength)))
        }
        let zeros = chars.prefix { $0 == alphabet[0] }.count
        var bytes = [UInt8]() // little-endian
        for c in chars[zeros...] {
            let v = table[Int(c)]
            guard v != 0xFF else {
                throw CryptoError(
                    .malformedEncoding, Phrase("base58 text contains '%1$@', which is not in the base58btc alphabet", String(Character(Unicode.Scalar(c)))))
            }
            var carry = Int(v)
            for j in 0..<bytes.count {
                carry += Int(bytes[j]) * 58
                bytes[j] = UInt8(carry & 0xFF)
                carry >>= 8
            }
            while carry > 0 {
                bytes.append(UInt8(carry & 0xFF))
                carry >>= 8
            }
        }
        return [UInt8](repeating: 0, count: zeros) + bytes.reversed()
    }
}

/// Multibase (only the base58btc form `z…`, which did:key requires) and the unsigned-varint
/// multicodec prefix.
public enum Multibase {
    public static func encodeBase58btc(_ bytes: [UInt8]) -> String { "z" + Base58.encode(bytes) }

    public static func decodeBase58btc(_ text: String) throws(CryptoError) -> [UInt8] {
        guard text.first == "z" else {
            throw CryptoError(.malformedEncoding, Phrase("multibase value does not start with 'z' (base58btc)"))
        }
        return try Base58.decode(String(text.dropFirst()))
    }
}

/// Unsigned LEB128 varints, as multicodec prefixes are written.
public enum Varint {
    public static func encode(_ value: UInt64) -> [UInt8] {
        var v = value
        var out = [UInt8]()
        repeat {
            var b = UInt8(v & 0x7F)
            v >>= 7
            if v != 0 { b |= 0x80 }
            out.append(b)
        } while v != 0
        return out
    }

    /// Decodes a varint at the start of `bytes`; returns the value and its length.
    /// Refuses non-minimal encodings and values over 9 bytes (the multiformats limit).
    public static func decode(_ bytes: [UInt8]) -> (value: UInt64, length: Int)? {
        var value: UInt64 = 0
        for i in 0..<min(bytes.count, 9) {
            let b = bytes[i]
            value |= UInt64(b & 0x7F) << (7 * UInt64(i))
            if b & 0x80 == 0 {
                if i > 0 && b == 0 { return nil }
                return (value, i + 1)
            }
        }
        return nil
    }
}
