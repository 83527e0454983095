import NearcardCrypto
import Synchronization

/// Why a Semaphore proof was refused.
public enum SemaphoreFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// Not the export JSON (or the iOS wrapper), or a member missing or of the wrong type.
    case malformed(String)
    /// A number outside its field (≥ p for coordinates, ≥ r for the root and nullifier, ≥ 2^256).
    case outOfRange(String)
    /// A proof point not on its curve, or B outside G2's prime-order subgroup.
    case notOnCurve(String)
    case unsupportedDepth(Int)
    /// Well formed, but the pairing equation does not hold.
    case invalid

    public var description: String {
        switch self {
        case .malformed(let w): "the Semaphore proof is malformed: \(w)"
        case .outOfRange(let w): "the Semaphore proof has an out-of-range value: \(w)"
        case .notOnCurve(let w): "the Semaphore proof has an invalid point: \(w)"
        case .unsupportedDepth(let d): "Semaphore trees of depth \(d) are not supported (1…32)"
        case .invalid: "the Semaphore proof does not verify"
        }
    }
}

/// A Semaphore v4 proof: `{merkle_tree_depth, merkle_tree_root, message, nullifier, scope, points[8]}`
/// with decimal strings; points are [a.x, a.y, b.x[1], b.x[0], b.y[1], b.y[0], c.x, c.y].
public struct SemaphoreProof: Sendable, Equatable {
    public let depth: Int
    public let root: UInt256
    public let nullifier: UInt256
    public let message: UInt256
    public let scope: UInt256
    public let proof: Groth16.Proof

    /// The largest proof text accepted.
    public static let maximumLength = 16 * 1024

    /// Parses the export JSON, or the iOS app's wrapper `{"version":1,"semaphore_proof":"<JSON>",…}`.
    public init(json text: String) throws(SemaphoreFailure) {
        self = try Self.parse(text, unwrapping: true)
    }

    static func parse(_ text: String, unwrapping: Bool) throws(SemaphoreFailure) -> SemaphoreProof {
        guard text.utf8.count <= Self.maximumLength else { throw .malformed("longer than \(Self.maximumLength) bytes") }
        guard let value = try? JSONParser(maximumDepth: 8, maximumLength: Self.maximumLength).parse(Array(text.utf8)), let o = value.objectValue else {
            throw .malformed("not a JSON object")
        }
        if unwrapping, let inner = o["semaphore_proof"] {
            // The iOS wrapper holds the proof as a JSON string; test bundles hold it as an object.
            if let text = inner.stringValue { return try parse(text, unwrapping: false) }
            guard let object = inner.objectValue else { throw .malformed("\"semaphore_proof\" is neither a JSON string nor an object") }
            return try parse(object: object)
        }
        return try parse(object: o)
    }

    static func parse(object o: JSONObject) throws(SemaphoreFailure) -> SemaphoreProof {
        func number(_ key: String) throws(SemaphoreFailure) -> UInt256 {
            guard let v = o[key] else { throw .malformed("no \"\(key)\"") }
            let text = v.stringValue ?? v.integerValue.map(String.init)
            guard let text else { throw .malformed("\"\(key)\" is not a decimal number") }
            guard let n = UInt256(decimal: text) else { throw .outOfRange("\"\(key)\" is not a decimal number below 2^256") }
            return n
        }
        guard let d = o["merkle_tree_depth"]?.integerValue else { throw .malformed("no \"merkle_tree_depth\"") }
        guard (1...32).contains(d) else { throw .unsupportedDepth(Int(d)) }
        let root = try number("merkle_tree_root")
        let nullifier = try number("nullifier")
        let message = try number("message")
        let scope = try number("scope")
        guard root < Groth16.scalarModulus else { throw .outOfRange("merkle_tree_root is not below r") }
        guard nullifier < Groth16.scalarModulus else { throw .outOfRange("nullifier is not below r") }
        guard let pts = o["points"]?.arrayValue, pts.count == 8 else { throw .malformed("\"points\" must hold 8 numbers") }
        var f: [Fq] = []
        for (i, p) in pts.enumerated() {
            guard let s = p.stringValue ?? p.integerValue.map(String.init), let n = UInt256(decimal: s) else {
                throw .outOfRange("points[\(i)] is not a decimal number below 2^256")
            }
            guard n < Fq.modulus else { throw .outOfRange("points[\(i)] is not below the field modulus p") }
            f.append(Fq(n))
        }
        let a = G1Point(x: f[0], y: f[1])
        let b = G2Point(x: Fq2(f[3], f[2]), y: Fq2(f[5], f[4]))
        let c = G1Point(x: f[6], y: f[7])
        guard a.isOnCurve else { throw .notOnCurve("A is not on G1") }
        guard c.isOnCurve else { throw .notOnCurve("C is not on G1") }
        guard b.isOnCurve else { throw .notOnCurve("B is not on the G2 twist") }
        guard b.isInSubgroup else { throw .notOnCurve("B is not in G2's prime-order subgroup") }
        return SemaphoreProof(
            depth: Int(d), root: root, nullifier: nullifier, message: message, scope: scope,
            proof: Groth16.Proof(a: a, b: b, c: c))
    }

    /// Only from `init(json:)`, after its range, curve and subgroup checks: the verifier relies on them,
    /// so no caller outside this module can build a proof that skipped them (which would fail open).
    init(depth: Int, root: UInt256, nullifier: UInt256, message: UInt256, scope: UInt256, proof: Groth16.Proof) {
        self.depth = depth
        self.root = root
        self.nullifier = nullifier
        self.message = message
        self.scope = scope
        self.proof = proof
    }

    /// Semaphore's hash of a message or scope: keccak256(32-byte big-endian) >> 8.
    public static func hash(_ v: UInt256) -> UInt256 {
        UInt256(bigEndian: Keccak256.hash(v.bigEndianBytes)).shiftedRight(8)
    }

    /// [root, nullifier, hash(message), hash(scope)].
    public var publicSignals: [UInt256] { [root, nullifier, Self.hash(message), Self.hash(scope)] }
    /// The Semaphore v4 export JSON (keys sorted, decimal strings, no wrapper): what a card carries.
    public var exportJSON: String {
        let p = proof
        let points = [p.a.x.value, p.a.y.value, p.b.x.c1.value, p.b.x.c0.value, p.b.y.c1.value, p.b.y.c0.value, p.c.x.value, p.c.y.value]
        let object: JSONValue = .object([
            "merkle_tree_depth": .number(Double(depth)), "merkle_tree_root": .string(root.description),
            "message": .string(message.description), "nullifier": .string(nullifier.description), "scope": .string(scope.description),
            "points": .array(points.map { .string($0.description) }),
        ])
        return object.canonicalText
    }
}

/// Verifies Semaphore v4 proofs with the verification keys built into Nearcard (depths 1…32).
public enum SemaphoreVerifier {
    struct Keys: @unchecked Sendable {
        let alpha: G1Point, beta: G2Point, gamma: G2Point
        let deltas: [G2Point]
        let ics: [[G1Point]]
    }

    static let keys: Keys = {
        let v = try! JSONParser(maximumDepth: 8, maximumLength: 1 << 20).parse(Array(SemaphoreKeys.json.utf8))
        func fq(_ s: JSONValue) -> Fq { Fq(decimal: s.stringValue!)! }
        func g1(_ p: JSONValue) -> G1Point { G1Point(x: fq(p.arrayValue![0]), y: fq(p.arrayValue![1])) }
        func g2(_ p: JSONValue) -> G2Point {
            let x = p.arrayValue![0].arrayValue!
            let y = p.arrayValue![1].arrayValue!
            return G2Point(x: Fq2(fq(x[0]), fq(x[1])), y: Fq2(fq(y[0]), fq(y[1])))
        }
        return Keys(
            alpha: g1(v["alpha"]!), beta: g2(v["beta"]!), gamma: g2(v["gamma"]!),
            deltas: v["delta"]!.arrayValue!.map(g2), ics: v["ic"]!.arrayValue!.map { $0.arrayValue!.map(g1) })
    }()

    private static let cache = KeyCache()

    /// The verifying keys made so far, one per depth (a Mutex, as everywhere else).
    final class KeyCache: Sendable {
        private let keys = Mutex<[Int: Groth16.VerifyingKey]>([:])
        func key(depth: Int) -> Groth16.VerifyingKey {
            keys.withLock { keys in
                if let k = keys[depth] { return k }
                let all = SemaphoreVerifier.keys
                let k = Groth16.VerifyingKey(alpha: all.alpha, beta: all.beta, gamma: all.gamma, delta: all.deltas[depth - 1], ic: all.ics[depth - 1])
                keys[depth] = k
                return k
            }
        }
    }

    /// The verifying key for a tree depth (1…32).
    public static func key(depth: Int) -> Groth16.VerifyingKey { cache.key(depth: depth) }

    public static func verify(_ p: SemaphoreProof) -> Result<Void, SemaphoreFailure> {
        guard (1...32).contains(p.depth) else { return .failure(.unsupportedDepth(p.depth)) }
        return Groth16.verify(p.proof, key: key(depth: p.depth), publicSignals: p.publicSignals) ? .success(()) : .failure(.invalid)
    }
}
