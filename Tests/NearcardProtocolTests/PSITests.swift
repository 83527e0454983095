import Foundation
import NearcardCrypto
import NearcardModel
import Testing

@testable import NearcardProtocol

/// Private common contacts (docs/PROTOCOL.md §22): the known-answer vectors computed by the
/// independent Python implementation (Tests/Interop/psi.py), and both sides driven in lockstep in
/// memory.
@Suite struct PSITests {
    static var vectors: [String: Any] {
        try! JSONSerialization.jsonObject(with: Data(contentsOf: vectorsRoot.appendingPathComponent("psi/psi-v2.json"))) as! [String: Any]
    }

    static func scalar(_ name: String) throws -> Ristretto255.Scalar {
        try Ristretto255.Scalar(secret: SecureBytes(hexBytes(vectors[name])))
    }

    /// Runs both sides in lockstep; returns what each learnt.
    static func run(_ x: [String], _ y: [String]) throws -> (initiator: PSI.Result, responder: PSI.Result) {
        var a = PSI.Session(role: .initiator, mine: x, randomness: .fresh())
        var b = PSI.Session(role: .responder, mine: y, randomness: .fresh())
        let first = a.start()
        let answer = try b.handle(try PSI.Message(decoding: first.encoded))
        #expect(answer.send.map(\.typeName) == ["psi-2", "psi-3"] && answer.result == nil)
        #expect(try a.handle(try PSI.Message(decoding: answer.send[0].encoded)) == PSI.Step(send: [], result: nil))
        let last = try a.handle(try PSI.Message(decoding: answer.send[1].encoded))
        #expect(last.send.map(\.typeName) == ["psi-4"])
        let end = try b.handle(try PSI.Message(decoding: last.send[0].encoded))
        #expect(end.send.isEmpty)
        return (try #require(last.result), try #require(end.result))
    }

    static func dids(_ range: Range<Int>) -> [String] { range.map { "did:key:zDnaeTest\($0)" } }

    // MARK: vectors

    /// §22.5: H(did), H(did)·own scalar and ·the other's, for fixed DIDs and scalars, match the
    /// values the Python implementation (pure RFC 9496, no libsodium) computed.
    @Test func hashToGroupBlindingAndDoublingMatchTheVectors() throws {
        let a = try Self.scalar("scalarA")
        let b = try Self.scalar("scalarB")
        for (side, mine, other) in [("initiator", a, b), ("responder", b, a)] {
            for v in Self.vectors[side] as! [[String: String]] {
                let element = PSI.element(for: v["did"]!)
                #expect(element.rawRepresentation == hexBytes(v["element"]), "H(\(v["did"]!))")
                let blinded = try mine.multiply(element)
                #expect(blinded.rawRepresentation == hexBytes(v["blinded"]), "\(side) blinded \(v["did"]!)")
                #expect(try other.multiply(blinded).rawRepresentation == hexBytes(v["doubled"]), "\(side) doubled \(v["did"]!)")
            }
        }
    }

    /// §22.5's transcript: with the randomness fixed (no shuffle, padding from a label) both sides
    /// produce psi-1…psi-4 byte for byte, and learn the vector's intersection.
    @Test func theTranscriptIsReproducedByteForByte() throws {
        func padding(_ side: String) -> @Sendable () -> Ristretto255.Point {
            let counter = Counter()
            return { try! Ristretto255.Point(fromHash: SHA512.hash(Array("nearcard psi vector dummy \(side)".utf8) + [counter.next()])) }
        }
        let transcript = (Self.vectors["transcript"] as! [String]).map { Array($0.utf8) }
        let dids = { (side: String) in (Self.vectors[side] as! [[String: String]]).map { $0["did"]! } }
        var a = PSI.Session(role: .initiator, mine: dids("initiator"), scalar: try Self.scalar("scalarA"), shuffle: { _ in }, dummy: padding("A"))
        var b = PSI.Session(role: .responder, mine: dids("responder"), scalar: try Self.scalar("scalarB"), shuffle: { _ in }, dummy: padding("B"))
        #expect(a.start().encoded == transcript[0])
        let answer = try b.handle(try PSI.Message(decoding: transcript[0]))
        #expect(answer.send.map(\.encoded) == [transcript[1], transcript[2]])
        _ = try a.handle(try PSI.Message(decoding: transcript[1]))
        let last = try a.handle(try PSI.Message(decoding: transcript[2]))
        #expect(last.send.map(\.encoded) == [transcript[3]])
        let end = try b.handle(try PSI.Message(decoding: transcript[3]))
        let common = Set(Self.vectors["common"] as! [String])
        #expect(last.result == PSI.Result(common: common, peerSetBound: 8))
        #expect(end.result == PSI.Result(common: common, peerSetBound: 8))
        #expect(a.result == last.result && b.result == end.result)
    }

    /// §22.5's example is the vector's, so the spec cannot drift from what the tests check.
    @Test func theSpecsExampleIsTheVector() throws {
        let spec = try String(
            contentsOf: vectorsRoot.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("docs/PROTOCOL.md"), encoding: .utf8)
        let section = try #require(spec.range(of: "## 22. Private common contacts")).lowerBound
        let text = spec[section...]
        #expect(text.contains("a = `\(Self.vectors["scalarA"] as! String)`"))
        #expect(text.contains("b = `\(Self.vectors["scalarB"] as! String)`"))
        let a = (Self.vectors["initiator"] as! [[String: String]])[1]
        let b = (Self.vectors["responder"] as! [[String: String]])[0]
        #expect(a["did"] == b["did"] && a["doubled"] == b["doubled"])
        for line in [
            "did       \(a["did"]!)", "H(did)    \(a["element"]!)", "H(did)·a  \(a["blinded"]!)", "H(did)·b  \(b["blinded"]!)",
            "H(did)·a·b = H(did)·b·a  \(a["doubled"]!)",
        ] {
            #expect(text.contains(line), "\(line)")
        }
    }

    // MARK: each side learns exactly the intersection

    @Test(arguments: [
        ("no overlap", 0..<5, 5..<12),
        ("some", 0..<10, 6..<30),
        ("all", 0..<9, 0..<9),
        ("one inside the other", 0..<40, 10..<20),
        ("initiator empty", 0..<0, 0..<3),
        ("responder empty", 0..<3, 0..<0),
        ("both empty", 0..<0, 0..<0),
    ])
    func eachSideLearnsExactlyTheIntersection(_ name: String, _ x: Range<Int>, _ y: Range<Int>) throws {
        let (i, r) = try Self.run(Self.dids(x), Self.dids(y))
        let expected = Set(Self.dids(x)).intersection(Self.dids(y))
        #expect(i.common == expected, "\(name)")
        #expect(r.common == expected, "\(name)")
        #expect(i.peerSetBound == PSI.paddedCount(for: y.count), "\(name)")
        #expect(r.peerSetBound == PSI.paddedCount(for: x.count), "\(name)")
    }

    /// Repeated DIDs in our own set count once.
    @Test func repeatsInOurOwnSetCountOnce() throws {
        let (i, r) = try Self.run(Self.dids(0..<4) + Self.dids(0..<4), Self.dids(2..<6))
        #expect(i.common == Set(Self.dids(2..<4)) && r.common == i.common)
        #expect(r.peerSetBound == 8)
    }

    /// The buckets of §22.2: no bucket 0, the limit is the last.
    @Test func setsArePaddedToTheirBucket() {
        let cases: [(Int, Int?)] = [(0, 8), (1, 8), (8, 8), (9, 16), (100, 128), (256, 256), (257, 512), (513, 1000), (1000, 1000), (1001, nil)]
        for (n, padded) in cases { #expect(PSI.paddedCount(for: n) == padded, "\(n)") }
        var a = PSI.Session(role: .initiator, mine: Self.dids(0..<9), randomness: .fresh())
        #expect(a.start().points.count == 16)
    }

    /// 1,000 DIDs on each side (the limit): the run completes, every message fits one transport
    /// message (§4), and both learn the 400 in common.
    @Test func theLimitOfOneThousandRunsAndFitsTheFrames() throws {
        var a = PSI.Session(role: .initiator, mine: Self.dids(0..<1000), randomness: .fresh())
        var b = PSI.Session(role: .responder, mine: Self.dids(600..<1600), randomness: .fresh())
        let first = a.start()
        var sizes = [first.encoded.count]
        let answer = try b.handle(try PSI.Message(decoding: first.encoded))
        sizes += answer.send.map(\.encoded.count)
        _ = try a.handle(answer.send[0])
        let last = try a.handle(answer.send[1])
        sizes += last.send.map(\.encoded.count)
        let end = try b.handle(last.send[0])
        let expected = Set(Self.dids(600..<1000))
        #expect(last.result?.common == expected && end.result?.common == expected)
        #expect(last.result?.peerSetBound == 1000 && end.result?.peerSetBound == 1000)
        for size in sizes { #expect(size <= ProtocolLimits.maximumMessageLength, "a PSI message of \(size) bytes") }
    }

    // MARK: refusals

    static func message(_ type: String, _ member: String, _ entries: [String]) -> [UInt8] {
        var o: JSONObject = ["type": .string(type)]
        o[member] = .array(entries.map { .string($0) })
        return JCS.canonicalize(.object(o))
    }

    static func b64(_ p: Ristretto255.Point) -> String { Base64.urlEncode(p.rawRepresentation) }

    static func randomPoints(_ n: Int) -> [Ristretto255.Point] { (0..<n).map { _ in Ristretto255.Point.random() } }

    /// Malformed points are refused on decoding with `protocol_error`: not base64url, the wrong
    /// length, an invalid encoding (RFC 9496 A.2), the identity; more than 1,000 entries is `too_large`.
    @Test func malformedPointsAndOverlongListsAreRefusedOnDecoding() throws {
        let good = Self.randomPoints(7).map(Self.b64)
        let rfc =
            (try JSONSerialization.jsonObject(with: Data(contentsOf: vectorsRoot.appendingPathComponent("psi/psi-v2.json"))) as! [String: Any])["rfc9496"]
            as! [String: Any]
        let invalid = (rfc["invalid"] as! [String]).map { Base64.urlEncode(hexBytes($0)) }
        let bad: [(String, String)] =
            [
                ("not base64url", "not base64url at all, no, not at all......."),
                ("31 bytes", Base64.urlEncode([UInt8](repeating: 7, count: 31))),
                ("33 bytes", Base64.urlEncode(Ristretto255.Point.random().rawRepresentation + [0])),
                ("padded base64", Base64.encode(Ristretto255.Point.random().rawRepresentation)),
                ("the identity", Base64.urlEncode([UInt8](repeating: 0, count: 32))),
            ] + invalid.map { ("RFC 9496 invalid \($0)", $0) }
        for type in PSI.Message.typeNames.sorted() {
            let member = type == "psi-1" || type == "psi-3" ? "blinded" : "doubled"
            for (what, entry) in bad {
                let e = try #require(throws: ProtocolError.self, "\(type) \(what)") { try PSI.Message(decoding: Self.message(type, member, good + [entry])) }
                #expect(e.code == .protocolError, "\(type) \(what): \(e)")
            }
            let over = Array(repeating: good[0], count: 1001)
            let e = try #require(throws: ProtocolError.self) { try PSI.Message(decoding: Self.message(type, member, over)) }
            #expect(e.code == .tooLarge, "\(type): \(e)")
        }
    }

    /// The members of §22.2 and nothing else, a list of strings, canonical JSON (§1).
    @Test func messagesWithOtherMembersOrNotInJCSFormAreRefused() throws {
        let p = Self.b64(Ristretto255.Point.random())
        let cases: [(String, String)] = [
            ("missing list", #"{"type":"psi-1"}"#),
            ("other list name", #"{"doubled":[],"type":"psi-1"}"#),
            ("extra member", #"{"blinded":[],"extra":1,"type":"psi-1"}"#),
            ("not a list", #"{"blinded":"\#(p)","type":"psi-1"}"#),
            ("a number in the list", #"{"doubled":[1],"type":"psi-2"}"#),
            ("whitespace", #"{"blinded": [],"type":"psi-3"}"#),
            ("members out of order", #"{"type":"psi-4","doubled":[]}"#),
            ("unknown type", #"{"doubled":[],"type":"psi-5"}"#),
        ]
        for (what, text) in cases {
            let e = try #require(throws: ProtocolError.self, "\(what)") { try PSI.Message(decoding: Array(text.utf8)) }
            #expect(e.code == .protocolError, "\(what): \(e)")
        }
        // Each message round-trips.
        for m in [
            PSI.Message.psi1(blinded: Self.randomPoints(8)), .psi2(doubled: Self.randomPoints(3)), .psi3(blinded: []), .psi4(doubled: Self.randomPoints(1)),
        ] {
            #expect(try PSI.Message(decoding: m.encoded) == m)
        }
    }

    /// A blinded list whose length is not a bucket, or that repeats an element, is `protocol_error`;
    /// a list over 1,000 built in memory is `too_large` at the session too.
    @Test func blindedListsOfTheWrongSizeOrWithRepeatsAreRefused() throws {
        let points = Self.randomPoints(16)
        let cases: [(String, [Ristretto255.Point], ProtocolErrorCode)] = [
            ("7 entries", Array(points.prefix(7)), .protocolError),
            ("9 entries", Array(points.prefix(9)), .protocolError),
            ("0 entries", [], .protocolError),
            ("a repeat", Array(points.prefix(7)) + [points[3]], .protocolError),
            ("1,024 entries", Self.randomPoints(1024), .tooLarge),
        ]
        for (what, list, code) in cases {
            var b = PSI.Session(role: .responder, mine: Self.dids(0..<3), randomness: .fresh())
            let e = try #require(throws: ProtocolError.self, "psi-1 \(what)") { try b.handle(.psi1(blinded: list)) }
            #expect(e.code == code, "psi-1 \(what): \(e)")
            #expect(b.result == nil)
            // A failed run stays failed.
            #expect(throws: ProtocolError.self) { try b.handle(.psi1(blinded: Array(points.prefix(8)))) }

            var a = PSI.Session(role: .initiator, mine: Self.dids(0..<3), randomness: .fresh())
            var peer = PSI.Session(role: .responder, mine: [], randomness: .fresh())
            let answer = try peer.handle(a.start())
            _ = try a.handle(answer.send[0])
            let e3 = try #require(throws: ProtocolError.self, "psi-3 \(what)") { try a.handle(.psi3(blinded: list)) }
            #expect(e3.code == code, "psi-3 \(what): \(e3)")
        }
    }

    /// A peer that sends the wrong number of doubled values, or repeats one, is refused
    /// (`protocol_error`) and nothing is learnt.
    @Test func theWrongNumberOfDoubledValuesIsRefused() throws {
        // psi-2 to the initiator.
        for change in ["one fewer", "one more", "none", "a repeat"] {
            var a = PSI.Session(role: .initiator, mine: Self.dids(0..<5), randomness: .fresh())
            var b = PSI.Session(role: .responder, mine: Self.dids(3..<8), randomness: .fresh())
            let answer = try b.handle(a.start())
            guard case .psi2(let doubled) = answer.send[0] else {
                Issue.record("no psi-2")
                return
            }
            let wrong: [Ristretto255.Point] =
                switch change {
                case "one fewer": Array(doubled.dropLast())
                case "one more": doubled + [Ristretto255.Point.random()]
                case "none": []
                default: Array(doubled.dropLast()) + [doubled[0]]
                }
            let e = try #require(throws: ProtocolError.self, "psi-2 \(change)") { try a.handle(.psi2(doubled: wrong)) }
            #expect(e.code == .protocolError, "psi-2 \(change): \(e)")
            #expect(a.result == nil)
        }
        // psi-4 to the responder.
        for change in ["one fewer", "one more", "a repeat"] {
            var a = PSI.Session(role: .initiator, mine: Self.dids(0..<5), randomness: .fresh())
            var b = PSI.Session(role: .responder, mine: Self.dids(3..<8), randomness: .fresh())
            let answer = try b.handle(a.start())
            _ = try a.handle(answer.send[0])
            guard case .psi4(let doubled) = try a.handle(answer.send[1]).send[0] else {
                Issue.record("no psi-4")
                return
            }
            let wrong: [Ristretto255.Point] =
                switch change {
                case "one fewer": Array(doubled.dropLast())
                case "one more": doubled + [Ristretto255.Point.random()]
                default: Array(doubled.dropLast()) + [doubled[0]]
                }
            let e = try #require(throws: ProtocolError.self, "psi-4 \(change)") { try b.handle(.psi4(doubled: wrong)) }
            #expect(e.code == .protocolError, "psi-4 \(change): \(e)")
            #expect(b.result == nil)
        }
    }

    /// Every message is refused (`protocol_error`) where it does not belong: the wrong role, the wrong
    /// order, and any message once the one run of the session is over (§22.3).
    @Test func everyMessageIsRefusedOutOfPlace() throws {
        let eight = Self.randomPoints(8)
        let all: [PSI.Message] = [.psi1(blinded: eight), .psi2(doubled: eight), .psi3(blinded: eight), .psi4(doubled: eight)]
        func states() throws -> [(String, PSI.Session, Set<String>)] {
            var a = PSI.Session(role: .initiator, mine: Self.dids(0..<3), randomness: .fresh())
            var b = PSI.Session(role: .responder, mine: Self.dids(0..<3), randomness: .fresh())
            var out: [(String, PSI.Session, Set<String>)] = []
            out.append(("initiator ready", a, []))
            out.append(("responder ready", b, ["psi-1"]))
            let first = a.start()
            out.append(("initiator sent psi-1", a, ["psi-2"]))
            let answer = try b.handle(first)
            out.append(("responder answered", b, ["psi-4"]))
            _ = try a.handle(answer.send[0])
            out.append(("initiator has psi-2", a, ["psi-3"]))
            let last = try a.handle(answer.send[1])
            out.append(("initiator finished", a, []))
            _ = try b.handle(last.send[0])
            out.append(("responder finished", b, []))
            return out
        }
        for (name, session, allowed) in try states() {
            for m in all where !allowed.contains(m.typeName) {
                var s = session
                let e = try #require(throws: ProtocolError.self, "\(m.typeName) in \(name)") { try s.handle(m) }
                #expect(e.code == .protocolError, "\(m.typeName) in \(name): \(e)")
                #expect((s.result != nil) == name.hasSuffix("finished"), "a finished run keeps its result")
            }
        }
    }

    /// A run's result is kept; the scalar is gone once the side has sent its last message (the
    /// states after that carry none).
    @Test func theScalarIsDroppedOnceNoLongerNeeded() throws {
        var a = PSI.Session(role: .initiator, mine: Self.dids(0..<3), randomness: .fresh())
        var b = PSI.Session(role: .responder, mine: Self.dids(1..<4), randomness: .fresh())
        let answer = try b.handle(a.start())
        if case .answered = b.state {} else { Issue.record("responder not in answered") }
        _ = try a.handle(answer.send[0])
        let last = try a.handle(answer.send[1])
        if case .finished = a.state {} else { Issue.record("initiator not finished") }
        _ = try b.handle(last.send[0])
        #expect(a.result?.common == Set(Self.dids(1..<3)) && b.result?.common == a.result?.common)
    }
}

/// A counter shared by a `@Sendable` closure (the transcript test's padding).
final class Counter: @unchecked Sendable {
    private var value: UInt8 = 0
    private let lock = NSLock()
    func next() -> UInt8 {
        lock.lock()
        defer {
            value += 1
            lock.unlock()
        }
        return value
    }
}

/// Nearcard against the independent implementation of §22 (Tests/Interop/psi.py: pure Python from the
/// spec and RFC 9496), through the messages' JSON on its stdin/stdout, in both roles.
@Suite struct PSIInteropTests {
    static let script = vectorsRoot.deletingLastPathComponent().appendingPathComponent("Interop/psi.py")

    /// The Python side of one run: JSON lines in, JSON lines out.
    final class PythonPeer {
        let process = Process()
        let input = Pipe(), output = Pipe()
        var buffer: [UInt8] = []

        init(role: String, mine: [String]) throws {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["python3", PSIInteropTests.script.path, "--peer", role]
            process.standardInput = input
            process.standardOutput = output
            try process.run()
            try send(Array(JSONSerialization.data(withJSONObject: ["mine": mine])))
        }

        func send(_ line: [UInt8]) throws {
            try input.fileHandleForWriting.write(contentsOf: line + [0x0A])
        }

        /// The next line, parsed with Foundation's parser (not ours).
        func receive() throws -> (bytes: [UInt8], object: [String: Any]) {
            while true {
                if let nl = buffer.firstIndex(of: 0x0A) {
                    let line = Array(buffer[..<nl])
                    buffer.removeSubrange(...nl)
                    return (line, try JSONSerialization.jsonObject(with: Data(line)) as! [String: Any])
                }
                let chunk = output.fileHandleForReading.availableData
                if chunk.isEmpty { throw ProtocolError(.connectionLost, "psi.py closed its output") }
                buffer += chunk
            }
        }

        func finish() -> Int32 {
            try? input.fileHandleForWriting.close()
            process.waitUntilExit()
            return process.terminationStatus
        }
    }

    static let x = (0..<12).map { "did:key:zDnaeInterop\($0)" }
    static let y = (7..<20).map { "did:key:zDnaeInterop\($0)" } + ["did:web:example.com"]

    @Test func swiftInitiatorWithPythonResponder() throws {
        let python = try PythonPeer(role: "responder", mine: Self.y)
        var swift = PSI.Session(role: .initiator, mine: Self.x, randomness: .fresh())
        try python.send(swift.start().encoded)
        #expect(try swift.handle(try PSI.Message(decoding: python.receive().bytes)).send.isEmpty)
        let last = try swift.handle(try PSI.Message(decoding: python.receive().bytes))
        for m in last.send { try python.send(m.encoded) }
        let result = last.result
        let (_, report) = try python.receive()
        #expect(python.finish() == 0)
        let expected = Set(Self.x).intersection(Self.y)
        #expect(expected.count == 5)
        #expect(result?.common == expected)
        #expect(result?.peerSetBound == 16)
        #expect(report["type"] as? String == "result")
        #expect(Set(report["common"] as? [String] ?? []) == expected)
        #expect(report["peerSetBound"] as? Int == 16)
    }

    @Test func pythonInitiatorWithSwiftResponder() throws {
        let python = try PythonPeer(role: "initiator", mine: Self.y)
        var swift = PSI.Session(role: .responder, mine: Self.x, randomness: .fresh())
        let answer = try swift.handle(try PSI.Message(decoding: python.receive().bytes))
        for m in answer.send { try python.send(m.encoded) }
        let last = try swift.handle(try PSI.Message(decoding: python.receive().bytes))
        let (_, report) = try python.receive()
        #expect(python.finish() == 0)
        let expected = Set(Self.x).intersection(Self.y)
        #expect(last.result?.common == expected)
        #expect(last.result?.peerSetBound == 16)
        #expect(Set(report["common"] as? [String] ?? []) == expected)
        #expect(report["peerSetBound"] as? Int == 16)
    }

    /// The Python side refuses what the spec says to refuse, with the same code: a psi-2 one
    /// doubled value short.
    @Test func pythonRefusesAShortDoubledList() throws {
        let python = try PythonPeer(role: "initiator", mine: Self.y)
        var swift = PSI.Session(role: .responder, mine: Self.x, randomness: .fresh())
        let answer = try swift.handle(try PSI.Message(decoding: python.receive().bytes))
        guard case .psi2(let doubled) = answer.send[0] else {
            Issue.record("no psi-2")
            return
        }
        try python.send(PSI.Message.psi2(doubled: Array(doubled.dropLast())).encoded)
        let (_, report) = try python.receive()
        #expect(python.finish() == 1)
        #expect(report["type"] as? String == "error")
        #expect(report["code"] as? String == "protocol_error")
    }
}
