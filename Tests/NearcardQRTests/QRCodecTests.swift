import Foundation
import NearcardCrypto
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
        #expect(QRMatrix.capacity(side: 21) == 14)       // version 1
        #expect(QRMatrix.capacity(side: 200) == QRMatrix.maximumBytes)
        for side in [25, 57, 69, 105, 150] {
            let c = QRMatrix.capacity(side: side)
            #expect(QRMatrix.side(forBytes: c)! <= side && QRMatrix.side(forBytes: c + 1)! > side, "side \(side)")
        }
    }

    /// A payload larger than a code: compressed if that fits, else frames that each fit the capacity
    /// asked for (a terminal's, or a whole code's), each readable by zbar, reassembled in any order.
    @Test func framesFitTheCapacityAndReassemble() throws {
        let noise = Base64.urlEncode((0..<4000).map { UInt8(truncatingIfNeeded: ($0 &* 2654435761) >> 7) })
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
        // A missing frame: never complete, and the missing index is named.
        var b = Chunks.Assembler()
        for f in frames.dropFirst() { #expect(try b.add(try Chunks.parse(f)) == nil) }
        #expect(b.missing == [0])
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
                Issue.record("a 2950-byte frame was not taken as a frame"); return
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
        #expect { var r = ScanRouter(); _ = try r.scan(over[0], context: context) } throws: {
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
            let o = try Chunks.parse(other), original = try Chunks.parse(frames[1])
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

    @Test(arguments: ["sqc1.", "sqc1.zz.0.1.00.AA", "sqc1.\(String(repeating: "a", count: 32)).5.3.\(String(repeating: "b", count: 64)).QQ",
                      "sqc1.\(String(repeating: "a", count: 32)).0.999.\(String(repeating: "b", count: 64)).QQ",
                      "sqc1.\(String(repeating: "a", count: 32)).0.1.\(String(repeating: "b", count: 64)).!!"])
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
        let ok = "openid4vp://authorize?client_id=https%3A%2F%2Fverifier.example.org&response_type=vp_token&response_mode=direct_post&nonce=n-0S6&state=s1&response_uri=https%3A%2F%2Fverifier.example.org%2Fpost&presentation_definition=%7B%22input_descriptors%22%3A%5B%7B%22constraints%22%3A%7B%22fields%22%3A%5B%7B%22path%22%3A%5B%22%24.credentialSubject.name%22%5D%7D%5D%7D%7D%5D%7D"
        guard case .presentationRequest(let r) = try scan(ok) else { Issue.record("not a request"); return }
        #expect(r.verifierHost == "verifier.example.org")
        #expect(r.requestedClaims == ["credentialSubject.name"])
        guard case .presentationRequest = try scan(ok.replacingOccurrences(of: "openid4vp://", with: "OID4VP://")) else { Issue.record("upper-case scheme"); return }
        for (change, reason) in [("client_id=https%3A%2F%2Fverifier.example.org&", "client_id"), ("nonce=n-0S6&", "nonce"), ("state=s1&", "state"),
                                 ("response_uri=https%3A%2F%2Fverifier.example.org%2Fpost&", "response_uri")] {
            #expect { try scan(ok.replacingOccurrences(of: change, with: "")) } throws: { ($0 as? QRError)?.message.contains(reason) == true }
        }
        #expect { try scan(ok + "&redirect_uri=https%3A%2F%2Fx") } throws: { ($0 as? QRError)?.message.contains("redirect_uri") == true }
        let dcql = "openid4vp://?client_id=x.example&nonce=1&state=2&dcql_query=%7B%22credentials%22%3A%5B%7B%22claims%22%3A%5B%7B%22path%22%3A%5B%22credentialSubject%22%2C%22company%22%5D%7D%5D%7D%5D%7D"
        guard case .presentationRequest(let d) = try scan(dcql) else { Issue.record("dcql"); return }
        #expect(d.requestedFields(from: [.name]) == [.name, .company])
    }

    @Test func unusableCodesSayWhyAndStoreNothing() {
        for (text, words) in [("openid-credential-offer://?credential_offer=%7B%7D", "credential offer"),
                              ("solidarity://share?id=1", "link"),
                              (Base64.encode(Sodium.randomBytes(80)), "encrypted"),
                              ("{\"version\":2,\"format\":\"zkProof\",\"shareId\":\"X\",\"encryptedPayload\":\"AAAA\"}", "own devices")] {
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
        guard case .contact(let c) = try scan(text) else { Issue.record("no contact"); return }
        // A valid proof from a signer this scanner does not trust: "signature valid, signer unknown".
        #expect(c.status == .unverified && c.reason.contains("signature valid, signer unknown"))
        #expect(c.card == card.filtered(to: [.name, .company]) && c.did == keys.publicIdentity(name: nil).did)
        let did = keys.publicIdentity(name: nil).did
        var trusting = ScanRouter()
        guard case .contact(let t) = try trusting.scan(text, context: ScanContext(isTrustedIssuer: { $0 == did })) else { Issue.record("no contact"); return }
        #expect(t.status == .verified, "the same proof from a trusted signer")

        var env = try JSONParser.parse(text).objectValue!
        // Claim a field the proof does not disclose.
        env["selectedFields"] = ["name", "company", "email"]
        guard case .contact(let claimed) = try scan(JSONValue.object(env).canonicalText) else { Issue.record("no answer"); return }
        #expect(claimed.status == .failed && claimed.reason.contains("email"))
        // The proof moved into another QR code (another shareId).
        env = try JSONParser.parse(text).objectValue!
        env["shareId"] = .string(UUID().uuidString)
        guard case .contact(let moved) = try scan(JSONValue.object(env).canonicalText) else { Issue.record("no answer"); return }
        #expect(moved.status == .failed && moved.reason.contains("another QR code"))
        // Expired: refused, nothing to store.
        let old = try Envelope.zkProof(card: card, fields: [.name], keys: keys, createdAt: Date().addingTimeInterval(-7200), expires: Date().addingTimeInterval(-3600))
        #expect { try scan(old) } throws: { ($0 as? QRError)?.kind == .expired }
        // Compressed form reads the same.
        guard case .contact(let z) = try scan(try Compressed.encode(text)) else { Issue.record("sce1"); return }
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
