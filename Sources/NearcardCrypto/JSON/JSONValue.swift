/// A JSON value. Objects keep their members' order (for output people read) and are compared
/// by member set; canonical bytes come from `JCS`.
public enum JSONValue: Sendable, Equatable, Hashable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    public var stringValue: String? { if case .string(let s) = self { s } else { nil } }
    public var doubleValue: Double? { if case .number(let d) = self { d } else { nil } }
    public var boolValue: Bool? { if case .bool(let b) = self { b } else { nil } }
    public var arrayValue: [JSONValue]? { if case .array(let a) = self { a } else { nil } }
    public var objectValue: JSONObject? { if case .object(let o) = self { o } else { nil } }
    public var isNull: Bool { self == .null }

    /// The number as an `Int64` when it is integral and within ±2^53 (the exactly representable range).
    public var integerValue: Int64? {
        guard case .number(let d) = self, d == d.rounded(), abs(d) <= 9_007_199_254_740_992 else { return nil }
        return Int64(d)
    }

    public subscript(key: String) -> JSONValue? { objectValue?[key] }
}

/// JSON object members in insertion order. Keys are unique, compared scalar by scalar
/// (Swift's `==` on strings uses canonical equivalence, which JSON does not).
public struct JSONObject: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral {
    public private(set) var members: [(key: String, value: JSONValue)]

    public init() { members = [] }

    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        members = []
        for (k, v) in elements { self[k] = v }
    }

    public init(_ pairs: [(String, JSONValue)]) {
        members = []
        for (k, v) in pairs { self[k] = v }
    }

    /// Members already known to have distinct keys (the parser checks).
    init(uniqueMembers: [(key: String, value: JSONValue)]) { members = uniqueMembers }

    /// `body` over the UTF-8 bytes of both strings; nil when either has no contiguous storage (or
    /// `body` leaves the answer open).
    static func withUTF8<T>(_ a: String, _ b: String, _ body: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) -> T?) -> T? {
        let result: T?? = a.utf8.withContiguousStorageIfAvailable { x in b.utf8.withContiguousStorageIfAvailable { y in body(x, y) } ?? nil }
        return result ?? nil
    }

    static func sameKey(_ a: String, _ b: String) -> Bool {
        guard a.utf8.count == b.utf8.count else { return false }
        return withUTF8(a, b) { x, y in x.elementsEqual(y) } ?? a.utf8.elementsEqual(b.utf8)
    }

    public subscript(key: String) -> JSONValue? {
        get { members.first { Self.sameKey($0.key, key) }?.value }
        set {
            if let i = members.firstIndex(where: { Self.sameKey($0.key, key) }) {
                if let newValue { members[i].value = newValue } else { members.remove(at: i) }
            } else if let newValue {
                members.append((key, newValue))
            }
        }
    }

    public var keys: [String] { members.map(\.key) }
    public var count: Int { members.count }
    public var isEmpty: Bool { members.isEmpty }

    public func makeIterator() -> IndexingIterator<[(key: String, value: JSONValue)]> { members.makeIterator() }

    /// Members sorted by key (UTF-16 code units, as RFC 8785 orders them).
    public var sortedMembers: [(key: String, value: JSONValue)] {
        members.sorted { Self.keyPrecedes($0.key, $1.key) }
    }

    /// RFC 8785 order: by UTF-16 code units. UTF-8 bytes order the same way up to the first byte
    /// that differs; when both of those bytes are ASCII they decide, otherwise (U+E000…U+FFFF and
    /// supplementary characters order differently in UTF-16) the UTF-16 views are compared.
    static func keyPrecedes(_ a: String, _ b: String) -> Bool {
        let byBytes: Bool? = withUTF8(a, b) { x, y in
            for i in 0..<Swift.min(x.count, y.count) where x[i] != y[i] {
                return (x[i] | y[i]) < 0x80 ? x[i] < y[i] : nil
            }
            return x.count < y.count
        }
        return byBytes ?? a.utf16.lexicographicallyPrecedes(b.utf16)
    }

    public static func == (a: JSONObject, b: JSONObject) -> Bool {
        guard a.count == b.count else { return false }
        for (k, v) in a.members {
            guard let other = b[k], other == v else { return false }
        }
        return true
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(count)
        for (k, _) in sortedMembers { hasher.combine(Array(k.utf8)) }
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int) { self = .number(Double(value)) }
    public init(floatLiteral value: Double) { self = .number(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) { self = .object(JSONObject(elements.map { ($0.0, $0.1) })) }
    public init(nilLiteral: ()) { self = .null }
}
