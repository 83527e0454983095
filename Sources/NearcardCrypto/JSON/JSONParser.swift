/// A strict RFC 8259 parser with limits, for text from untrusted peers:
/// - duplicate object keys are refused (two parsers must never disagree on a signed value);
/// - lone surrogates, control characters in strings, leading zeros, NaN/Infinity are refused;
/// - nesting depth and input size are bounded.
/// Errors say where (line:column) and what was expected.
public struct JSONParser {
    /// Deepest nesting accepted. Nearcard's own documents nest fewer than 10 levels.
    public static let defaultMaximumDepth = 64
    /// Largest input accepted by default (1 MiB); callers with tighter limits pass their own.
    public static let defaultMaximumLength = 1 << 20

    public var maximumDepth = JSONParser.defaultMaximumDepth
    public var maximumLength = JSONParser.defaultMaximumLength

    public init(maximumDepth: Int = JSONParser.defaultMaximumDepth, maximumLength: Int = JSONParser.defaultMaximumLength) {
        self.maximumDepth = maximumDepth
        self.maximumLength = maximumLength
    }

    public static func parse(_ text: String) throws(CryptoError) -> JSONValue {
        try JSONParser().parse(Array(text.utf8))
    }

    public static func parse(_ bytes: [UInt8]) throws(CryptoError) -> JSONValue {
        try JSONParser().parse(bytes)
    }

    /// Parses one JSON value surrounded by optional whitespace.
    public func parse(_ bytes: [UInt8]) throws(CryptoError) -> JSONValue {
        guard bytes.count <= maximumLength else {
            throw CryptoError(.malformedJSON, Phrase("JSON text is %1$@ bytes, over the limit of %2$@", String(bytes.count), String(maximumLength)))
        }
        var state = State(bytes: bytes, maximumDepth: maximumDepth)
        state.skipWhitespace()
        let value = try state.parseValue(depth: 0)
        state.skipWhitespace()
        guard state.i == bytes.count else { throw state.error(Phrase("unexpected text after the JSON value")) }
        return value
    }

    private struct State {
        let bytes: [UInt8]
        let maximumDepth: Int
        var i = 0

        init(bytes: [UInt8], maximumDepth: Int) {
            self.bytes = bytes
            self.maximumDepth = maximumDepth
        }

        func error(_ what: Phrase) -> CryptoError {
            var line = 1
            var column = 1
            for b in bytes[0..<min(i, bytes.count)] {
                if b == UInt8(ascii: "\n") {
                    line += 1
                    column = 1
                } else if b & 0xC0 != 0x80 {
                    column += 1
                }
            }
            return CryptoError(.malformedJSON, Phrase("invalid JSON at line %1$@, column %2$@: %3$@", String(line), String(column), what))
        }

        mutating func skipWhitespace() {
            while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x0A || bytes[i] == 0x0D || bytes[i] == 0x09 { i += 1 }
        }

        mutating func parseValue(depth: Int) throws(CryptoError) -> JSONValue {
            guard i < bytes.count else { throw error(Phrase("the text ends where a value was expected")) }
            switch bytes[i] {
            case UInt8(ascii: "{"): return try parseObject(depth: depth + 1)
            case UInt8(ascii: "["): return try parseArray(depth: depth + 1)
            case UInt8(ascii: "\""): return .string(try parseString())
            case UInt8(ascii: "t"):
                try literal("true")
                return .bool(true)
            case UInt8(ascii: "f"):
                try literal("false")
                return .bool(false)
            case UInt8(ascii: "n"):
                try literal("null")
                return .null
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
            default: throw error(Phrase("expected a value (object, array, string, number, true, false or null)"))
            }
        }

        mutating func literal(_ word: StaticString) throws(CryptoError) {
            let w = UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
            guard i + w.count <= bytes.count, bytes[i..<(i + w.count)].elementsEqual(w) else { throw error(Phrase("expected '%1$@'", "\(word)")) }
            i += w.count
        }

        mutating func parseObject(depth: Int) throws(CryptoError) -> JSONValue {
            guard depth <= maximumDepth else { throw error(Phrase("nesting deeper than %1$@ levels", String(maximumDepth))) }
            i += 1
            var members: [(key: String, value: JSONValue)] = []
            // Duplicate names: a scan of the few members most objects have, a set once there are more.
            var seen: Set<[UInt8]>?
            skipWhitespace()
            if i < bytes.count, bytes[i] == UInt8(ascii: "}") {
                i += 1
                return .object(JSONObject())
            }
            while true {
                skipWhitespace()
                guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else { throw error(Phrase("expected a member name in double quotes")) }
                let keyStart = i
                let key = try parseString()
                let duplicate: Bool
                if seen == nil, members.count < 16 {
                    duplicate = members.contains { JSONObject.sameKey($0.key, key) }
                } else {
                    if seen == nil { seen = Set(members.map { Array($0.key.utf8) }) }
                    duplicate = !seen!.insert(Array(key.utf8)).inserted
                }
                if duplicate {
                    i = keyStart
                    throw error(Phrase("duplicate member name \"%1$@\"", key))
                }
                skipWhitespace()
                guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { throw error(Phrase("expected ':' after a member name")) }
                i += 1
                skipWhitespace()
                members.append((key, try parseValue(depth: depth)))
                skipWhitespace()
                guard i < bytes.count else { throw error(Phrase("the text ends inside an object")) }
                if bytes[i] == UInt8(ascii: ",") {
                    i += 1
                    continue
                }
                if bytes[i] == UInt8(ascii: "}") {
                    i += 1
                    return .object(JSONObject(uniqueMembers: members))
                }
                throw error(Phrase("expected ',' or '}' in an object"))
            }
        }

        mutating func parseArray(depth: Int) throws(CryptoError) -> JSONValue {
            guard depth <= maximumDepth else { throw error(Phrase("nesting deeper than %1$@ levels", String(maximumDepth))) }
            i += 1
            var array: [JSONValue] = []
            skipWhitespace()
            if i < bytes.count, bytes[i] == UInt8(ascii: "]") {
                i += 1
                return .array(array)
            }
            while true {
                skipWhitespace()
                array.append(try parseValue(depth: depth))
                skipWhitespace()
                guard i < bytes.count else { throw error(Phrase("the text ends inside an array")) }
                if bytes[i] == UInt8(ascii: ",") {
                    i += 1
                    continue
                }
                if bytes[i] == UInt8(ascii: "]") {
                    i += 1
                    return .array(array)
                }
                throw error(Phrase("expected ',' or ']' in an array"))
            }
        }

        mutating func parseNumber() throws(CryptoError) -> Double {
            let start = i
            if bytes[i] == UInt8(ascii: "-") { i += 1 }
            func isDigit(_ b: UInt8) -> Bool { b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9") }
            guard i < bytes.count, isDigit(bytes[i]) else { throw error(Phrase("expected a digit")) }
            if bytes[i] == UInt8(ascii: "0") {
                i += 1
                if i < bytes.count, isDigit(bytes[i]) { throw error(Phrase("numbers must not have leading zeros")) }
            } else {
                while i < bytes.count, isDigit(bytes[i]) { i += 1 }
            }
            if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
                i += 1
                guard i < bytes.count, isDigit(bytes[i]) else { throw error(Phrase("expected a digit after '.'")) }
                while i < bytes.count, isDigit(bytes[i]) { i += 1 }
            }
            if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
                i += 1
                if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
                guard i < bytes.count, isDigit(bytes[i]) else { throw error(Phrase("expected a digit in the exponent")) }
                while i < bytes.count, isDigit(bytes[i]) { i += 1 }
            }
            let text = String(decoding: bytes[start..<i], as: UTF8.self)
            guard let value = Double(text), value.isFinite else {
                i = start
                throw error(Phrase("the number %1$@ is outside the range of IEEE 754 doubles", text))
            }
            return value
        }

        mutating func parseString() throws(CryptoError) -> String {
            i += 1 // opening quote
            var scalars = String.UnicodeScalarView()
            var runStart = i
            func flushRun(_ s: inout String.UnicodeScalarView, _ from: Int, _ to: Int, _ bytes: [UInt8]) {
                if from < to { s.append(contentsOf: String(decoding: bytes[from..<to], as: UTF8.self).unicodeScalars) }
            }
            while true {
                guard i < bytes.count else { throw error(Phrase("the text ends inside a string")) }
                let b = bytes[i]
                if b == UInt8(ascii: "\"") {
                    if scalars.isEmpty {
                        // No escape before the run (the usual case): the bytes are the string.
                        let s = String(decoding: bytes[runStart..<i], as: UTF8.self)
                        i += 1
                        return s
                    }
                    flushRun(&scalars, runStart, i, bytes)
                    i += 1
                    return String(scalars)
                }
                if b < 0x20 { throw error(Phrase("control character U+00%1$@ must be escaped in a string", Hex.encode([b]).uppercased())) }
                if b == UInt8(ascii: "\\") {
                    flushRun(&scalars, runStart, i, bytes)
                    i += 1
                    scalars.append(try parseEscape())
                    runStart = i
                    continue
                }
                if b < 0x80 {
                    i += 1
                    continue
                }
                // Validate one UTF-8 sequence (no overlongs, no surrogates, ≤ U+10FFFF).
                let length: Int
                let minimum: UInt32
                var value: UInt32
                switch b {
                case 0xC2...0xDF:
                    length = 2
                    minimum = 0x80
                    value = UInt32(b & 0x1F)
                case 0xE0...0xEF:
                    length = 3
                    minimum = 0x800
                    value = UInt32(b & 0x0F)
                case 0xF0...0xF4:
                    length = 4
                    minimum = 0x10000
                    value = UInt32(b & 0x07)
                default: throw error(Phrase("invalid UTF-8 byte 0x%1$@", Hex.encode([b])))
                }
                guard i + length <= bytes.count else { throw error(Phrase("truncated UTF-8 sequence")) }
                for k in 1..<length {
                    let c = bytes[i + k]
                    guard c & 0xC0 == 0x80 else { throw error(Phrase("invalid UTF-8 continuation byte")) }
                    value = value << 6 | UInt32(c & 0x3F)
                }
                guard value >= minimum, value <= 0x10FFFF, !(0xD800...0xDFFF).contains(value) else {
                    throw error(Phrase("invalid UTF-8 sequence (overlong, surrogate or beyond U+10FFFF)"))
                }
                i += length
            }
        }

        mutating func parseEscape() throws(CryptoError) -> Unicode.Scalar {
            guard i < bytes.count else { throw error(Phrase("the text ends inside an escape")) }
            let c = bytes[i]
            i += 1
            switch c {
            case UInt8(ascii: "\""): return "\""
            case UInt8(ascii: "\\"): return "\\"
            case UInt8(ascii: "/"): return "/"
            case UInt8(ascii: "b"): return "\u{08}"
            case UInt8(ascii: "f"): return "\u{0C}"
            case UInt8(ascii: "n"): return "\n"
            case UInt8(ascii: "r"): return "\r"
            case UInt8(ascii: "t"): return "\t"
            case UInt8(ascii: "u"):
                let high = try hex4()
                if (0xD800...0xDBFF).contains(high) {
                    guard i + 1 < bytes.count, bytes[i] == UInt8(ascii: "\\"), bytes[i + 1] == UInt8(ascii: "u") else {
                        throw error(Phrase("a high surrogate escape must be followed by a low surrogate escape"))
                    }
                    i += 2
                    let low = try hex4()
                    guard (0xDC00...0xDFFF).contains(low) else { throw error(Phrase("a high surrogate escape must be followed by a low surrogate escape")) }
                    return Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))!
                }
                guard !(0xDC00...0xDFFF).contains(high), let scalar = Unicode.Scalar(high) else {
                    throw error(Phrase("a lone low surrogate escape is not a character"))
                }
                return scalar
            default:
                i -= 1
                throw error(Phrase("unknown escape '\\%1$@'", String(Character(Unicode.Scalar(c)))))
            }
        }

        mutating func hex4() throws(CryptoError) -> UInt32 {
            guard i + 4 <= bytes.count else { throw error(Phrase("\\u needs four hex digits")) }
            var v: UInt32 = 0
            for _ in 0..<4 {
                let c = bytes[i]
                let d: UInt32
                switch c {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): d = UInt32(c - UInt8(ascii: "0"))
                case UInt8(ascii: "a")...UInt8(ascii: "f"): d = UInt32(c - UInt8(ascii: "a") + 10)
                case UInt8(ascii: "A")...UInt8(ascii: "F"): d = UInt32(c - UInt8(ascii: "A") + 10)
                default: throw error(Phrase("\\u needs four hex digits"))
                }
                v = v << 4 | d
                i += 1
            }
            return v
        }
    }
}
