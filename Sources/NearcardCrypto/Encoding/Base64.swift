/// Base64 (RFC 4648 §4, padded) and base64url (§5, unpadded, as JOSE uses it), strict on input:
/// no whitespace, no stray padding, and unused trailing bits must be zero, so each byte string
/// has exactly one accepted encoding.
public enum Base64 {
    private static let standardAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let urlAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    private static let standardTable = table(standardAlphabet)
    private static let urlTable = table(urlAlphabet)

    private static func table(_ alphabet: [UInt8]) -> [UInt8] {
        var t = [UInt8](repeating: 0xFF, count: 256)
        for (i, c) in alphabet.enumerated() { t[Int(c)] = UInt8(i) }
        return t
    }

    /// Standard alphabet with `=` padding.
    public static func encode<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        encode(Array(bytes), alphabet: standardAlphabet, pad: true)
    }

    /// URL-safe alphabet without padding (JWS, multibase `u`).
    public static func urlEncode<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        encode(Array(bytes), alphabet: urlAlphabet, pad: false)
    }

    public static func decode(_ text: String) throws(CryptoError) -> [UInt8] {
        try decode(Array(text.utf8), table: standardTable, padded: true, name: "base64")
    }

    public static func urlDecode(_ text: String) throws(CryptoError) -> [UInt8] {
        try decode(Array(text.utf8), table: urlTable, padded: false, name: "base64url")
    }

    private static func encode(_ b: [UInt8], alphabet: [UInt8], pad: Bool) -> String {
        let rest = b.count % 3
        let length = b.count / 3 * 4 + (rest == 0 ? 0 : pad ? 4 : rest + 1)
        // Written straight into the string's storage: this runs for every key, signature and token.
        return String(unsafeUninitializedCapacity: length) { out in
            alphabet.withUnsafeBufferPointer { a in
                var o = 0
                func put(_ n: UInt32, _ count: Int) {
                    for k in 0..<count { out[o + k] = a[Int(n >> UInt32(18 - 6 * k) & 63)] }
                    o += count
                }
                var i = 0
                while i + 3 <= b.count {
                    put(UInt32(b[i]) << 16 | UInt32(b[i + 1]) << 8 | UInt32(b[i + 2]), 4)
                    i += 3
                }
                if rest == 1 { put(UInt32(b[i]) << 16, 2) }
                if rest == 2 { put(UInt32(b[i]) << 16 | UInt32(b[i + 1]) << 8, 3) }
                while o < length {
                    out[o] = UInt8(ascii: "=")
                    o += 1
                }
            }
            return length
        }
    }

    private static func decode(_ text: [UInt8], table: [UInt8], padded: Bool, name: String) throws(CryptoError) -> [UInt8] {
        var chars = text[...]
        if padded {
            guard chars.count % 4 == 0 else {
                throw CryptoError(.malformedEncoding, Phrase("%1$@ text must be a multiple of 4 characters long (with = padding)", name))
            }
            while chars.last == UInt8(ascii: "=") { chars = chars.dropLast() }
            guard text.count - chars.count <= 2 else { throw CryptoError(.malformedEncoding, Phrase("%1$@ text has too much padding", name)) }
        } else if chars.contains(UInt8(ascii: "=")) {
            throw CryptoError(.malformedEncoding, Phrase("%1$@ text must not be padded with '='", name))
        }
        guard chars.count % 4 != 1 else { throw CryptoError(.malformedEncoding, Phrase("%1$@ text has an impossible length", name)) }
        var out = [UInt8]()
        out.reserveCapacity(chars.count * 3 / 4)
        var acc: UInt32 = 0
        var bits = 0
        for c in chars {
            let v = table[Int(c)]
            guard v != 0xFF else { throw CryptoError(.malformedEncoding, Phrase("%1$@ text contains a character outside its alphabet", name)) }
            acc = acc << 6 | UInt32(v)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: acc >> UInt32(bits)))
            }
        }
        guard acc & ((1 << UInt32(bits)) - 1) == 0 else {
            throw CryptoError(.malformedEncoding, Phrase("%1$@ text is not canonical (its unused trailing bits are not zero)", name))
        }
        return out
    }
}

/// Lower-case hexadecimal.
public enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    public static func encode<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    public static func decode(_ text: String) throws(CryptoError) -> [UInt8] {
        let chars = Array(text.utf8)
        guard chars.count % 2 == 0 else { throw CryptoError(.malformedEncoding, Phrase("hex text has an odd number of digits")) }
        func value(_ c: UInt8) throws(CryptoError) -> UInt8 {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
            default: throw CryptoError(.malformedEncoding, Phrase("hex text contains a non-hex character"))
            }
        }
        var out = [UInt8]()
        out.reserveCapacity(chars.count / 2)
        var i = 0
        while i < chars.count {
            out.append(try value(chars[i]) << 4 | value(chars[i + 1]))
            i += 2
        }
        return out
    }
}
