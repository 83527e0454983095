import Foundation
import NearcardCrypto
import NearcardProcess
import NearcardSimulation
import NearcardTestSupport
import Testing

/// Version 3 beside version 2 (docs/PROTOCOL.md §21), against the independent Python peer in both
/// roles: a version-3 peer exchanges in version 3 (a field the node does not know set aside); a
/// version-2 peer still exchanges, dialling the node or dialled by it (the node falls back on
/// `unsupported_version`), and the contact says its card is of the older kind; mail and invitations
/// work across the two.
@Suite(.serialized) struct VersionInteropTests {
    let peer = CLI.packageRoot.appendingPathComponent("Tests/Interop/python_peer.py").path
    func log(_ name: String) -> URL { FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-\(UUID().uuidString)-\(name).log") }

    func contact(_ person: TestPerson, named name: String, tries: Int = 50) throws -> JSONValue? {
        for _ in 0..<tries {
            if let c = try person.contacts().first(where: { $0["name"]?.stringValue == name }) { return c }
            usleep(100_000)
        }
        return nil
    }

    /// The Python peer dials the node: in version 3 (16 digests both ways, its unknown field checked and
    /// dropped), then — another peer — in version 2; each then delivers a follow-up message (mail is
    /// `nearcard-mail/2` whatever the exchange's version) and presents a QR invitation.
    @Test func peersOfBothVersionsDialTheNode() throws {
        let node = try TestPerson(name: "Swift Node", card: ["--company", "Nearcard", "--email", "swift@example.org", "--pronouns", "she/her"])
        defer { node.cli.cleanUp() }
        #expect(try node.cli.run(["share", "--fields", "name,company,email,pronouns"]).code == 0)
        let lab = try Lab("v3")
        let (process, port) = try lab.listen(home: node.home, ["--no-discovery", "--accept", "all"], log: log("node"))
        defer { process.kill() }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }

        for version in [3, 2] {
            let name = "Python v\(version)"
            let state = dir.appendingPathComponent("v\(version).json").path
            let r = try lab.run(
                [CLI.python, peer, "127.0.0.1", String(port), "--name", name, "--speak", String(version), "--state", state]
                    + (version == 3 ? ["--extra", "pronouns=they/them", "--extra", "favouriteColour=teal"] : []))
            #expect(r.code == 0, "\(r.stdout) \(r.stderr)")
            for (check, ok) in r.json["checks"]?.objectValue ?? [:] { #expect(ok == true, "v\(version): python's check \(check)") }
            #expect(r.json["version"] == .number(Double(version)))
            // Pronouns travel in version 3 only: a version-2 peer is sent the seven fields it knows.
            var expected: JSONValue = ["company": "Nearcard", "email": "swift@example.org", "name": "Swift Node"]
            if version == 3 { expected = ["company": "Nearcard", "email": "swift@example.org", "name": "Swift Node", "pronouns": "she/her"] }
            #expect(r.json["theirCard"] == expected)
            #expect(r.json["hiddenFields"] == .number(version == 3 ? 12 : 4), "16 digests (4 opened) or 7 (3 opened)")
            let c = try #require(try contact(node, named: name))
            #expect(c["exchangeVersion"] == .number(Double(version)))
            #expect(c["company"] == "Python Software" && c["verificationStatus"] == "verified")
            #expect(c["favouriteColour"] == nil, "nothing of a field the node does not know is kept")
            #expect(c["pronouns"] == (version == 3 ? "they/them" : .null))
            if version == 2 {
                #expect(c["olderCard"]?.stringValue?.hasPrefix("of the older kind") == true, "\(c)")
                let shown = try node.cli.run(["contacts", "show", name])
                #expect(shown.stdout.contains("of the older kind: their Nearcard speaks exchange version 2"), "\(shown.stdout)")
            } else {
                #expect(c["olderCard"] == .null)
            }
            // Mail keeps working with a contact of either version.
            let mail = try lab.run([CLI.python, peer, "127.0.0.1", String(port), "--state", state, "--mail-text", "after v\(version)"])
            #expect(mail.code == 0, "\(mail.stdout) \(mail.stderr)")
            // And an invitation: the same peer, presenting one the node made.
            let invite = try lab.nearcard(["qr", "invite", "--text", "--port", String(port)], home: node.home).stdout.trimmingCharacters(
                in: .whitespacesAndNewlines)
            let invited = try lab.run([CLI.python, peer, "--invite", invite, "--name", name + " invited", "--speak", String(version)])
            #expect(invited.code == 0, "\(invited.stdout) \(invited.stderr)")
            let ci = try #require(try contact(node, named: name + " invited"))
            #expect(ci["tags"]?.arrayValue?.contains("invited by QR") == true && ci["exchangeVersion"] == .number(Double(version)))
        }
        let inbox = try node.cli.run(["inbox", "--json"]).json.arrayValue ?? []
        #expect(Set(inbox.compactMap { $0["text"]?.stringValue }) == ["after v3", "after v2"], "\(inbox)")
    }

    /// A picture with a camera's EXIF and a GPS position, made by Pillow: `size` pixels, JPEG.
    static func pictureWithGPS(_ path: String, size: (Int, Int) = (640, 480), quality: Int = 95) throws {
        let script = """
            import sys
            from PIL import Image
            img = Image.new("RGB", (\(size.0), \(size.1)), (200, 120, 40))
            for x in range(0, \(size.0), 16):
                for y in range(\(size.1)):
                    img.putpixel((x, y), (10, 10, 200))
            exif = Image.Exif()
            exif[0x010F] = "CameraMaker"
            exif[0x8825] = {1: "N", 2: (51.0, 30.0, 0.0), 3: "W", 4: (0.0, 7.0, 0.0)}
            img.save(sys.argv[1], exif=exif.tobytes(), quality=\(quality))
            """
        let r = try CLI.run(executable: CLI.python, ["-c", script, path])
        #expect(r.code == 0, "\(r.stderr)")
    }

    /// Two nodes exchange photos and pronouns (version 3): the photo that arrives is the square JPEG the
    /// sender's node made, with nothing of the file it was made from — the camera's EXIF and GPS position
    /// gone. A peer's photo that is not one (metadata, not square) is `bad_card` naming the photo.
    @Test func photosAndPronounsTravelWithoutMetadata() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let picture = dir.appendingPathComponent("camera.jpg").path
        try Self.pictureWithGPS(picture)
        let original = try #require(FileManager.default.contents(atPath: picture))
        #expect(original.range(of: Data("CameraMaker".utf8)) != nil, "the test picture carries EXIF")
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: dir.path)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: picture)

        let ada = try TestPerson(name: "Ada Lovelace", card: ["--pronouns", "she/her", "--photo", picture])
        let grace = try TestPerson(name: "Grace Hopper", card: ["--pronouns", "she/her", "--photo", picture])
        defer {
            ada.cli.cleanUp()
            grace.cli.cleanUp()
        }
        for person in [ada, grace] { #expect(try person.cli.run(["share", "--fields", "name,pronouns,photo"]).code == 0) }
        let lab = try Lab("ph")
        let (node, port) = try lab.listen(home: ada.home, ["--no-discovery", "--accept", "all"], log: log("ada"))
        defer { node.kill() }
        let r = try lab.nearcard(["exchange", "127.0.0.1:\(port)", "--yes", "--json"], home: grace.home)
        #expect(r.code == 0, "\(r.stdout) \(r.stderr)")
        #expect(r.json["pronouns"] == "she/her" && r.json["exchangeVersion"] == 3)
        for (person, other) in [(grace, "Ada Lovelace"), (ada, "Grace Hopper")] {
            let c = try #require(try contact(person, named: other))
            let uri = try #require(c["photo"]?.stringValue)
            let jpeg = try Base64.decode(String(uri.dropFirst("data:image/jpeg;base64,".count)))
            #expect(jpeg.count <= 16 * 1024 && jpeg.starts(with: [0xFF, 0xD8]))
            let bytes = Data(jpeg)
            for trace in ["Exif", "CameraMaker", "JFIF"] { #expect(bytes.range(of: Data(trace.utf8)) == nil, "\(trace) left the sender's laptop") }
            #expect(!jpeg.contains(0xE1) || Self.markers(jpeg).allSatisfy { !(0xE0...0xEF).contains($0) && $0 != 0xFE }, "no APPn or comment segment")
            #expect(c["pronouns"] == "she/her")
            // `contacts show` says a photo is held; `contacts export --photo` writes it.
            #expect(try person.cli.run(["contacts", "show", other]).stdout.contains("256×256 JPEG photo"))
            let out = person.home.appendingPathComponent("photos").path
            #expect(try person.cli.run(["contacts", "export", "--photo", out]).code == 0)
            let files = try FileManager.default.contentsOfDirectory(atPath: out)
            #expect(files.count == 1 && files[0].hasSuffix(".jpg"))
            #expect(FileManager.default.contents(atPath: out + "/" + files[0]) == bytes)
        }

        // A peer whose photo is not one a card may carry: refused, by name, and nothing stored.
        let exifJPEG = dir.appendingPathComponent("small-exif.jpg").path
        try Self.pictureWithGPS(exifJPEG, size: (64, 64), quality: 50)
        let wide = dir.appendingPathComponent("wide.jpg").path
        let made = try CLI.run(
            executable: CLI.python, ["-c", "import sys; from PIL import Image; Image.new('RGB', (96, 64), (1, 2, 3)).save(sys.argv[1], quality=60)", wide])
        #expect(made.code == 0)
        // (Pillow writes a JFIF header in every JPEG: the wide one is refused for that before its shape,
        // which `PhotoTests.aReceivedPhotoIsCheckedWhole` checks.)
        for (file, why) in [(exifJPEG, "carries metadata"), (wide, "photo")] {
            let uri = "data:image/jpeg;base64," + Base64.encode(Array(try #require(FileManager.default.contents(atPath: file))))
            let p = try lab.run([CLI.python, peer, "127.0.0.1", String(port), "--name", "Bad Photo", "--speak", "3", "--extra", "photo=\(uri)"])
            #expect(p.code == 1 && p.json["aborted"]?["code"] == "bad_card", "\(p.stdout)")
            #expect(
                p.json["aborted"]?["reason"]?.stringValue?.contains("photo") == true && p.json["aborted"]?["reason"]?.stringValue?.contains(why) == true,
                "\(p.stdout)")
        }
        #expect(try contact(ada, named: "Bad Photo", tries: 3) == nil)
    }

    /// The marker codes of a JPEG's segments before its first scan.
    static func markers(_ jpeg: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var i = 2
        while i + 4 <= jpeg.count, jpeg[i] == 0xFF {
            let m = jpeg[i + 1]
            out.append(m)
            if m == 0xDA { break }
            i += 2 + (Int(jpeg[i + 2]) << 8 | Int(jpeg[i + 3]))
        }
        return out
    }

    /// The node dials the Python peer by address. A version-2 responder answers the node's version-3
    /// hello with `unsupported_version`; the node dials again at once in version 2 and sends only the
    /// seven fields version 2 knows. A version-3 responder is answered in version 3, in one session.
    @Test(arguments: [2, 3]) func theNodeDialsAResponderOfEitherVersion(_ version: Int) throws {
        let node = try TestPerson(name: "Swift Node", card: ["--company", "Nearcard", "--pronouns", "she/her"])
        defer { node.cli.cleanUp() }
        #expect(try node.cli.run(["share", "--fields", "name,company,pronouns"]).code == 0)
        let lab = try Lab("d\(version)")
        let port = 47_900 + version
        let responderLog = log("responder")
        let responder = try lab.spawn(
            [CLI.python, peer, "--listen", String(port), "--sessions", version == 2 ? "2" : "1", "--speak", String(version), "--name", "Python Responder"],
            log: responderLog)
        defer { responder.kill() }
        var listening = false
        for _ in 0..<50 where !listening {
            usleep(100_000)
            listening = (try? String(contentsOf: responderLog, encoding: .utf8))?.contains("listening") == true
        }
        #expect(listening)
        let r = try lab.nearcard(["exchange", "127.0.0.1:\(port)", "--yes", "--json"], home: node.home)
        #expect(r.code == 0, "\(r.stdout) \(r.stderr)")
        #expect(r.json["exchangeVersion"] == .number(Double(version)))
        responder.wait()
        let sessions = try String(contentsOf: responderLog, encoding: .utf8).split(separator: "\n").dropFirst().map { try JSONParser.parse(String($0)) }
        if version == 2 {
            #expect(sessions.count == 2, "\(sessions)")
            #expect(sessions.first?["version"] == 3 && sessions.first?["aborted"]?["code"] == "unsupported_version")
        } else {
            #expect(sessions.count == 1, "\(sessions)")
        }
        let last = try #require(sessions.last)
        #expect(last["completed"] == true && last["version"] == .number(Double(version)), "\(last)")
        for (check, ok) in last["checks"]?.objectValue ?? [:] { #expect(ok == true, "v\(version): python's check \(check)") }
        #expect(
            last["theirCard"]
                == (version == 3 ? ["company": "Nearcard", "name": "Swift Node", "pronouns": "she/her"] : ["company": "Nearcard", "name": "Swift Node"]))
    }
}
