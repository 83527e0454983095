import Foundation
import NearcardCrypto
import NearcardProcess
import NearcardTestSupport
import Synchronization
import Testing

/// QR end to end: the CLI against QR texts built from the iOS app's documented format by an
/// independent Python peer, images from other generators, and independent verifiers.
@Suite struct QRCommandTests {
    let peer = CLI.packageRoot.appendingPathComponent("Tests/Interop/qr_peer.py").path

    func py(_ args: [String]) throws -> CLI.Result { try CLI.run(executable: CLI.python, [peer] + args) }

    /// A plaintext envelope without what differs from one `qr make` to the next: its share and card ids and its times.
    static func withoutShareMoment(_ value: JSONValue) -> JSONValue {
        switch value {
        case .object(let o):
            var out = JSONObject()
            for (k, v) in o.members where !["shareId", "cardId", "createdAt", "expirationDate", "updatedAt"].contains(k) { out[k] = withoutShareMoment(v) }
            return .object(out)
        case .array(let items): return .array(items.map(withoutShareMoment))
        default: return value
        }
    }

    func ada() throws -> CLI {
        let cli = try CLI()
        try cli.run(["init", "--name", "Ada"])
        try cli.run([
            "card", "set", "--name", "Ada Lovelace", "--email", "ada@example.org", "--company", "Analytical Engines",
            "--title", "Programmer", "--skill", "Mathematics", "--social", "mastodon:ada:https://example.social/@ada",
        ])
        return cli
    }

    /// A code carries version 2's seven fields whatever else is shared (§16): a zk code whose card held
    /// pronouns would show a field its seven-digest proof cannot open, and fail at every scanner.
    @Test(arguments: ["plaintext", "zk", "did-signed"]) func codesCarryOnlyTheFieldsTheFormatsKnow(_ format: String) throws {
        let cli = try ada()
        defer { cli.cleanUp() }
        #expect(try cli.run(["card", "set", "--pronouns", "she/her"]).code == 0)
        #expect(try cli.run(["share", "--fields", "name,pronouns,company"]).code == 0)
        let text = try cli.run(["qr", "make", "--format", format, "--text"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(!text.contains("she/her") && !text.contains("pronouns"))
        let scanner = try CLI()
        defer { scanner.cleanUp() }
        try scanner.run(["init", "--name", "Bob"])
        let r = try scanner.run(["qr", "scan", text, "--json"])
        #expect(r.code == 0, "\(r.stdout) \(r.stderr)")
        let c = try #require(r.json.arrayValue?.first)
        #expect(c["verificationStatus"] != "failed" && c["company"] == "Analytical Engines" && c["pronouns"] == .null, "\(c)")
        let help = try cli.run(["qr", "make", "--help"]).stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(help.contains("pronouns and a photo travel only in an exchange"), "\(help)")
    }

    @Test func importsTheIOSAppsPlaintextEnvelope() throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        let text = try py(["ios-plaintext"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let r = try cli.run(["qr", "scan", text, "--json"])
        #expect(r.code == 0, "\(r.stderr)")
        let c = try #require(r.json.arrayValue?.first)
        #expect(c["source"] == "qrCode" && c["verificationStatus"] == "unverified" && c["format"] == "plaintext")
        #expect(c["name"] == "Grace Hopper" && c["company"] == "US Navy" && c["email"] == "grace@navy.mil")
        #expect(c["socialNetworks"]?.arrayValue?.first?["username"] == "ghopper")
        // Expired: refused, nothing stored.
        let expired = try py(["ios-plaintext", "--expired"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let e = try cli.run(["qr", "scan", expired])
        #expect(e.code == 1 && e.stderr.contains("expired"))
        #expect(e.stderr.split(separator: "\n").count == 1, "one code, one line: \(e.stderr)")
        // Malformed text: one line that says what is wrong with it (exit 2).
        let m = try cli.run(["qr", "scan", #"{"format":"didSigned","jwt":"abc.def.ghi"}"#])
        #expect(m.code == 2 && m.stderr.split(separator: "\n").count == 1 && m.stderr.contains("has no \"version\""), "\(m.stderr)")
        #expect(try cli.run(["contacts", "--json"]).json.arrayValue?.count == 1)
    }

    @Test func importsTheIOSAppsDIDSignedCredentialByTrust() throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        let made = try py(["ios-didsigned"]).json
        let text = made["text"]!.stringValue!
        let did = made["did"]!.stringValue!
        let first = try cli.run(["qr", "scan", text, "--json"]).json.arrayValue?.first
        #expect(first?["verificationStatus"] == "unverified", "unknown issuer")
        #expect(first?["didPublicKey"]?.stringValue == did)
        #expect(try cli.run(["credentials", "--json"]).json.arrayValue?.first?["types"]?.arrayValue?.contains("BusinessCardCredential") == true)
        // Trusted: the same credential scans as verified; the envelope-wrapped form too.
        #expect(try cli.run(["trust", "add", did, "--note", "met at the booth"]).code == 0)
        #expect(try cli.run(["qr", "scan", text, "--json"]).json.arrayValue?.first?["verificationStatus"] == "verified")
        let wrapped = try py(["ios-didsigned", "--envelope"]).json["text"]!.stringValue!
        #expect(try cli.run(["qr", "scan", wrapped]).code == 0)
        #expect(try cli.run(["trust", "list", "--json"]).json.arrayValue?.first?["note"] == "met at the booth")
        // A credential altered after signing: failed.
        let tampered = try py(["ios-didsigned", "--tamper"]).json["text"]!.stringValue!
        let t = try cli.run(["qr", "scan", tampered, "--json"])
        #expect(t.code == 1)
        #expect(t.json.arrayValue?.first?["verificationStatus"] == "failed")
    }

    /// One rule for "verified" across formats: a valid zk code and a valid did-signed code from a DID the
    /// scanner has never met are both "signature valid, signer unknown"; trusted, both are verified. The
    /// same code scanned again is merged, never a second contact; a trusted re-scan may add fields.
    @Test func oneVerifiedRuleAndRescansMerge() throws {
        let ada = try ada()
        let viewer = try CLI()
        defer {
            ada.cleanUp()
            viewer.cleanUp()
        }
        let did = try ada.run(["id", "--json"]).json["did"]!.stringValue!
        let zk = try ada.run(["qr", "make", "--format", "zk", "--text", "--fields", "name,company"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let signed = try ada.run(["qr", "make", "--format", "did-signed", "--text", "--fields", "name,company"]).stdout.trimmingCharacters(
            in: .whitespacesAndNewlines)
        for text in [zk, signed] {
            let r = try viewer.run(["qr", "scan", text, "--json"])
            #expect(r.code == 0, "\(r.stderr)")
            let c = try #require(r.json.arrayValue?.first)
            #expect(c["verificationStatus"] == "unverified", "\(c["format"] ?? .null): unknown signer")
            #expect(c["reason"]?.stringValue?.contains("signature valid, signer unknown") == true)
        }
        let again = try viewer.run(["qr", "scan", zk])
        #expect(again.stdout.contains("already in your contacts: nothing new"), "\(again.stdout)")
        #expect(try viewer.run(["contacts", "--json"]).json.arrayValue?.count == 1, "the same DID three times is one contact")

        try viewer.run(["trust", "add", did])
        let zkEmail = try ada.run(["qr", "make", "--format", "zk", "--text", "--fields", "name,email"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let r = try viewer.run(["qr", "scan", zkEmail, "--json"])
        let c = try #require(r.json.arrayValue?.first)
        #expect(c["verificationStatus"] == "verified" && c["merge"]?["outcome"] == "merged" && c["merge"]?["changed"] == ["email"])
        #expect(c["company"] == "Analytical Engines", "a field the code does not carry stays")
        let text = try viewer.run(["qr", "scan", signed]).stdout
        #expect(text.contains("(didSigned, verified): already in your contacts: nothing new"), "\(text)")
        #expect(try viewer.run(["contacts", "--json"]).json.arrayValue?.count == 1)
    }

    /// Scanning your own code (any format: signed with your DID, or a plaintext one showing your own
    /// card's fields) says so and stores nothing: you are not your own contact.
    @Test func yourOwnCodeIsNotAContact() throws {
        let ada = try ada()
        defer { ada.cleanUp() }
        for format in ["zk", "did-signed", "plaintext"] {
            let text = try ada.run(["qr", "make", "--format", format, "--text"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            let r = try ada.run(["qr", "scan", text])
            #expect(r.code == 0 && r.stdout == "This is your own card (Ada Lovelace): nothing was stored.\n", "\(format): \(r.stdout) \(r.stderr)")
            #expect(try ada.run(["qr", "scan", text, "--json"]).json.arrayValue?.first?["result"] == "own-card")
        }
        #expect(try ada.run(["contacts", "--json"]).json.arrayValue?.isEmpty == true, "nothing was stored")
    }

    /// A plaintext card (no DID): scanned twice, stored once; a look-alike typed in is flagged.
    @Test func plaintextCardsAreStoredOnceAndLookAlikesFlagged() throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        let text = try py(["ios-plaintext"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try cli.run(["qr", "scan", text]).stdout.contains("Stored Grace Hopper"))
        let again = try cli.run(["qr", "scan", text, "--json"])
        #expect(again.json.arrayValue?.first?["merge"]?["outcome"] == "unchanged")
        let typed = try cli.run(["contacts", "add", "--name", "grace hopper"])
        #expect(typed.stdout.contains("possibly the same person as Grace Hopper"), "\(typed.stdout)")
        #expect(try cli.run(["contacts", "--json"]).json.arrayValue?.count == 2)
    }

    /// Each plaintext code carries a fresh card id, so codes shown one after the other cannot be linked
    /// by it; a scanner that reads both still keeps one contact (the same card is not stored twice).
    @Test func plaintextCodesCarryAFreshCardIdAndScanAsOneContact() throws {
        let cli = try ada()
        let viewer = try CLI()
        defer {
            cli.cleanUp()
            viewer.cleanUp()
        }
        let texts = try (0..<2).map { _ in
            try cli.run(["qr", "make", "--format", "plaintext", "--text"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let ids = try texts.map { text in try #require(try JSONParser.parse(text)["plaintext"]?["snapshot"]?["cardId"]?.stringValue, "\(text)") }
        #expect(ids[0] != ids[1], "the same card id in two codes links them")
        #expect(ids.allSatisfy { UUID(uuidString: $0)?.uuidString == $0 }, "upper-case UUIDs: \(ids)")

        let first = try viewer.run(["qr", "scan", texts[0], "--json"])
        #expect(first.code == 0 && first.json.arrayValue?.first?["merge"]?["outcome"] == "added", "\(first.stdout) \(first.stderr)")
        let second = try viewer.run(["qr", "scan", texts[1], "--json"])
        #expect(second.code == 0 && second.json.arrayValue?.first?["merge"]?["outcome"] == "unchanged", "\(second.stdout) \(second.stderr)")
        #expect(try viewer.run(["contacts", "--json"]).json.arrayValue?.count == 1)
    }

    @Test func theIOSAppsEncryptedFormatsAreExplainedAndNothingStored() throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        let zk = try py(["ios-zk"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let r = try cli.run(["qr", "scan", zk])
        #expect(r.code == 2 && r.stderr.contains("own devices"))
        let legacy = try cli.run(["qr", "scan", Base64.encode(Sodium.randomBytes(120))])
        #expect(legacy.code == 2 && legacy.stderr.contains("encrypted"))
        #expect(try cli.run(["contacts", "--json"]).json.arrayValue?.isEmpty == true)
    }

    /// What Nearcard makes, checked by the independent side as the iOS app (or any scanner) would.
    @Test func ourCodesAreReadableByOthers() throws {
        let cli = try ada()
        defer { cli.cleanUp() }
        try cli.run(["share", "--fields", "name,company,title,skills"])
        let plain = try cli.run(["qr", "make", "--format", "plaintext", "--text"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let p = try py(["check-plaintext", plain])
        #expect(p.code == 0, "\(p.stderr)")
        #expect(p.json["fields"] == ["name", "company", "title", "skills"])
        let signed = try cli.run(["qr", "make", "--format", "did-signed", "--text"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let s = try py(["check-didsigned", signed])
        #expect(s.code == 0, "\(s.stderr)")
        #expect(s.json["subject"]?["company"] == "Analytical Engines" && s.json["subject"]?["email"] == nil)
        let zk = try cli.run(["qr", "make", "--format", "zk", "--text", "--fields", "name,email"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let z = try py(["verify-zk", zk])
        #expect(z.code == 0, "\(z.stderr)")
        #expect(z.json["fields"] == ["name": "Ada Lovelace", "email": "ada@example.org"] && z.json["hidden"] == 5)
    }

    /// PNG out → zbarimg reads the exact text; PNGs from qrencode and segno → Nearcard reads them.
    @Test func imagesInteroperateWithOtherTools() throws {
        let cli = try ada()
        defer { cli.cleanUp() }
        let text = try cli.run(["qr", "make", "--format", "plaintext", "--text"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let png = cli.home.path + "-card.png"
        defer { try? FileManager.default.removeItem(atPath: png) }
        #expect(try cli.run(["qr", "make", "--format", "plaintext", "--out", png]).code == 0)
        let z = try CLI.run(executable: "/usr/bin/zbarimg", ["--quiet", "--raw", "-Sbinary", png])
        #expect(z.code == 0, "\(z.stderr)")
        // Each `qr make` is a new share (its id and times): everything else is the same card, byte for byte.
        let read = try JSONParser.parse(z.stdout.trimmingCharacters(in: .newlines))
        let made = try JSONParser.parse(text)
        #expect(Self.withoutShareMoment(read) == Self.withoutShareMoment(made), "zbarimg read: \(z.stdout)")
        #expect(read["plaintext"]?["snapshot"]?["name"] == "Ada Lovelace" && read["plaintext"]?["snapshot"]?["title"] == "Programmer")

        let other = try py(["ios-plaintext"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let viaQrencode = cli.home.path + "-qrencode.png"
        let viaSegno = cli.home.path + "-segno.png"
        defer {
            try? FileManager.default.removeItem(atPath: viaQrencode)
            try? FileManager.default.removeItem(atPath: viaSegno)
        }
        #expect(try CLI.run(executable: "/usr/bin/qrencode", ["-o", viaQrencode, "-s", "4", other]).code == 0)
        #expect(try py(["segno", other, viaSegno]).code == 0)
        for image in [viaQrencode, viaSegno] {
            let r = try cli.run(["qr", "scan", "--image", image, "--json"])
            #expect(r.code == 0, "\(image): \(r.stderr)")
            #expect(r.json.arrayValue?.first?["name"] == "Grace Hopper")
        }
        #expect(try cli.run(["qr", "scan", "--image", "/etc/hostname"]).code == 2)
        // One image that is not a code does not lose another's: each has its result, the exit says one failed.
        let mixed = try cli.run(["qr", "scan", "--image", "/etc/hostname", "--image", viaSegno, "--json"])
        let results = mixed.json.arrayValue ?? []
        #expect(
            mixed.code == 2 && results.count == 2 && results[0]["result"] == "error" && results[0]["message"]?.stringValue?.contains("/etc/hostname") == true
                && results[1]["name"] == "Grace Hopper", "\(mixed.stdout) \(mixed.stderr)")
        #expect(mixed.stderr.contains("1 of 2 codes could not be used"), "\(mixed.stderr)")
        // Standard input with no code on it is said to be, as an empty code is.
        let blank = try cli.run(["qr", "scan", "-"], stdin: "\n \n\n")
        #expect(blank.code == 2 && blank.stderr.contains("no QR text on standard input"), "\(blank.stderr)")
        #expect(try cli.run(["qr", "scan", "-"], stdin: "").code == 2)
    }

    /// A phone's photo of a code is a JPEG: slightly rotated, on a grey page, noisy, lossy. It scans.
    @Test func aPhotoOfACodeScans() throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        let other = try py(["ios-plaintext"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let photo = cli.auxiliary.appendingPathComponent("photo.jpg").path
        let made = try py(["photo", other, photo])
        #expect(made.code == 0, "\(made.stderr)")
        let r = try cli.run(["qr", "scan", "--image", photo, "--json"])
        #expect(r.code == 0, "\(r.stderr)")
        #expect(r.json.arrayValue?.first?["name"] == "Grace Hopper")
        // A damaged JPEG is a clear error naming the file, not a crash.
        let cut = cli.auxiliary.appendingPathComponent("cut.jpg").path
        let bytes = try Data(contentsOf: URL(fileURLWithPath: photo))
        try bytes.prefix(600).write(to: URL(fileURLWithPath: cut))
        let bad = try cli.run(["qr", "scan", "--image", cut])
        #expect(bad.code == 2 && bad.stderr.contains(cut) && bad.stderr.split(separator: "\n").count == 1, "\(bad.stderr)")
    }

    /// A card too large for one code: compressed, then chunked; frames scanned in any order.
    @Test func largeCardsAreChunkedAndReassembled() throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        try cli.run(["init", "--name", "Big"])
        let skills = (0..<32).map { _ in "--skill=" + Base64.urlEncode(Sodium.randomBytes(150)) + ":cat:expert" }
        #expect(try cli.run(["card", "set", "--name", "Big Card"] + skills).code == 0)
        let frames = try cli.run(["qr", "make", "--frames", "--format", "plaintext", "--fields", "name,skills", "--text"]).stdout
            .split(separator: "\n").map(String.init)
        #expect(frames.count > 1 && frames.allSatisfy { $0.hasPrefix("sqc1.") && $0.utf8.count <= 2331 }, "each frame fits one code at level M")
        let viewer = try CLI()
        defer { viewer.cleanUp() }
        let r = try viewer.run(["qr", "scan", "-", "--json"], stdin: frames.reversed().joined(separator: "\n"))
        #expect(r.code == 0, "\(r.stderr)")
        #expect(r.json.arrayValue?.last?["skills"]?.arrayValue?.count == 32)
        // One frame short: nothing stored, and the missing frame is named. Frames 1… alone do not show
        // whether they count from 0 or from 1 (the iOS app's), so the missing one is the first or the last.
        let partial = try viewer.run(["qr", "scan", "-", "--json"], stdin: frames.dropFirst().joined(separator: "\n"))
        #expect(partial.json.arrayValue?.last?["missing"] == [])
        #expect(
            partial.json.arrayValue?.last?["missingText"]?.stringValue?.contains("the first or the last frame") == true,
            "JSON says in words what the numbers cannot: \(partial.stdout)")
        #expect(partial.json.arrayValue?.last?["received"] == .number(Double(frames.count - 1)))
        let told = try viewer.run(["qr", "scan", "-"], stdin: frames.dropFirst().joined(separator: "\n"))
        #expect(
            told.code == 0 && told.stdout.contains("(missing: the first or the last frame (0 or \(frames.count):")
                && told.stdout.contains("Nothing was stored: give every frame to one qr scan"), "\(told.stdout)")
        // With frame 0 in hand the numbering is known, and frame 1 is named.
        let gap = frames.enumerated().filter { $0.offset != 1 }.map(\.element)
        let named = try viewer.run(["qr", "scan", "-", "--json"], stdin: gap.joined(separator: "\n"))
        #expect(named.json.arrayValue?.last?["missing"] == [1])
        #expect(try viewer.run(["qr", "scan", "-"], stdin: gap.joined(separator: "\n")).stdout.contains("(missing: 1)."))
    }

    /// Every card `card set` accepts can be shown: the issue's card (three profiles, many skills) in the
    /// default zk format no longer exits 70; --out writes frames each readable by zbarimg that scan back
    /// into the card; in a terminal the code fits the window, in frames when it must; a window too small
    /// for any frame says so in one line.
    @Test func everyCardCanBeShownAndFitsTheTerminal() throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        try cli.run(["init", "--name", "Ada"])
        let skills = (0..<30).map { "--skill=Skill number \($0) with a rather long name:category number \($0):expert" }
        let socials = [
            "mastodon:ada:https://example.social/@ada", "github:adalovelace:https://github.com/adalovelace",
            "linkedin:ada-lovelace:https://www.linkedin.com/in/ada-lovelace",
        ].map { "--social=" + $0 }
        #expect(try cli.run(["card", "set", "--name", "Ada Lovelace-Byron", "--email", "ada@example.org"] + socials + skills).code == 0)
        try cli.run(["share", "--fields", "name,email,socialNetworks,skills"])
        let viewer = try CLI()
        defer { viewer.cleanUp() }
        // One code unless asked: too large for one, it says how to get frames.
        let refused = try cli.run(["qr", "make", "--format", "did-signed", "--out", cli.home.path + "-one.png"])
        #expect(refused.code == 2 && refused.stderr.contains("--frames"), "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: cli.home.path + "-one.png"))
        for format in ["zk", "did-signed"] {
            let out = cli.home.path + "-\(format).png"
            let r = try cli.run(["qr", "make", "--frames", "--format", format, "--out", out])
            #expect(r.code == 0, "\(format): \(r.stderr)")
            let base = String(out.dropLast(4))
            let files = ([out] + (1...9).map { "\(base)-\($0).png" }).filter { FileManager.default.fileExists(atPath: $0) }
            defer { for f in files { try? FileManager.default.removeItem(atPath: f) } }
            #expect(files.count > (format == "did-signed" ? 1 : 0), "\(format): \(files)")
            for f in files {
                #expect(try CLI.run(executable: "/usr/bin/zbarimg", ["--quiet", "--raw", "-Sbinary", f]).code == 0, "\(f) unreadable")
            }
            let scan = try viewer.run(["qr", "scan", "--json"] + files.flatMap { ["--image", $0] })
            #expect(scan.code == 0, "\(scan.stderr)")
            #expect(scan.json.arrayValue?.last?["skills"]?.arrayValue?.count == 30, "\(format)")
        }
        // In a terminal: every line of the code fits the window's width, and each frame its height.
        let wrap = "stty cols 160 rows 50; \(CLI.executable.path) qr make --frames --format zk --home \(cli.home.path)"
        let drawn = try CLI.run(executable: "/usr/bin/timeout", ["-s", "INT", "4", "/usr/bin/script", "-qefc", wrap, "/dev/null"])
        let text = drawn.stdout.replacingOccurrences(of: "\u{1B}\\[[0-9;]*[A-Za-z]", with: "", options: .regularExpression)
        let art = text.split(whereSeparator: \.isNewline).filter { $0.contains("▀") || $0.contains("▄") || $0.contains("█") }
        #expect(!art.isEmpty && art.allSatisfy { $0.count <= 160 }, "wider than the window: \(art.map(\.count).max() ?? 0)")
        #expect(text.contains("frame 2 of "), "frames shown one after another")
        let perFrame =
            text.components(separatedBy: "frame 1 of ").first?.split(whereSeparator: \.isNewline)
            .filter { $0.contains("▀") || $0.contains("▄") || $0.contains("█") || $0.allSatisfy(\.isWhitespace) }.count ?? 0
        #expect(perFrame <= 50, "taller than the window: \(perFrame) lines")
        let tiny = try CLI.run(
            executable: "/usr/bin/script",
            ["-qefc", "stty cols 30 rows 12; \(CLI.executable.path) qr make --frames --format zk --home \(cli.home.path)", "/dev/null"])
        #expect(tiny.stdout.contains("too small to draw the code") && tiny.stdout.contains("--out card.png"), "\(tiny.stdout)")
    }

    /// `qr make --frames` in a default 80×24 terminal (issue 35.2): half blocks cannot draw even the
    /// smallest frame there, so the frames are drawn with sextant characters (2×3 modules a character)
    /// and it says so. What the terminal shows scans: each frame, drawn as a terminal draws the glyphs,
    /// is read by zbarimg, and the frames together give another person Ada's card.
    @Test func framesInADefaultTerminalScan() throws {
        let cli = try ada()
        defer { cli.cleanUp() }
        let viewer = try CLI()
        defer { viewer.cleanUp() }
        let drawn = try Self.terminal(80, 24, "qr make --frames --format plaintext --home \(cli.home.path)", stopAfter: 12)
        let text = Self.plain(drawn)
        #expect(!text.contains("too small"), "\(text)")
        #expect(text.contains("(sextant characters, to fit"), "it says how it drew the code: \(text.suffix(300))")
        let frames = try Self.scanned(drawn)
        #expect(frames.count > 1, "\(frames.count) frames")
        let scan = try viewer.run(["qr", "scan", "--json"] + frames.sorted())
        #expect(scan.code == 0, "\(frames.count) frames: \(scan.stderr)")
        #expect(scan.json.arrayValue?.last?["name"] == "Ada Lovelace", "\(scan.stdout)")
    }

    /// Issue 51, point 2: `qr make` draws one code, never frames unasked. In a window the smallest code of
    /// the card fits, that code (the line beside it says which format and why), and it scans; in 80×24,
    /// where no card code fits, one line says the size it needs — and with Ada's node listening, an
    /// invitation instead: one code, drawn beside its words, that a photo of the terminal turns into a
    /// completed exchange with Ada's node.
    @Test(.timeLimit(.minutes(2))) func aTerminalShowsOneCodeOrAnInvitation() throws {
        let cli = try ada()
        defer { cli.cleanUp() }
        let viewer = try CLI()
        defer { viewer.cleanUp() }
        try viewer.run(["init", "--name", "Vera"])
        try viewer.run(["card", "set", "--name", "Vera Viewer", "--email", "vera@example.org"])

        let roomy = try Self.terminal(100, 40, "qr make --home \(cli.home.path)", stopAfter: 8)
        let roomyText = Self.plain(roomy)
        #expect(!roomyText.contains("frame "), "\(roomyText)")
        #expect(roomyText.contains("plaintext: the smallest code of your card"), "it says which format and why: \(roomyText)")
        let one = try Self.scanned(roomy)
        #expect(one.count == 1, "one code: \(one.count)")
        let card = try viewer.run(["qr", "scan", "--json"] + one)
        #expect(card.json.arrayValue?.last?["name"] == "Ada Lovelace", "\(card.stdout) \(card.stderr)")

        let small = try Self.terminal(80, 24, "qr make --home \(cli.home.path); echo exit=$?", stopAfter: 8)
        let smallText = Self.plain(small)
        #expect(smallText.contains("needs a window of at least") && smallText.contains("exit=4"), "\(smallText)")
        #expect(!smallText.contains("frame "), "\(smallText)")
        #expect(try Self.scanned(small).isEmpty)

        // Ada's node listens: 80×24 shows an invitation to it.
        var environment = ProcessInfo.processInfo.environment
        environment["NEARCARD_HOME"] = cli.home.path
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-\(UUID().uuidString)-listen.log").path
        let node = try ChildProcess(
            [CLI.executable.path, "listen", "--no-discovery", "--interface", "lo", "--port", "0", "--accept", "all", "--jsonl"],
            environment: environment, log: log, pipes: true)
        defer {
            _ = node.stop(after: 5)
            try? FileManager.default.removeItem(atPath: log)
        }
        let started = Mutex(false)
        node.readLines { line in if line.contains("\"event\":\"started\"") { started.withLock { $0 = true } } }
        let deadline = Date().addingTimeInterval(20)
        while !started.withLock({ $0 }) && Date() < deadline { Thread.sleep(forTimeInterval: 0.1) }
        try #require(started.withLock { $0 }, "the node did not start")

        let invited = try Self.terminal(80, 24, "qr make --home \(cli.home.path)", stopAfter: 8)
        let invitedText = Self.plain(invited)
        #expect(invitedText.contains("Invitation to exchange with Ada Lovelace: 1"), "\(invitedText)")
        // What zbar read from the drawing is what Vera's scanner would hand `exchange`.
        let codes = try Self.scanned(invited)
        try #require(codes.count == 1 && codes[0].hasPrefix("nearcard-invite:"), "\(codes)")
        let exchange = try viewer.run(["exchange", "--invite", codes[0], "--yes"])
        #expect(exchange.code == 0, "\(exchange.stdout) \(exchange.stderr)")
        #expect(try cli.run(["contacts", "--json"]).stdout.contains("Vera Viewer"))
    }

    /// What a command draws in a `columns`×`rows` pseudo-terminal (SIGINT after `stopAfter` seconds).
    static func terminal(_ columns: Int, _ rows: Int, _ command: String, stopAfter seconds: Int) throws -> String {
        let wrap = "stty cols \(columns) rows \(rows); \(CLI.executable.path) \(command)"
        return try CLI.run(executable: "/usr/bin/timeout", ["-s", "INT", String(seconds), "/usr/bin/script", "-qefc", wrap, "/dev/null"]).stdout
    }

    static func plain(_ drawn: String) -> String {
        drawn.replacingOccurrences(of: "\u{1B}\\[[0-9;]*[A-Za-z]", with: "", options: .regularExpression)
    }

    /// The codes a terminal showed, read by zbarimg: each screen's code rows (what is drawn dark on light,
    /// between `ESC[30;47m` and `ESC[0m`, words beside them left out) drawn as a terminal draws the
    /// glyphs (a cell twice as tall as wide: 12×24 pixels for sextants, 6×12 for half blocks).
    static func scanned(_ drawn: String) throws -> [String] {
        var found: [String] = []
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-sextant-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        for (n, screen) in drawn.components(separatedBy: "\u{1B}[H\u{1B}[2J").enumerated() {
            let lines = screen.split(whereSeparator: \.isNewline).compactMap { line -> String? in
                guard let start = line.range(of: "\u{1B}[30;47m"), let end = line.range(of: "\u{1B}[0m", range: start.upperBound..<line.endIndex) else {
                    return nil
                }
                return String(line[start.upperBound..<end.lowerBound])
            }
            guard let width = lines.map({ $0.unicodeScalars.count }).max(), width > 0 else { continue }
            let sextants = lines.joined().unicodeScalars.contains { (0x1FB00...0x1FB3B).contains($0.value) }
            let (across, down) = sextants ? (2, 3) : (1, 2)
            let (mw, mh) = (6, 2 * across * 6 / down)
            let (w, h) = (width * across * mw, lines.count * down * mh)
            var px = [UInt8](repeating: 255, count: w * h)
            for (row, line) in lines.enumerated() {
                for (col, scalar) in line.unicodeScalars.enumerated() {
                    let bits = sextants ? Self.sextantBits(scalar) : Self.halfBlockBits(scalar)
                    for i in 0..<(across * down) where bits & (1 << i) != 0 {
                        let (x0, y0) = ((col * across + i % across) * mw, (row * down + i / across) * mh)
                        for y in y0..<(y0 + mh) { for x in x0..<(x0 + mw) { px[y * w + x] = 0 } }
                    }
                }
            }
            let file = dir.appendingPathComponent("screen-\(n).pgm").path
            try (Data("P5\n\(w) \(h)\n255\n".utf8) + Data(px)).write(to: URL(fileURLWithPath: file))
            let read = try CLI.run(executable: "/usr/bin/zbarimg", ["--quiet", "--raw", "-Sbinary", file])
            #expect(read.code == 0, "screen \(n) does not scan")
            if read.code == 0 { found.append(read.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) }
        }
        return Array(Set(found))
    }

    /// Which of a half-block cell's modules are dark (bit 0 top, bit 1 bottom).
    static func halfBlockBits(_ c: Unicode.Scalar) -> Int {
        switch c.value {
        case 0x2580: return 0b01
        case 0x2584: return 0b10
        case 0x2588: return 0b11
        default: return 0
        }
    }

    /// Which of a 2×3 block's modules a character darkens (bit i: 0 top-left … 5 bottom-right), as a
    /// terminal draws it: the half and full blocks, and Unicode's sextants U+1FB00….
    static func sextantBits(_ c: Unicode.Scalar) -> Int {
        switch c.value {
        case 0x20: return 0
        case 0x258C: return 0b010101
        case 0x2590: return 0b101010
        case 0x2588: return 0b111111
        case 0x1FB00...0x1FB3B:
            var bits = Int(c.value - 0x1FB00) + 1
            if bits >= 0b010101 { bits += 1 }
            if bits >= 0b101010 { bits += 1 }
            return bits
        default: return 0
        }
    }

    /// A card no exchange could carry is refused by `card set`, with what to shorten; nothing changes.
    @Test func aCardThatCouldNeverBeExchangedIsRefused() throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        try cli.run(["init", "--name", "Ada"])
        try cli.run(["card", "set", "--name", "Ada"])
        let huge = (0..<32).map { "--skill=" + String(repeating: "ж", count: 250) + "\($0):" + String(repeating: "c", count: 200) + ":expert" }
        let r = try cli.run(["card", "set", "--name", "Ada"] + huge)
        #expect(r.code == 2 && r.stderr.contains("could never be exchanged") && r.stderr.contains("skills"), "\(r.stderr)")
        #expect(try cli.run(["card", "show", "--json"]).json["skills"] == nil, "nothing was changed")
    }

    @Test func sce1IsRawDeflateBothWays() throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        let plain = try py(["ios-plaintext"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let packed = try py(["sce1-encode", plain]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try cli.run(["qr", "scan", packed]).code == 0, "Python's raw DEFLATE reads in Nearcard")
    }

    /// OID4VP: shown, consented, answered with a pairwise DID; the VP verifies in joserfc.
    @Test func presentAnswersARequestWithAPairwiseDID() throws {
        let cli = try ada()
        defer { cli.cleanUp() }
        let request =
            "openid4vp://authorize?client_id=https%3A%2F%2Fverifier.example.org&response_type=vp_token&response_mode=direct_post&nonce=abc123&state=st&response_uri=https%3A%2F%2Fverifier.example.org%2Fcb&dcql_query=%7B%22credentials%22%3A%5B%7B%22claims%22%3A%5B%7B%22path%22%3A%5B%22credentialSubject%22%2C%22company%22%5D%7D%5D%7D%5D%7D"
        let scan = try cli.run(["qr", "scan", request, "--json"])
        #expect(scan.json.arrayValue?.first?["result"] == "presentation-request")
        #expect(try cli.run(["contacts", "--json"]).json.arrayValue?.isEmpty == true, "a request stores no contact")
        let r = try cli.run(["present", request, "--yes", "--json"])
        #expect(r.code == 0, "\(r.stderr)")
        #expect(r.json["state"] == "st" && r.json["response_uri"] == "https://verifier.example.org/cb")
        let did = r.json["did"]!.stringValue!
        #expect(did != (try cli.run(["id", "--json"]).json["did"]!.stringValue!), "not the main DID")
        let v = try py(["verify-vp", r.json["vp_token"]!.stringValue!, "https://verifier.example.org", "abc123"])
        #expect(v.code == 0, "\(v.stderr)")
        #expect(v.json["subject"]?["company"] == "Analytical Engines" && v.json["subject"]?["email"] == nil)
        // The same verifier gets the same DID again; a malformed request is refused with its reason.
        #expect(try cli.run(["present", request, "--yes", "--json"]).json["did"]?.stringValue == did)
        let bad = try cli.run(["present", "openid4vp://authorize?client_id=x&state=s", "--yes"])
        #expect(bad.code == 2 && bad.stderr.contains("nonce"))
    }
}
