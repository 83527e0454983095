/// Serialises `JSONValue`s: canonical bytes (RFC 8785, JCS) for everything that is signed or
/// hashed, and an indented form for people.
public enum JCS {
    /// The RFC 8785 canonical form: members sorted by UTF-16 code units, no whitespace,
    /// numbers as ECMAScript prints them, minimal string escaping.
    public static func canonicalize(_ value: JSONValue) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        JSONWriter.write(value, into: &out, canonical: true, indent: nil, level: 0)
        return out
    }

    /// Parses JSON text and returns its canonical form.
    public static func canonicalize(jsonText bytes: [UInt8]) throws(CryptoError) -> [UInt8] {
        canonicalize(try JSONParser.parse(bytes))
    }

    /// ECMAScript's Number::toString for a finite double (RFC 8785 §3.2.2.3).
    public static func numberString(_ d: Double) -> String { JSONWriter.ecmaScriptString(d) }
}

extension JSONValue {
    /// Compact JSON with members in their order (not canonical).
    public var compactText: String {
        var out: [UInt8] = []
        JSONWriter.write(self, into: &out, canonical: false, indent: nil, level: 0)
        return String(decoding: out, as: UTF8.self)
    }

    /// Indented JSON for people, members in their order, two spaces per level.
    public var prettyText: String {
        var out: [UInt8] = []
        JSONWriter.write(self, into: &out, canonical: false, indent: 2, level: 0)
        return String(decoding: out, as: UTF8.self)
    }

    /// The RFC 8785 canonical text.
    public var canonicalText: String { String(decoding: JCS.canonicalize(self), as: UTF8.self) }
}

enum JSONWriter {
    static func write(_ value: JSONValue, into out: inout [UInt8], canonical: Bool, indent: Int?, level: Int) {
        switch value {
        case .null: out += Array("null".utf8)
        case .bool(let b): out += Array((b ? "true" : "false").utf8)
        case .number(let d): out += Array(ecmaScriptString(d).utf8)
        case .string(let s): writeString(s, into: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (n, item) in items.enumerated() {
                if n > 0 { out.append(UInt8(ascii: ",")) }
                newline(&out, indent, level + 1)
                write(item, into: &out, canonical: canonical, indent: indent, level: level + 1)
            }
            if !items.isEmpty { newline(&out, indent, level) }
            out.append(UInt8(ascii: "]"))
        case .object(let object):
            out.append(UInt8(ascii: "{"))
            let members = canonical ? object.sortedMembers : object.members
            for (n, member) in members.enumerated() {
                if n > 0 { out.append(UInt8(ascii: ",")) }
                newline(&out, indent, level + 1)
                writeString(member.key, into: &out)
                out.append(UInt8(ascii: ":"))
                if indent != nil { out.append(UInt8(ascii: " ")) }
                write(member.value, into: &out, canonical: canonical, indent: indent, level: level + 1)
            }
            if !members.isEmpty { newline(&out, indent, level) }
            out.append(UInt8(ascii: "}"))
        }
    }

    private static func newline(_ out: inout [UInt8], _ indent: Int?, _ level: Int) {
        guard let indent else { return }
        out.append(UInt8(ascii: "\n"))
        out += [UInt8](repeating: UInt8(ascii: " "), count: indent * level)
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// RFC 8785 §3.2.2.2: escape `"` and `\`, the two-letter escapes for \b \t \n \f \r,
    /// `\u00xx` (lower-case) for other controls, everything else as UTF-8.
    static func writeString(_ s: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var s = s
        s.withUTF8 { bytes in
            // Copy runs that need no escape in one go; almost every string is one run.
            var start = 0
            for (i, b) in bytes.enumerated() where b < 0x20 || b == UInt8(ascii: "\"") || b == UInt8(ascii: "\\") {
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<i]))
                start = i + 1
                switch b {
                case UInt8(ascii: "\""): out += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
                case UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
                case 0x08: out += [UInt8(ascii: "\\"), UInt8(ascii: "b")]
                case 0x09: out += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
                case 0x0A: out += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
                case 0x0C: out += [UInt8(ascii: "\\"), UInt8(ascii: "f")]
                case 0x0D: out += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
                default: out += [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hexDigits[Int(b >> 4)], hexDigits[Int(b & 15)]]
                }
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start...]))
        }
        out.append(UInt8(ascii: "\""))
    }

    /// ECMAScript Number::toString (ECMA-262 §6.1.6.1.20) from the shortest round-trip digits,
    /// which Swift's `description` also produces.
    static func ecmaScriptString(_ d: Double) -> String {
        precondition(d.isFinite, "JSON cannot carry NaN or Infinity")
        if d == 0 { return "0" }
        if d < 0 { return "-" + ecmaScriptString(-d) }
        if d < 9_007_199_254_740_992, d == d.rounded() { return String(Int64(d)) }
        // Split Swift's shortest form ("1.2345e-07", "333333333.3333333", "1e+30") into digits and exponent.
        let text = d.description
        var mantissa = Substring(text)
        var exponent = 0
        if let e = text.firstIndex(where: { $0 == "e" || $0 == "E" }) {
            mantissa = text[..<e]
            exponent = Int(text[text.index(after: e)...])!
        }
        var digits = ""
        var pointPosition = mantissa.count
        if let dot = mantissa.firstIndex(of: ".") {
            pointPosition = mantissa.distance(from: mantissa.startIndex, to: dot)
            digits = String(mantissa[..<dot]) + String(mantissa[mantissa.index(after: dot)...])
        } else {
            digits = String(mantissa)
        }
        // Normalise to 0.d1d2…dk × 10^n (ECMAScript's k and n).
        var n = pointPosition + exponent
        while digits.hasPrefix("0") {
            digits.removeFirst()
            n -= 1
        }
        while digits.hasSuffix("0") { digits.removeLast() }
        let k = digits.count
        if k <= n && n <= 21 {
            return digits + String(repeating: "0", count: n - k)
        }
        if 0 < n && n <= 21 {
            let i = digits.index(digits.startIndex, offsetBy: n)
            return String(digits[..<i]) + "." + String(digits[i...])
        }
        if -6 < n && n <= 0 {
            return "0." + String(repeating: "0", count: -n) + digits
        }
        let e = n - 1
        let sign = e < 0 ? "-" : "+"
        let first = String(digits.first!)
        let rest = digits.dropFirst()
        return first + (rest.isEmpty ? "" : "." + rest) + "e" + sign + String(abs(e))
    }
}
