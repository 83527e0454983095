public import NearcardCrypto
public import NearcardModel

/// Private common contacts (docs/PROTOCOL.md §22): Diffie-Hellman private set intersection over
/// ristretto255. The initiator holds the DIDs X and a fresh secret scalar a, the responder Y and b;
/// H is hash-to-group (§22.1). Four messages, three steps (the responder's two leave together):
///
///     I -> R  psi-1 {blinded}   [H(x)·a for x in X] padded with random elements to X's bucket, shuffled
///     R -> I  psi-2 {doubled}   [P·b for P in psi-1], in psi-1's order
///     R -> I  psi-3 {blinded}   [H(y)·b for y in Y] padded to Y's bucket, shuffled
///     I -> R  psi-4 {doubled}   [Q·a for Q in psi-3], in psi-3's order
///
/// H(x)·a·b = H(x)·b·a, so a DID both hold has the same doubled value on both sides. Each side knows
/// which of its positions holds which of its DIDs, so each learns which of its own DIDs the other holds,
/// and of the other's set only its size rounded up to a bucket. This type is pure: no I/O, no clock.
public enum PSI {
    /// The hash-to-group label (§1, §22.1).
    public static let domain = "nearcard/psi/v2"

    /// The most DIDs one side may put in (§22.3, "at most 1,000 entries"). A received list longer than
    /// this is `too_large`.
    public static let maximumSetSize = 1000

    /// The sizes a blinded list may have (§22.2): a set of n DIDs is padded with random elements up to
    /// the first bucket ≥ n. Powers of two from 8 show the size to within a factor of two (8 classes,
    /// 3 bits) at most doubling the work; there is no bucket 0, so a new user's empty book looks like a
    /// book of up to 8; the last bucket is the limit itself (no set is larger, so padding past it
    /// would hide nothing). 1,000 base64url points, about 46 KB, fit one 65,519-byte message; two
    /// lists would not, hence psi-2 and psi-3.
    public static let buckets = [8, 16, 32, 64, 128, 256, 512, 1000]

    /// The padded size for a set of `count` DIDs; nil over `maximumSetSize`.
    public static func paddedCount(for count: Int) -> Int? { buckets.first { $0 >= count } }

    /// H(did) = ristretto255_from_hash(SHA-512("nearcard/psi/v2" ‖ 0x00 ‖ UTF-8(did))) (§22.1).
    public static func element(for did: String) -> Ristretto255.Point {
        do { return try Ristretto255.Point(fromHash: SHA512.hash(Array(domain.utf8) + [0] + Array(did.utf8))) } catch {
            preconditionFailure("SHA-512 output mapped to the ristretto255 identity: \(error)")
        }
    }

    // MARK: messages

    /// The PSI messages (§22.2), each the JCS form of `{"type", "blinded"|"doubled": [base64url point, …]}`.
    public enum Message: Sendable, Equatable {
        /// `psi-1 {blinded}`: the initiator's blinded, padded, shuffled set.
        case psi1(blinded: [Ristretto255.Point])
        /// `psi-2 {doubled}`: psi-1's elements times the responder's scalar, in psi-1's order.
        case psi2(doubled: [Ristretto255.Point])
        /// `psi-3 {blinded}`: the responder's blinded, padded, shuffled set (right after psi-2).
        case psi3(blinded: [Ristretto255.Point])
        /// `psi-4 {doubled}`: psi-3's elements times the initiator's scalar, in psi-3's order.
        case psi4(doubled: [Ristretto255.Point])

        /// The `type`s, for a decoder that dispatches on `type` (ExchangeMessage).
        public static let typeNames: Set<String> = ["psi-1", "psi-2", "psi-3", "psi-4"]

        public var typeName: String {
            switch self {
            case .psi1: "psi-1"
            case .psi2: "psi-2"
            case .psi3: "psi-3"
            case .psi4: "psi-4"
            }
        }

        var member: String {
            switch self {
            case .psi1, .psi3: "blinded"
            case .psi2, .psi4: "doubled"
            }
        }

        public var points: [Ristretto255.Point] {
            switch self {
            case .psi1(let p), .psi2(let p), .psi3(let p), .psi4(let p): p
            }
        }

        public var json: JSONValue {
            var o: JSONObject = ["type": .string(typeName)]
            o[member] = .array(points.map { .string(Base64.urlEncode($0.rawRepresentation)) })
            return .object(o)
        }

        /// The bytes to send: the JCS form (§1).
        public var encoded: [UInt8] { JCS.canonicalize(json) }

        /// Decodes one received message strictly (§1: canonical JSON; §6: no unknown or missing member).
        public init(decoding bytes: [UInt8]) throws(ProtocolError) {
            let value = try ExchangeMessage.parseCanonical(bytes)
            guard let o = value.objectValue, let type = o["type"]?.stringValue else {
                throw ProtocolError(.protocolError, Phrase("a message is not an object with a \"type\""))
            }
            try self.init(object: o, type: type)
        }

        /// Decodes the members of a message whose `type` is one of `typeNames`: a list of at most
        /// `maximumSetSize` strings (else `too_large`), each the base64url of a valid ristretto255
        /// element other than the identity (else `protocol_error`). The list's length for the round
        /// and duplicates are the session's to check.
        public init(object o: JSONObject, type: String) throws(ProtocolError) {
            let member: String
            switch type {
            case "psi-1", "psi-3": member = "blinded"
            case "psi-2", "psi-4": member = "doubled"
            default: throw ProtocolError(.protocolError, Phrase("unknown message type \"%1$@\"", type.prefix(32)))
            }
            for k in o.keys where k != "type" && k != member {
                throw ProtocolError(.protocolError, Phrase("%1$@: unexpected member \"%2$@\"", type, k))
            }
            guard let list = o[member]?.arrayValue else { throw ProtocolError(.protocolError, Phrase("%1$@: \"%2$@\" missing or not a list", type, member)) }
            guard list.count <= PSI.maximumSetSize else {
                throw ProtocolError(
                    .tooLarge, Phrase("%1$@: \"%2$@\" has %3$@ entries; at most %4$@", type, member, String(list.count), String(PSI.maximumSetSize)))
            }
            var points: [Ristretto255.Point] = []
            points.reserveCapacity(list.count)
            for (i, entry) in list.enumerated() {
                guard let text = entry.stringValue, text.utf8.count == 43, let bytes = try? Base64.urlDecode(text) else {
                    throw ProtocolError(.protocolError, Phrase("%1$@: \"%2$@\"[%3$@] is not 32 bytes of base64url", type, member, String(i)))
                }
                do { points.append(try Ristretto255.Point(rawRepresentation: bytes)) } catch {
                    throw ProtocolError(
                        .protocolError, Phrase("%1$@: \"%2$@\"[%3$@] is not a ristretto255 element (%4$@)", type, member, String(i), error.phrase))
                }
            }
            switch type {
            case "psi-1": self = .psi1(blinded: points)
            case "psi-2": self = .psi2(doubled: points)
            case "psi-3": self = .psi3(blinded: points)
            default: self = .psi4(doubled: points)
            }
        }
    }

    // MARK: the session

    /// What one side learnt (§22.4).
    public struct Result: Sendable, Equatable {
        /// Our DIDs the peer also holds (by its own account: a dishonest peer can lie about them, §22.4).
        public let common: Set<String>
        /// The length of the peer's blinded list: its set has at most this many DIDs (and, if it is
        /// honest, more than the bucket below).
        public let peerSetBound: Int

        public init(common: Set<String>, peerSetBound: Int) {
            self.common = common
            self.peerSetBound = peerSetBound
        }
    }

    /// What to do after a message: send these (in order), and, once the step is over, the result.
    public struct Step: Sendable, Equatable {
        public let send: [Message]
        public let result: Result?
    }

    /// One side of one PSI run: at most one per exchange session (§22.3). Drive it with `start()`
    /// (initiator) and `handle(_:)` for each PSI message received; a thrown `ProtocolError`
    /// (`protocol_error` or `too_large`) is the peer's fault and ends the session with that abort.
    ///
    ///     initiator: start() → [psi-1];  handle(psi-2) → [];  handle(psi-3) → [psi-4] + result
    ///     responder: handle(psi-1) → [psi-2, psi-3];  handle(psi-4) → result
    public struct Session: Sendable {
        /// Where the run is; each case names what has happened.
        enum State: Sendable {
            /// The initiator has sent nothing yet.
            case initiatorReady(Ready)
            /// The initiator sent psi-1 and awaits psi-2.
            case sentBlinded(SentBlinded)
            /// The initiator has the doubled values of its own elements and awaits psi-3.
            case receivedDoubled(ReceivedDoubled)
            /// The responder awaits psi-1.
            case responderReady(Ready)
            /// The responder sent psi-2 and psi-3 and awaits psi-4. Its scalar is already gone.
            case answered(Answered)
            /// Over; the scalar is gone (wiped with its `SecureBytes`).
            case finished(Result)
            /// A peer's message was refused; the session ends.
            case failed
        }

        /// What a run draws at random (§22.2): its scalar, the order a blinded list goes in, and the padding
        /// elements. An input like every key and nonce, so the state machines stay deterministic; a node
        /// makes it `fresh()` for each session.
        public struct Randomness: Sendable {
            let scalar: Ristretto255.Scalar
            let shuffle: @Sendable (inout [(String?, Ristretto255.Point)]) -> Void
            let dummy: @Sendable () -> Ristretto255.Point

            public init(
                scalar: Ristretto255.Scalar, shuffle: @escaping @Sendable (inout [(String?, Ristretto255.Point)]) -> Void,
                dummy: @escaping @Sendable () -> Ristretto255.Point
            ) {
                self.scalar = scalar
                self.shuffle = shuffle
                self.dummy = dummy
            }

            /// From the system's generator and libsodium: a new scalar, a random order, random padding.
            public static func fresh() -> Randomness {
                Randomness(
                    scalar: .random(),
                    shuffle: { list in
                        var g = SystemRandomNumberGenerator()
                        list.shuffle(using: &g)
                    },
                    dummy: { Ristretto255.Point.random() })
            }
        }

        struct Ready: Sendable {
            let scalar: Ristretto255.Scalar
            let mine: [String]
        }

        struct SentBlinded: Sendable {
            let scalar: Ristretto255.Scalar
            /// Our DID at each position of psi-1 (nil: padding).
            let order: [String?]
        }

        struct ReceivedDoubled: Sendable {
            let scalar: Ristretto255.Scalar
            /// The doubled value of each of our DIDs.
            let mineDoubled: [Ristretto255.Point: String]
        }

        struct Answered: Sendable {
            /// Our DID at each position of psi-3 (nil: padding).
            let order: [String?]
            /// The initiator's elements, doubled by us (psi-2).
            let theirsDoubled: Set<Ristretto255.Point>
            let peerSetBound: Int
        }

        private(set) var state: State
        /// Shuffles a blinded list in place; tests replace it to make runs repeatable.
        private let shuffle: @Sendable (inout [(String?, Ristretto255.Point)]) -> Void
        /// Makes a padding element; tests replace it.
        private let dummy: @Sendable () -> Ristretto255.Point

        /// One side's run. `mine`: our DIDs (repeats are dropped), at most `maximumSetSize` — the
        /// caller picks which when the book holds more (§22.3); more is a bug of ours and traps.
        /// `randomness`: fresh for each session, never reused (§22.2).
        public init(role: NoiseXXHandshake.Role, mine: [String], randomness: Randomness) {
            self.init(role: role, mine: mine, scalar: randomness.scalar, shuffle: randomness.shuffle, dummy: randomness.dummy)
        }

        init(
            role: NoiseXXHandshake.Role, mine: [String], scalar: Ristretto255.Scalar,
            shuffle: @escaping @Sendable (inout [(String?, Ristretto255.Point)]) -> Void,
            dummy: @escaping @Sendable () -> Ristretto255.Point
        ) {
            var seen = Set<String>()
            let unique = mine.filter { seen.insert($0).inserted }
            precondition(unique.count <= PSI.maximumSetSize, "PSI takes at most \(PSI.maximumSetSize) DIDs; the caller passed \(unique.count)")
            let ready = Ready(scalar: scalar, mine: unique)
            switch role {
            case .initiator: state = .initiatorReady(ready)
            case .responder: state = .responderReady(ready)
            }
            self.shuffle = shuffle
            self.dummy = dummy
        }

        /// The result, once the run is over.
        public var result: Result? {
            if case .finished(let r) = state { return r }
            return nil
        }

        /// The initiator's first message, psi-1. Calling it twice, or as the responder, is a bug of ours.
        public mutating func start() -> Message {
            guard case .initiatorReady(let ready) = state else { preconditionFailure("PSI.Session.start() is the initiator's first step, once") }
            let (order, blinded) = blind(ready)
            state = .sentBlinded(SentBlinded(scalar: ready.scalar, order: order))
            return .psi1(blinded: blinded)
        }

        /// Consumes one PSI message from the peer. Throws `protocol_error` for a message that does
        /// not belong here (wrong role, wrong order, a second run) or a list of the wrong length or
        /// with a repeated element, `too_large` for a list over the limit (also refused on decoding).
        public mutating func handle(_ message: Message) throws(ProtocolError) -> Step {
            let current = state
            state = .failed
            switch (current, message) {
            case (.responderReady(let ready), .psi1(let blinded)):
                let bound = try Self.checkBlinded(blinded, in: message)
                let doubled = try Self.multiply(blinded, by: ready.scalar)
                let (order, ours) = blind(ready)
                state = .answered(Answered(order: order, theirsDoubled: Set(doubled), peerSetBound: bound))
                return Step(send: [.psi2(doubled: doubled), .psi3(blinded: ours)], result: nil)

            case (.sentBlinded(let sent), .psi2(let doubled)):
                try Self.checkDoubled(doubled, in: message, expected: sent.order.count)
                var mineDoubled: [Ristretto255.Point: String] = [:]
                for (did, point) in zip(sent.order, doubled) { if let did { mineDoubled[point] = did } }
                state = .receivedDoubled(ReceivedDoubled(scalar: sent.scalar, mineDoubled: mineDoubled))
                return Step(send: [], result: nil)

            case (.receivedDoubled(let received), .psi3(let blinded)):
                let bound = try Self.checkBlinded(blinded, in: message)
                let doubled = try Self.multiply(blinded, by: received.scalar)
                // The doubled values are no secret from the peer (each side sends the other's), so a
                // hash lookup — not a constant-time comparison — leaks nothing it does not already have.
                let common = Set(doubled.compactMap { received.mineDoubled[$0] })
                let result = Result(common: common, peerSetBound: bound)
                state = .finished(result)
                return Step(send: [.psi4(doubled: doubled)], result: result)

            case (.answered(let answered), .psi4(let doubled)):
                try Self.checkDoubled(doubled, in: message, expected: answered.order.count)
                // As above: the initiator's doubled values are compared in the clear, they are public to both.
                var common = Set<String>()
                for (did, point) in zip(answered.order, doubled) where did != nil && answered.theirsDoubled.contains(point) {
                    common.insert(did!)
                }
                let result = Result(common: common, peerSetBound: answered.peerSetBound)
                state = .finished(result)
                return Step(send: [], result: result)

            case (.finished, _):
                state = current // the result stands; the session ends on the caller's abort
                throw ProtocolError(.protocolError, Phrase("%1$@: one private-common-contacts run per session, and this one is over", message.typeName))
            case (.failed, _):
                throw ProtocolError(.protocolError, Phrase("%1$@: the private-common-contacts run already failed", message.typeName))
            case (.initiatorReady, _), (.sentBlinded, _), (.receivedDoubled, _), (.responderReady, _), (.answered, _):
                throw ProtocolError(.protocolError, Phrase("%1$@ does not belong here (%2$@)", message.typeName, current.expecting))
            }
        }

        /// Our blinded list: each DID's element times our scalar, padded with random elements to the
        /// bucket, shuffled; with the DID (or nil) at each position.
        private func blind(_ ready: Ready) -> ([String?], [Ristretto255.Point]) {
            var entries: [(String?, Ristretto255.Point)] = []
            let padded = PSI.paddedCount(for: ready.mine.count)!
            entries.reserveCapacity(padded)
            for did in ready.mine {
                do { entries.append((did, try ready.scalar.multiply(PSI.element(for: did)))) } catch {
                    preconditionFailure("a hashed DID times a valid scalar was refused: \(error)")
                }
            }
            while entries.count < padded { entries.append((nil, dummy())) }
            shuffle(&entries)
            return (entries.map(\.0), entries.map(\.1))
        }

        /// A blinded list: one of the bucket sizes, no element twice. Returns its length (the peer's bound).
        private static func checkBlinded(_ points: [Ristretto255.Point], in message: Message) throws(ProtocolError) -> Int {
            guard points.count <= PSI.maximumSetSize else {
                throw ProtocolError(
                    .tooLarge,
                    Phrase("%1$@: \"%2$@\" has %3$@ entries; at most %4$@", message.typeName, "blinded", String(points.count), String(PSI.maximumSetSize)))
            }
            guard PSI.buckets.contains(points.count) else {
                throw ProtocolError(
                    .protocolError,
                    Phrase(
                        "%1$@: \"blinded\" has %2$@ entries; a blinded list is padded to one of %3$@", message.typeName, String(points.count),
                        PSI.buckets.map(String.init).joined(separator: ", ")))
            }
            try checkDistinct(points, in: message)
            return points.count
        }

        /// A doubled list: exactly as long as the list it answers, no element twice.
        private static func checkDoubled(_ points: [Ristretto255.Point], in message: Message, expected: Int) throws(ProtocolError) {
            guard points.count <= PSI.maximumSetSize else {
                throw ProtocolError(
                    .tooLarge,
                    Phrase("%1$@: \"%2$@\" has %3$@ entries; at most %4$@", message.typeName, "doubled", String(points.count), String(PSI.maximumSetSize)))
            }
            guard points.count == expected else {
                throw ProtocolError(
                    .protocolError, Phrase("%1$@: \"doubled\" has %2$@ entries for the %3$@ we sent", message.typeName, String(points.count), String(expected)))
            }
            try checkDistinct(points, in: message)
        }

        /// Distinct inputs give distinct outputs (a random element repeats with probability ~2⁻²⁵²; the
        /// multiplication is a bijection), so a repeat is a peer's fault, and one that would skew a count.
        private static func checkDistinct(_ points: [Ristretto255.Point], in message: Message) throws(ProtocolError) {
            var seen = Set<Ristretto255.Point>()
            for (i, p) in points.enumerated() where !seen.insert(p).inserted {
                throw ProtocolError(.protocolError, Phrase("%1$@: \"%2$@\"[%3$@] repeats an earlier element", message.typeName, message.member, String(i)))
            }
        }

        private static func multiply(_ points: [Ristretto255.Point], by scalar: Ristretto255.Scalar) throws(ProtocolError) -> [Ristretto255.Point] {
            var out: [Ristretto255.Point] = []
            out.reserveCapacity(points.count)
            for p in points {
                // Unreachable for valid non-identity elements and a scalar in 1..<ℓ (prime order).
                do { out.append(try scalar.multiply(p)) } catch {
                    throw ProtocolError(.protocolError, Phrase("an element the peer sent cannot be blinded: %1$@", error.phrase))
                }
            }
            return out
        }
    }
}

extension PSI.Session.State {
    /// What this state waits for, for errors.
    var expecting: Phrase {
        switch self {
        case .initiatorReady: Phrase("the initiator has not sent %1$@", "psi-1")
        case .sentBlinded: Phrase("expected %1$@", "psi-2")
        case .receivedDoubled: Phrase("expected %1$@", "psi-3")
        case .responderReady: Phrase("expected %1$@", "psi-1")
        case .answered: Phrase("expected %1$@", "psi-4")
        case .finished: Phrase("the run is over")
        case .failed: Phrase("the run failed")
        }
    }
}
