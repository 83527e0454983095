import Foundation
import NearcardCrypto
import NearcardImage
import NearcardModel
import NearcardQR
import NearcardTestSupport
import Testing

@Suite struct QRCodecTests {
    /// Encode with libqrencode, render to PNG, read back with libpng + zbar: the exact bytes.
    @Test func pngRoundTripThroughZbar() throws {
        for text in ["hello", String(repeating: "{\"name\":\"Ada Lovelace — ünïcödé\"}", count: 40), "sqc1." + String(repeating: "a", count: 2000)] {
            let png = try QRMatrix.encode(Array(text.utf8)).png()
            #expect(try QRScanner.scan(png: png) == [Array(text.utf8)])
        }
    }

    @Test func tooLargeForOneCodeSaysSo() throws {
        #expect { try QRMatrix.encode([UInt8](repeating: 0x41, count: 4000)) } throws: { ($0 as? QRError)?.kind == .tooLarge }
        #expect { try QRMatrix.encode([UInt8](repeating: 0x41, count: QRMatrix.maximumBytes + 1)) } throws: { ($0 as? QRError)?.kind == .tooLarge }
        #expect(try QRMatrix.encode([UInt8](repeating: 0x41, count: QRMatrix.maximumBytes)).size == 177)
    }

    /// What one code of a given side holds, as libqrencode lays it out (level M, 8-bit).
    @Test func capacityBySide() {
        #expect(QRMatrix.capacity(side: 20) == 0)
        #expect(QRMatrix.capacity(side: 21) == 14) // version 1
        #expect(QRMatrix.capacity(side: 200) == QRMatrix.maximumBytes)
        for side in [25, 57, 69, 105, 150] {
            let c = QRMatrix.capacity(side: side)
            #expect(QRMatrix.side(forBytes: c)! <= side && QRMatrix.side(forBytes: c + 1)! > side, "side \(side)")
        }
    }

    /// A payload larger than a code: compressed if that fits, else frames that each fit the capacity
    /// asked for (a terminal's, or a whole code's), each readable by zbar, reassembled in any order.
    @Test func framesFitTheCapacityAndReassemble() throws {
        let noise = Base64.urlEncode((0..<4000).map { UInt8(truncatingIfNeeded: ($0 &* 2_654_435_761) >> 7) })
        let payload = "{\"format\":\"plaintext\",\"noise\":\"\(noise)\"}"
        for capacity in [QRFrames.minimumCapacity, 331, 779, QRMatrix.maximumBytes] {
            let frames = try QRFrames.plan(payload, capacity: capacity)
            #expect(frames.count > 1 && frames.allSatisfy { $0.utf8.count <= capacity }, "capacity \(capacity)")
            var assembler = Chunks.Assembler()
            var whole: [UInt8]?
            for f in frames.reversed() {
                let png = try QRMatrix.encode(Array(f.utf8)).png()
                #expect(try QRScanner.scan(png: png) == [Array(f.utf8)])
                whole = try assembler.add(try Chunks.parse(f)) ?? whole
            }
            #expect(try Compressed.decode(String(decoding: try #require(whole), as: UTF8.self)) == payload, "capacity \(capacity)")
        }
        // Compressible text that does not fit is compressed into one code first.
        let repetitive = "{\"format\":\"plaintext\",\"card\":{\"name\":\"" + String(repeating: "Ada ", count: 1000) + "\"}}"
        let one = try QRFrames.plan(repetitive)
        #expect(one.count == 1 && one[0].hasPrefix("sce1:"))
        #expect { try QRFrames.plan(payload, capacity: 100) } throws: { ($0 as? QRError)?.kind == .tooLarge }
    }

    @Test func svgAndTerminalRenderings() throws {
        let m = try QRMatrix.encode(Array("svg".utf8))
        let svg = m.svg()
        #expect(svg.contains("<svg") && svg.contains("viewBox"))
        let lines = m.terminalText(ansi: false).split(separator: "\n")
        #expect(lines.count == (m.size + 2 * QRMatrix.quietZone + 1) / 2)
        #expect(m.terminalText(ansi: true).contains("\u{1B}[30;47m"))
    }

    @Test func unreadableImagesAreClearErrors() {
        #expect { try QRScanner.scan(png: Array("not a png".utf8)) } throws: { ($0 as? QRError)?.kind == .image }
        let blank = try! PNG.encodeGray(width: 64, height: 64, pixels: [UInt8](repeating: 255, count: 64 * 64))
        #expect { try QRScanner.scan(png: blank) } throws: { ($0 as? QRError)?.message.contains("no QR code") == true }
    }

    @Test func rawDeflateRoundTripAndBombLimit() throws {
        let text = String(repeating: "{\"skills\":[\"Mathematics\"]} ", count: 200)
        let packed = try Compressed.encode(text)
        #expect(packed.hasPrefix("sce1:") && packed.count < text.count)
        #expect(try Compressed.decode(packed) == text)
        // 10 MB of zeros compresses to a few KB; decoding refuses to expand it past the limit.
        let bomb = try RawDeflate.compress([UInt8](repeating: 0, count: 10_000_000))
        #expect { try RawDeflate.decompress(bomb, limit: Chunks.maximumTotal) } throws: { ($0 as? QRError)?.kind == .tooLarge }
        #expect { try Compressed.decode("sce1:" + Base64.urlEncode([1, 2, 3, 4, 5])) } throws: { $0 is QRError }
    }
}

@Suite struct ChunkTests {
    let payload = Array((0..<20_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
    /// Small enough for two or three hand-made frames.
    let small = Array((0..<3_000).map { UInt8(truncatingIfNeeded: $0 &* 13) })

    @Test func splitAndReassembleInAnyOrder() throws {
        let frames = try Chunks.split(payload)
        #expect(frames.count > 1 && frames.allSatisfy { $0.utf8.count <= Chunks.maximumFrameLength })
        var a = Chunks.Assembler()
        var result: [UInt8]?
        for f in frames.shuffled() { result = try a.add(try Chunks.parse(f)) ?? result }
        #expect(result == payload)
    }

    @Test func framesNumberedFromOneAreReadToo() throws {
        let frames = try Chunks.split(payload).map { f -> String in
            var parts = f.split(separator: ".").map(String.init)
            parts[2] = String(Int(parts[2])! + 1)
            return parts.joined(separator: ".")
        }
        var a = Chunks.Assembler()
        var result: [UInt8]?
        for f in frames { result = try a.add(try Chunks.parse(f)) ?? result }
        #expect(result == payload)
    }

    @Test func badHashMissingFrameAndForeignFrameAreRefused() throws {
        let frames = try Chunks.split(payload)
        // A frame altered (same length, other bytes): the whole fails its hash.
        var altered = frames
        var parts = altered[0].split(separator: ".").map(String.init)
        var data = try Base64.urlDecode(parts[5])
        data[0] ^= 1
        parts[5] = Base64.urlEncode(data)
        altered[0] = parts.joined(separator: ".")
        var a = Chunks.Assembler()
        #expect {
            for f in altered { _ = try a.add(try Chunks.parse(f)) }
        } throws: { ($0 as? QRError)?.message.contains("SHA-256") == true }
        // A missing frame: never complete. Frames 1… alone do not show whether they count from 0 or from
        // 1, so the missing one is named as the first or the last (0 or total), never guessed.
        var b = Chunks.Assembler()
        for f in frames.dropFirst() { #expect(try b.add(try Chunks.parse(f)) == nil) }
        #expect(b.missing == [] && b.firstIndex == nil)
        #expect(b.missingDescription.hasPrefix("the first or the last frame (0 or \(frames.count):"), "\(b.missingDescription)")
        // With frame 0 in hand, the numbering is known and the missing frame is named.
        var g = Chunks.Assembler()
        for (i, f) in frames.enumerated() where i != 1 { #expect(try g.add(try Chunks.parse(f)) == nil) }
        #expect(g.missing == [1] && g.missingDescription == "1" && g.firstIndex == 0)
        // A frame of another payload mixed in.
        var c = Chunks.Assembler()
        _ = try c.add(try Chunks.parse(frames[0]))
        let other = try Chunks.split(Array(payload.reversed()))
        #expect { try c.add(try Chunks.parse(other[1])) } throws: { ($0 as? QRError)?.message.contains("another") == true }
    }

    /// Frames as the iOS app makes them (at level L): numbered from 1, each filled up to `length` bytes
    /// (the last may be shorter), built by hand from the format text rather than by `Chunks.split`.
    func iosFrames(_ payload: [UInt8], length: Int, session: String = Hex.encode(Sodium.randomBytes(16))) -> [String] {
        let hash = Hex.encode(SHA256.hash(payload))
        func header(_ i: Int, _ total: Int) -> String { "sqc1.\(session).\(i).\(total).\(hash)." }
        // The most bytes whose unpadded base64url takes at most `room` characters.
        func bytes(fitting room: Int) -> Int { room / 4 * 3 + max(0, room % 4 - 1) }
        var total = 1
        while (1...total).reduce(0, { $0 + bytes(fitting: length - header($1, total).utf8.count) }) < payload.count { total += 1 }
        var frames: [String] = []
        var offset = 0
        for i in 1...total {
            let n = min(payload.count - offset, bytes(fitting: length - header(i, total).utf8.count))
            frames.append(header(i, total) + Base64.urlEncode(payload[offset..<(offset + n)]))
            offset += n
        }
        return frames
    }

    /// §16: a reader MUST accept frames up to 2950 bytes (the iOS app's, made at level L), numbered from 1;
    /// the reader's bound is 2950, so a frame one byte longer is refused.
    @Test func framesOfUpTo2950BytesAreAccepted() throws {
        #expect(Chunks.maximumFrameLength == 2950)
        let frames = iosFrames(payload, length: 2950)
        // Every frame but the last is exactly 2950 bytes; the numbering starts at 1.
        #expect(frames.count > 2)
        #expect(frames.dropLast().allSatisfy { $0.utf8.count == 2950 }, "\(frames.map(\.utf8.count))")
        #expect(frames.allSatisfy { $0.utf8.count <= 2950 })
        #expect(frames[0].split(separator: ".")[2] == "1" && frames.last!.split(separator: ".")[2] == "\(frames.count)")
        var a = Chunks.Assembler()
        var result: [UInt8]?
        for f in frames.shuffled() { result = try a.add(try Chunks.parse(f)) ?? result }
        #expect(result == payload)
        // The scan router (what reads a camera's codes) takes them too.
        var router = ScanRouter()
        let context = ScanContext(now: Date(), isTrustedIssuer: { _ in false })
        for (n, f) in frames.dropLast().enumerated() {
            guard case .needMoreFrames(let received, let total, _) = try router.scan(f, context: context) else {
                Issue.record("a 2950-byte frame was not taken as a frame")
                return
            }
            #expect(received == n + 1 && total == frames.count)
        }

        // One byte over the reader's bound: the same kind of frame, refused for its length.
        let over = iosFrames(payload, length: 2951)
        #expect(over[0].utf8.count == 2951)
        #expect { try Chunks.parse(over[0]) } throws: { e in
            guard let e = e as? QRError else { return false }
            return e.kind == .chunks && e.message.contains("longer than 2950")
        }
        #expect {
            var r = ScanRouter()
            _ = try r.scan(over[0], context: context)
        } throws: {
            ($0 as? QRError)?.message.contains("longer than 2950") == true
        }
    }

    /// §16: a reader MUST refuse a frame repeated with other contents (same session, index, total and
    /// hash, other chunk data); the same frame seen again (a camera reads a code many times) is fine.
    @Test func frameRepeatedWithOtherContentsIsRefused() throws {
        let frames = try Chunks.split(payload)
        #expect(frames.count > 2)
        func changed(_ frame: String, _ change: (inout [UInt8]) -> Void) throws -> String {
            var parts = frame.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            var data = try Base64.urlDecode(parts[5])
            change(&data)
            parts[5] = Base64.urlEncode(data)
            return parts.joined(separator: ".")
        }
        let flipped = try changed(frames[1]) { $0[0] ^= 1 }
        let shorter = try changed(frames[1]) { $0.removeLast() }
        for other in [flipped, shorter] {
            let o = try Chunks.parse(other)
            let original = try Chunks.parse(frames[1])
            #expect(o.session == original.session && o.index == original.index && o.total == original.total && o.hash == original.hash)
            #expect(o.chunk != original.chunk)
        }
        for other in [flipped, shorter] {
            var a = Chunks.Assembler()
            #expect(try a.add(try Chunks.parse(frames[0])) == nil)
            #expect(try a.add(try Chunks.parse(frames[1])) == nil)
            #expect(try a.add(try Chunks.parse(frames[1])) == nil, "the same frame again is not an error")
            #expect(a.received == 2)
            #expect { try a.add(try Chunks.parse(other)) } throws: { e in
                guard let e = e as? QRError else { return false }
                return e.kind == .chunks && e.message.contains("frame 1 arrived twice with different contents")
            }
            #expect(a.received == 2, "the refused frame is not kept")
            // The other contents arriving first, then the real frame: refused just the same.
            var b = Chunks.Assembler()
            _ = try b.add(try Chunks.parse(other))
            #expect { try b.add(try Chunks.parse(frames[1])) } throws: {
                ($0 as? QRError)?.message.contains("frame 1 arrived twice with different contents") == true
            }
        }
        // Through the scan router, as a camera feeds it.
        var router = ScanRouter()
        let context = ScanContext(now: Date(), isTrustedIssuer: { _ in false })
        _ = try router.scan(frames[0], context: context)
        _ = try router.scan(frames[1], context: context)
        #expect { try router.scan(flipped, context: context) } throws: {
            ($0 as? QRError)?.message.contains("frame 1 arrived twice with different contents") == true
        }
    }

    /// `payload` in `total` frames of one session, numbered from `base` (0: Nearcard's, 1: the iOS app's).
    func numbered(_ payload: [UInt8], total: Int, from base: Int, session: String = Hex.encode(Sodium.randomBytes(16))) -> [String] {
        let hash = Hex.encode(SHA256.hash(payload))
        let size = (payload.count + total - 1) / total
        return (0..<total).map { i in
            let part = payload[min(payload.count, i * size)..<min(payload.count, (i + 1) * size)]
            return "sqc1.\(session).\(base + i).\(total).\(hash).\(Base64.urlEncode(part))"
        }
    }

    /// The frames `add` takes, in order; the payload once complete.
    func assemble(_ a: inout Chunks.Assembler, _ frames: [String]) throws -> [UInt8]? {
        var result: [UInt8]?
        for f in frames { result = try a.add(try Chunks.parse(f)) ?? result }
        return result
    }

    /// iOS frames 1 and 2 of 3 (numbered 1…3): frame 0 does not exist there, so it is never named alone;
    /// frames 1 and 2 do not show the numbering, so the missing one is "0 or 3" (the first or the last).
    @Test func iosFramesOneAndTwoOfThreeReportFrameThreeNotFrameZero() throws {
        let ios = numbered(small, total: 3, from: 1)
        var a = Chunks.Assembler()
        #expect(try assemble(&a, [ios[0], ios[1]]) == nil)
        #expect(a.received == 2 && a.expected == 3 && a.firstIndex == nil)
        #expect(!a.missing.contains(0), "frame 0 does not exist in the iOS numbering: \(a.missing)")
        #expect(a.missing == [], "no frame is missing in both numberings")
        #expect(a.missingDescription.contains("0 or 3"), "\(a.missingDescription)")
        #expect(try assemble(&a, [ios[2]]) == small, "frame 3 completes it")
        // Once frame `total` is in, the numbering is known: frames named by the iOS app's numbers.
        let four = numbered(small, total: 4, from: 1)
        var b = Chunks.Assembler()
        #expect(try assemble(&b, [four[0], four[1], four[3]]) == nil)
        #expect(b.firstIndex == 1 && b.missing == [3] && b.missingDescription == "3")
        // Through the scan router: the missing frames it hands on exist in the iOS numbering.
        var router = ScanRouter()
        let context = ScanContext(now: Date(), isTrustedIssuer: { _ in false })
        _ = try router.scan(four[1], context: context)
        guard case .needMoreFrames(2, 4, let missing) = try router.scan(four[2], context: context) else {
            Issue.record("frames 2 and 3 of 4 are not a partial payload")
            return
        }
        #expect(missing == [1] && Chunks.describeMissing(received: 2, total: 4, missing: missing).contains("1 and the first or the last frame (0 or 4"))
    }

    /// Nearcard's frames 0 and 1 of 3: frame 0 shows the numbering, so frame 2 is the one missing.
    @Test func zeroBasedFramesZeroAndOneOfThreeReportFrameTwo() throws {
        let frames = numbered(small, total: 3, from: 0)
        var a = Chunks.Assembler()
        #expect(try assemble(&a, [frames[1], frames[0]]) == nil)
        #expect(a.firstIndex == 0 && a.missing == [2] && a.missingDescription == "2")
        #expect(try assemble(&a, [frames[2]]) == small)
    }

    /// Frames 0 and `total` of one payload mix both numberings: the second is refused with its reason,
    /// nothing is kept of it, and the right frame still completes the payload.
    @Test func framesZeroAndTwoOfTwoRefuseTheSecondThenFrameOneCompletes() throws {
        let session = Hex.encode(Sodium.randomBytes(16))
        let zero = numbered(small, total: 2, from: 0, session: session)
        let one = numbered(small, total: 2, from: 1, session: session)
        // Frame 0, then frame 2 of 2 (from the 1-based numbering): refused, in one line.
        var a = Chunks.Assembler()
        #expect(try a.add(try Chunks.parse(zero[0])) == nil)
        #expect { try a.add(try Chunks.parse(one[1])) } throws: { e in
            guard let e = e as? QRError else { return false }
            return e.kind == .chunks && e.message.contains("frame 2 of 2 cannot join frame 0") && e.message.contains("count from 0 (0…1)")
                && !e.message.contains("\n")
        }
        #expect(a.received == 1 && a.missing == [1], "the refused frame is not kept")
        #expect(try a.add(try Chunks.parse(zero[1])) == small, "frame 1 completes the payload")
        // The other way round: frame 2 of 2 first (1-based), then frame 0 refused, then frame 1 completes.
        var b = Chunks.Assembler()
        #expect(try b.add(try Chunks.parse(one[1])) == nil)
        #expect(b.firstIndex == 1 && b.missing == [1])
        #expect { try b.add(try Chunks.parse(zero[0])) } throws: {
            ($0 as? QRError)?.message.contains("frame 0 cannot join frame 2 of 2: this payload's frames count from 1 (1…2)") == true
        }
        #expect(try b.add(try Chunks.parse(one[0])) == small)
        // Three frames, the stray one in the middle of the scan; through the scan router as a camera feeds it.
        let card = Card(name: "Ada", company: "AE")
        let text = Array(
            Envelope.plaintext(
                card: card, fields: [.name, .company], cardId: UUID().uuidString, updatedAt: Date(),
                createdAt: Date(), expires: nil
            ).utf8)
        let s3 = Hex.encode(Sodium.randomBytes(16))
        let good = numbered(text, total: 3, from: 0, session: s3)
        let stray = numbered(text, total: 3, from: 1, session: s3)[2]
        var router = ScanRouter()
        let context = ScanContext(now: Date(), isTrustedIssuer: { _ in false })
        _ = try router.scan(good[0], context: context)
        #expect { try router.scan(stray, context: context) } throws: { ($0 as? QRError)?.message.contains("frame 3 of 3 cannot join frame 0") == true }
        guard case .needMoreFrames(2, 3, [2]) = try router.scan(good[1], context: context) else {
            Issue.record("not partial")
            return
        }
        guard case .contact(let c) = try router.scan(good[2], context: context) else {
            Issue.record("the right frames do not complete it")
            return
        }
        #expect(c.card.name == "Ada")
    }

    /// The words for the missing frames are true in both numberings while the numbering is unknown.
    @Test func missingFramesAreDescribedTrulyInEitherNumbering() {
        // Numbering known: every missing frame listed.
        #expect(Chunks.describeMissing(received: 1, total: 3, missing: [1, 2]) == "1, 2")
        #expect(Chunks.describeMissing(received: 2, total: 4, missing: [1, 3]) == "1, 3")
        // Numbering unknown: one frame fewer listed than are missing; the first or the last is the other.
        #expect(Chunks.describeMissing(received: 1, total: 3, missing: [2]).hasPrefix("2 and the first or the last frame (0 or 3:"))
        #expect(
            Chunks.describeMissing(received: 1, total: 2, missing: [])
                == "the first or the last frame (0 or 2: the frames read so far do not show whether they count from 0 or from 1)")
        #expect(Chunks.describeMissing(received: 2, total: 5, missing: [2, 3]).hasPrefix("2, 3 and the first or the last frame (0 or 5:"))
    }

    /// A completed payload, or one that fails its hash, leaves the assembler empty: the next payload's
    /// frames are taken, and after a bad hash the right frames complete it (nothing jams).
    @Test func assemblerStartsAfreshAfterAPayloadOrABadHash() throws {
        let first = numbered(small, total: 2, from: 0)
        let other = Array(small.reversed())
        let second = numbered(other, total: 3, from: 1)
        var a = Chunks.Assembler()
        #expect(try assemble(&a, first) == small)
        #expect(a.received == 0 && a.expected == 0 && a.missing == [])
        #expect(try assemble(&a, second) == other, "another payload's frames after a complete one")
        // A frame altered in transit: the hash fails, then the true frames complete the payload.
        var parts = second[1].split(separator: ".").map(String.init)
        var data = try Base64.urlDecode(parts[5])
        data[0] ^= 1
        parts[5] = Base64.urlEncode(data)
        let altered = [second[0], parts.joined(separator: "."), second[2]]
        #expect { _ = try assemble(&a, altered) } throws: { ($0 as? QRError)?.message.contains("SHA-256") == true }
        #expect(a.received == 0)
        #expect(try assemble(&a, second) == other)
    }

    @Test(arguments: [
        "sqc1.", "sqc1.zz.0.1.00.AA", "sqc1.\(String(repeating: "a", count: 32)).5.3.\(String(repeating: "b", count: 64)).QQ",
        "sqc1.\(String(repeating: "a", count: 32)).0.999.\(String(repeating: "b", count: 64)).QQ",
        "sqc1.\(String(repeating: "a", count: 32)).0.1.\(String(repeating: "b", count: 64)).!!",
    ])
    func malformedFramesAreRefused(frame: String) {
        #expect(throws: QRError.self) { try Chunks.parse(frame) }
    }
}

@Suite struct ScanRouterTests {
    let context = ScanContext(now: Date(), isTrustedIssuer: { _ in false })

    func scan(_ text: String) throws -> ScanOutcome {
        var r = ScanRouter()
        return try r.scan(text, context: context)
    }

    @Test func openIDRequestsAreRoutedAndValidated() throws {
        let ok =
            "openid4vp://authorize?client_id=https%3A%2F%2Fverifier.example.org&response_type=vp_token&response_mode=direct_post&nonce=n-0S6&state=s1&response_uri=https%3A%2F%2Fverifier.example.org%2Fpost&presentation_definition=%7B%22input_descriptors%22%3A%5B%7B%22constraints%22%3A%7B%22fields%22%3A%5B%7B%22path%22%3A%5B%22%24.credentialSubject.name%22%5D%7D%5D%7D%7D%5D%7D"
        guard case .presentationRequest(let r) = try scan(ok) else {
            Issue.record("not a request")
            return
        }
        #expect(r.verifierHost == "verifier.example.org")
        #expect(r.requestedClaims == ["credentialSubject.name"])
        guard case .presentationRequest = try scan(ok.replacingOccurrences(of: "openid4vp://", with: "OID4VP://")) else {
            Issue.record("upper-case scheme")
            return
        }
        for (change, reason) in [
            ("client_id=https%3A%2F%2Fverifier.example.org&", "client_id"), ("nonce=n-0S6&", "nonce"), ("state=s1&", "state"),
            ("response_uri=https%3A%2F%2Fverifier.example.org%2Fpost&", "response_uri"),
        ] {
            #expect { try scan(ok.replacingOccurrences(of: change, with: "")) } throws: { ($0 as? QRError)?.message.contains(reason) == true }
        }
        #expect { try scan(ok + "&redirect_uri=https%3A%2F%2Fx") } throws: { ($0 as? QRError)?.message.contains("redirect_uri") == true }
        let dcql =
            "openid4vp://?client_id=x.example&nonce=1&state=2&dcql_query=%7B%22credentials%22%3A%5B%7B%22claims%22%3A%5B%7B%22path%22%3A%5B%22credentialSubject%22%2C%22company%22%5D%7D%5D%7D%5D%7D"
        guard case .presentationRequest(let d) = try scan(dcql) else {
            Issue.record("dcql")
            return
        }
        #expect(d.requestedFields(from: [.name]) == [.name, .company])
    }

    @Test func unusableCodesSayWhyAndStoreNothing() {
        for (text, words) in [
            ("openid-credential-offer://?credential_offer=%7B%7D", "credential offer"),
            ("solidarity://share?id=1", "link"),
            (Base64.encode(Sodium.randomBytes(80)), "encrypted"),
            ("{\"version\":2,\"format\":\"zkProof\",\"shareId\":\"X\",\"encryptedPayload\":\"AAAA\"}", "own devices"),
        ] {
            #expect { try scan(text) } throws: { e in
                guard let e = e as? QRError else { return false }
                return e.kind == .unusable && e.message.contains(words)
            }
        }
    }

    /// Whatever the text, an answer and never a crash: random bytes, truncations of real codes.
    @Test func fuzzedAndTruncatedInputsGetAnAnswer() throws {
        let keys = IdentityKeys.generate()
        let card = Card(name: "Ada", company: "AE")
        let real = [
            Envelope.plaintext(card: card, fields: [.name, .company], cardId: UUID().uuidString, updatedAt: Date(), createdAt: Date(), expires: nil),
            try Envelope.zkProof(card: card, fields: [.name], keys: keys, createdAt: Date(), expires: Date().addingTimeInterval(60)),
            try BusinessCardCredential.make(card: card, fields: [.name], signer: keys.p256, issuedAt: Date(), expires: nil),
        ]
        var answered = 0
        for text in real {
            for cut in stride(from: 1, to: text.count, by: max(1, text.count / 40)) {
                var r = ScanRouter()
                _ = try? r.scan(String(text.prefix(cut)), context: context)
                answered += 1
            }
        }
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<300 {
            let n = Int.random(in: 1...400, using: &rng)
            let text = String(decoding: (0..<n).map { _ in UInt8.random(in: 0...255, using: &rng) }, as: UTF8.self)
            var r = ScanRouter()
            _ = try? r.scan(text, context: context)
            answered += 1
        }
        #expect(answered > 300)
    }

    @Test func ourZkProofVerifiesAndTamperingFails() throws {
        let keys = IdentityKeys.generate()
        let card = Card(name: "Ada Lovelace", email: "ada@example.org", company: "AE", title: "Programmer")
        let text = try Envelope.zkProof(card: card, fields: [.name, .company], keys: keys, createdAt: Date(), expires: Date().addingTimeInterval(3600))
        guard case .contact(let c) = try scan(text) else {
            Issue.record("no contact")
            return
        }
        // A valid proof from a signer this scanner does not trust: "signature valid, signer unknown".
        #expect(c.status == .unverified && c.reason.contains("signature valid, signer unknown"))
        #expect(c.card == card.filtered(to: [.name, .company]) && c.did == keys.publicIdentity(name: nil).did)
        let did = keys.publicIdentity(name: nil).did
        var trusting = ScanRouter()
        guard case .contact(let t) = try trusting.scan(text, context: ScanContext(isTrustedIssuer: { $0 == did })) else {
            Issue.record("no contact")
            return
        }
        #expect(t.status == .verified, "the same proof from a trusted signer")

        var env = try JSONParser.parse(text).objectValue!
        // Claim a field the proof does not disclose.
        env["selectedFields"] = ["name", "company", "email"]
        guard case .contact(let claimed) = try scan(JSONValue.object(env).canonicalText) else {
            Issue.record("no answer")
            return
        }
        #expect(claimed.status == .failed && claimed.reason.contains("email"))
        // The proof moved into another QR code (another shareId).
        env = try JSONParser.parse(text).objectValue!
        env["shareId"] = .string(UUID().uuidString)
        guard case .contact(let moved) = try scan(JSONValue.object(env).canonicalText) else {
            Issue.record("no answer")
            return
        }
        #expect(moved.status == .failed && moved.reason.contains("another QR code"))
        // Expired: refused, nothing to store.
        let old = try Envelope.zkProof(
            card: card, fields: [.name], keys: keys, createdAt: Date().addingTimeInterval(-7200), expires: Date().addingTimeInterval(-3600))
        #expect { try scan(old) } throws: { ($0 as? QRError)?.kind == .expired }
        // Compressed form reads the same.
        guard case .contact(let z) = try scan(try Compressed.encode(text)) else {
            Issue.record("sce1")
            return
        }
        #expect(z.status == .unverified && z.card == c.card)
    }

    @Test func pairwiseDIDsAreDeterministicPerVerifier() throws {
        let keys = IdentityKeys.generate()
        let a1 = try Presentation.pairwiseKey(identity: keys, verifierHost: "verifier.example.org")
        let a2 = try Presentation.pairwiseKey(identity: keys, verifierHost: "VERIFIER.example.org")
        let b = try Presentation.pairwiseKey(identity: keys, verifierHost: "other.example.com")
        #expect(a1.publicKey == a2.publicKey)
        #expect(a1.publicKey != b.publicKey)
        #expect(a1.publicKey != keys.p256.publicKey)
        // From a restored copy of the identity (same secret), the same DID.
        let restored = IdentityKeys(p256: try P256.PrivateKey(rawRepresentation: keys.p256.rawRepresentation), x25519: keys.x25519, ed25519: keys.ed25519)
        #expect(try Presentation.pairwiseKey(identity: restored, verifierHost: "verifier.example.org").publicKey == a1.publicKey)
    }
}
