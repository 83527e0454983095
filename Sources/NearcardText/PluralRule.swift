/// A catalog's `Plural-Forms` (`nplurals=3; plural=(n==1 ? 0 : n%10>=2 && … ? 1 : 2);`): which of a
/// message's forms a number takes. The expression is C's, over `n`; it is parsed once, never run as code.
public struct PluralRule: Sendable {
    public let count: Int
    let expression: Node

    indirect enum Node: Sendable {
        case n
        case number(Int)
        case not(Node)
        case binary(String, Node, Node)
        case choice(Node, Node, Node)
    }

    /// English's rule: two forms, the second for every n but 1.
    public static let germanic = PluralRule(count: 2, expression: .binary("!=", .n, .number(1)))

    init(count: Int, expression: Node) {
        self.count = count
        self.expression = expression
    }

    /// The rule a catalog header states; a header without one has English's.
    public init(header: String) throws(MOCatalog.Malformed) {
        guard let line = header.split(separator: "\n").first(where: { $0.lowercased().hasPrefix("plural-forms:") }) else {
            self = .germanic
            return
        }
        let spec = line.dropFirst("plural-forms:".count)
        var count: Int?
        var expression: Node?
        for part in spec.split(separator: ";") {
            let kv = part.split(separator: "=", maxSplits: 1).map { $0.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ") }
            guard kv.count == 2 else { continue }
            if kv[0] == "nplurals" { count = Int(kv[1]) }
            if kv[0] == "plural" {
                var parser = Parser(Array(kv[1].utf8))
                expression = try parser.parse()
            }
        }
        guard let count, (1...6).contains(count), let expression else { throw MOCatalog.Malformed(why: "a Plural-Forms header Nearcard cannot read: \(spec)") }
        self.count = count
        self.expression = expression
    }

    /// The index of the form `n` takes (never past the last form).
    public func form(for n: Int) -> Int {
        let i = Self.evaluate(expression, n)
        return i < 0 || i >= count ? 0 : i
    }

    static func evaluate(_ node: Node, _ n: Int) -> Int {
        switch node {
        case .n: return n
        case .number(let v): return v
        case .not(let x): return evaluate(x, n) == 0 ? 1 : 0
        case .choice(let c, let a, let b): return evaluate(c, n) != 0 ? evaluate(a, n) : evaluate(b, n)
        case .binary(let op, let l, let r):
            let a = evaluate(l, n)
            if op == "&&" { return a != 0 && evaluate(r, n) != 0 ? 1 : 0 }
            if op == "||" { return a != 0 || evaluate(r, n) != 0 ? 1 : 0 }
            let b = evaluate(r, n)
            switch op {
            case "==": return a == b ? 1 : 0
            case "!=": return a != b ? 1 : 0
            case "<": return a < b ? 1 : 0
            case "<=": return a <= b ? 1 : 0
            case ">": return a > b ? 1 : 0
            case ">=": return a >= b ? 1 : 0
            case "+": return a &+ b
            case "-": return a &- b
            case "*": return a &* b
            case "/": return b == 0 ? 0 : a / b
            case "%": return b == 0 ? 0 : a % b
            default: return 0
            }
        }
    }

    /// Recursive descent over C's precedence: ?: , ||, &&, equality, relational, additive, multiplicative, unary.
    struct Parser {
        let s: [UInt8]
        var i = 0
        var depth = 0
        init(_ s: [UInt8]) { self.s = s }

        mutating func parse() throws(MOCatalog.Malformed) -> Node {
            let e = try ternary()
            skip()
            guard i == s.count else { throw MOCatalog.Malformed(why: "an unreadable plural expression") }
            return e
        }
        mutating func skip() { while i < s.count, s[i] == 32 || s[i] == 9 { i += 1 } }
        mutating func eat(_ token: String) -> Bool {
            skip()
            let t = Array(token.utf8)
            guard i + t.count <= s.count, Array(s[i..<i + t.count]) == t else { return false }
            // "<" is not the start of "<=", "!" not of "!=", "=" never alone.
            if t.count == 1, i + 1 < s.count, s[i + 1] == UInt8(ascii: "="), "<>!".utf8.contains(t[0]) { return false }
            i += t.count
            return true
        }
        mutating func ternary() throws(MOCatalog.Malformed) -> Node {
            depth += 1
            defer { depth -= 1 }
            guard depth < 64 else { throw MOCatalog.Malformed(why: "a plural expression nested too deep") }
            let c = try binary(0)
            guard eat("?") else { return c }
            let a = try ternary()
            guard eat(":") else { throw MOCatalog.Malformed(why: "a plural expression's ?: has no :") }
            return .choice(c, a, try ternary())
        }
        static let levels: [[String]] = [["||"], ["&&"], ["==", "!="], ["<=", ">=", "<", ">"], ["+", "-"], ["*", "/", "%"]]
        mutating func binary(_ level: Int) throws(MOCatalog.Malformed) -> Node {
            guard level < Self.levels.count else { return try unary() }
            var left = try binary(level + 1)
            while let op = Self.levels[level].first(where: { eat($0) }) { left = .binary(op, left, try binary(level + 1)) }
            return left
        }
        mutating func unary() throws(MOCatalog.Malformed) -> Node {
            if eat("!") { return .not(try unary()) }
            if eat("(") {
                let e = try ternary()
                guard eat(")") else { throw MOCatalog.Malformed(why: "a plural expression's ( is not closed") }
                return e
            }
            skip()
            if i < s.count, s[i] == UInt8(ascii: "n") {
                i += 1
                return .n
            }
            var v = 0
            let start = i
            while i < s.count, (48...57).contains(s[i]), v < 1_000_000 {
                v = v * 10 + Int(s[i] - 48)
                i += 1
            }
            guard i > start else { throw MOCatalog.Malformed(why: "an unreadable plural expression") }
            return .number(v)
        }
    }
}
