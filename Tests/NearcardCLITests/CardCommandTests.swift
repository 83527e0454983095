import Foundation
import NearcardCrypto
import NearcardTestSupport
import Testing

@Suite struct CardCommandTests {
    @Test func setShowAndShare() throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        #expect(try cli.run(["card", "show"]).code == 3, "no home yet: init first")
        #expect(try cli.run(["card", "set", "--email", "a@b"]).code == 2, "a new card needs a name")
        let set = try cli.run([
            "card", "set", "--name", "Ada Lovelace", "--email", "ada@example.org", "--company", "Analytical Engines",
            "--title", "Programmer", "--social", "mastodon:ada:https://example.social/@ada", "--skill", "Mathematics", "--json",
        ])
        #expect(set.code == 0, "\(set.stderr)")
        #expect(set.json["socialNetworks"]?.arrayValue?.first?["url"] == "https://example.social/@ada")
        // Changing one field keeps the others; an empty value removes a field.
        try cli.run(["card", "set", "--title", "Countess", "--email", ""])
        let shown = try cli.run(["card", "show", "--json"]).json
        #expect(shown["title"] == "Countess")
        #expect(shown["email"] == nil)
        #expect(shown["company"] == "Analytical Engines")

        #expect(try cli.run(["share", "--json"]).json["fields"] == ["name", "company", "title"], "the default selection")
        #expect(try cli.run(["share", "--fields", "email,skills", "--json"]).json["fields"] == ["name", "email", "skills"])
        #expect(try cli.run(["share", "--json"]).json["fields"] == ["name", "email", "skills"], "kept")
        let bad = try cli.run(["share", "--fields", "name,age"])
        #expect(bad.code == 2)
        #expect(bad.stderr.contains("age"))
    }

    /// `card set`'s field options are the field table's rows (`card fields --json`): each text field is
    /// `--OPTION VALUE` or `--OPTION=VALUE`, removed by an empty value or `--no-OPTION`; a list option
    /// repeats; an unknown option names the ones there are. A field added to the table is checked here
    /// without a line of this test.
    @Test func everyFieldOfTheTableIsAnOption() throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        let table = try cli.run(["card", "fields", "--json"]).json.arrayValue ?? []
        #expect(table.count >= 7 && table.first?["name"] == "name")
        #expect(try cli.run(["card", "fields"]).stdout.contains("--social"))
        try cli.run(["card", "set", "--name", "Ada Lovelace"])
        for row in table where row["kind"] == "text" && row["name"] != "name" {
            let (field, option) = (row["name"]!.stringValue!, row["option"]!.stringValue!)
            let (value, typed) =
                switch row["shape"]?.stringValue {
                case "emailAddress": ("\(field)@example.org", "other@example.org")
                case "phoneNumber": ("+44 20 7946 0000", "020 7946 0001")
                default: ("The \(field)", "Another \(field)")
                }
            var set = try cli.run(["card", "set", "--\(option)", value, "--json"])
            #expect(set.code == 0 && set.json[field]?.stringValue == value, "\(option): \(set.stderr)")
            set = try cli.run(["card", "set", "--\(option)=\(typed)", "--json"])
            #expect(set.code == 0 && set.json[field]?.stringValue == typed, "--\(option)=: \(set.stderr)")
            set = try cli.run(["card", "set", "--no-\(option)", "--json"])
            #expect(set.code == 0 && set.json[field] == nil, "--no-\(option): \(set.stderr)")
            #expect(set.json["name"] == "Ada Lovelace", "the name stays")
        }
        var r = try cli.run(["card", "set", "--social", "mastodon:ada", "--social=github:ada:https://github.com/ada", "--json"])
        #expect(r.json["socialNetworks"]?.arrayValue?.count == 2, "\(r.stderr)")
        r = try cli.run(["card", "set", "--clear-social", "--json"])
        #expect(r.code == 0 && r.json["socialNetworks"] == nil, "the older --clear-social still removes the list")
        r = try cli.run(["card", "set", "--colour", "blue"])
        #expect(r.code == 64 && r.stderr.contains("unknown option \"--colour\"") && r.stderr.contains("--email"), "\(r.stderr)")
        r = try cli.run(["card", "set", "--title"])
        #expect(r.code == 64 && r.stderr.contains("--title needs a value"), "\(r.stderr)")
        r = try cli.run(["card", "set", "--no-name"])
        #expect(r.code == 2 && r.stderr.contains("a card always has a name"), "\(r.stderr)")
        // A line break in a field is named as one (not "a control character").
        r = try cli.run(["card", "set", "--title", "Countess\nof Lovelace"])
        #expect(r.code == 2 && r.stderr.contains("\"title\" contains a line break; a card's text is one line"), "\(r.stderr)")
        r = try cli.run(["card", "set", "--title", "A", "--title", "B"])
        #expect(r.code == 64 && r.stderr.contains("given twice"), "\(r.stderr)")
        #expect(try cli.run(["card", "set", "--help"]).stdout.contains("--skill NAME[:CATEGORY[:PROFICIENCY]]"))
        // contacts add takes the fields people type for someone else.
        let added = try cli.run(["contacts", "add", "--name", "Grace Hopper", "--title=Rear Admiral", "--note", "met at the booth", "--json"])
        #expect(added.code == 0 && added.json["title"] == "Rear Admiral" && added.json["notes"] == "met at the booth", "\(added.stderr)")
        #expect(try cli.run(["contacts", "add", "--title", "nameless"]).code == 64)
    }

    /// An email address, phone number or profile URL that does not have its shape is refused naming
    /// the option and what it should look like; the card is left as it was. Names stay free.
    @Test func typedFieldsMustHaveTheirShape() throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        try cli.run(["card", "set", "--name", "Ada Lovelace", "--email", "ada@example.org"])
        let cases: [([String], String)] = [
            (["--email", "not an email"], "nearcard: --email \"not an email\" is not an email address (NAME@DOMAIN, e.g. ada@example.org)\n"),
            (["--email", "ada@localhost"], "nearcard: --email \"ada@localhost\" is not an email address (NAME@DOMAIN, e.g. ada@example.org)\n"),
            (["--phone", "call me"], "nearcard: --phone \"call me\" is not a phone number (digits, spaces and + - ( ) . /, e.g. +44 20 7946 0000)\n"),
            (
                ["--social", "mastodon:ada:example.social/@ada"],
                "nearcard: --social \"mastodon:ada:example.social/@ada\": the URL is not a web address (http:// or https:// and a host, e.g. https://example.social/@ada)\n"
            ),
        ]
        for (arguments, line) in cases {
            let r = try cli.run(["card", "set"] + arguments)
            #expect(r.code == 2 && r.stderr == line, "\(arguments): \(r.code) \(r.stderr)")
        }
        #expect(try cli.run(["card", "show", "--json"]).json["email"] == "ada@example.org", "a refused change changes nothing")
        for arguments in [
            ["--phone", "+44 (0)20 7946-0000"], ["--email", "a.b+c@mail.example.co.uk"], ["--name", "Ada ✦ 42 @ home"], ["--social", "x:ada"],
        ] {
            let r = try cli.run(["card", "set"] + arguments)
            #expect(r.code == 0, "\(arguments): \(r.stderr)")
        }
        let added = try cli.run(["contacts", "add", "--name", "Grace", "--phone", "one two"])
        #expect(added.code == 2 && added.stderr.hasPrefix("nearcard: --phone \"one two\" is not a phone number"), "\(added.stderr)")
    }

    /// A right-to-left name is printed isolated (FSI … PDI) so it cannot reorder the line around it; a
    /// left-to-right one is printed as it is; the contacts table stays aligned (the isolates take no column).
    @Test func rightToLeftTextIsIsolatedInTheTerminal() throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        try cli.run(["card", "set", "--name", "דורה לוי", "--company", "Analytical Engines"])
        let shown = try cli.run(["card", "show"]).stdout
        #expect(shown.contains("\u{2068}דורה לוי\u{2069}") && shown.contains("Analytical Engines") && !shown.contains("\u{2068}Analytical"), "\(shown)")
        try cli.run(["contacts", "add", "--name", "سارة", "--company", "Co"])
        try cli.run(["contacts", "add", "--name", "Ada", "--company", "Co"])
        let table = try cli.run(["contacts"]).stdout.split(separator: "\n").map(String.init)
        let arabic = try #require(table.first { $0.contains("سارة") })
        let latin = try #require(table.first { $0.contains("Ada") })
        #expect(arabic.contains("\u{2068}سارة\u{2069}"), "\(arabic)")
        #expect(arabic.range(of: "Co")!.lowerBound.utf16Offset(in: arabic) - 2 == latin.range(of: "Co")!.lowerBound.utf16Offset(in: latin), "aligned: \(table)")
    }

    @Test func importVCardAndJSON() throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        let vcf = try cli.write("BEGIN:VCARD\r\nVERSION:4.0\r\nFN:Grace Hopper\r\nEMAIL:grace@navy.mil\r\nORG:US Navy\r\nEND:VCARD\r\n", to: "g.vcf")
        let imported = try cli.run(["card", "import", vcf, "--json"])
        #expect(imported.code == 0, "\(imported.stderr)")
        #expect(imported.json["name"] == "Grace Hopper" && imported.json["company"] == "US Navy")
        let json = try cli.write("{\"name\":\"Ada\",\"skills\":[{\"name\":\"Maths\"}]}", to: "a.json")
        #expect(try cli.run(["card", "import", json, "--json"]).json["skills"]?.arrayValue?.count == 1)

        let truncated = try cli.write("BEGIN:VCARD\r\nVERSION:4.0\r\nFN:Grace", to: "t.vcf")
        let r1 = try cli.run(["card", "import", truncated])
        #expect(r1.code == 2)
        #expect(r1.stderr.contains(truncated) && r1.stderr.contains("END:VCARD"))
        let badKey = try cli.write("{\"name\":\"Ada\",\"emial\":\"x\"}", to: "b.json")
        let r2 = try cli.run(["card", "import", badKey])
        #expect(r2.code == 2)
        #expect(r2.stderr.contains("emial"))
        let badJSON = try cli.write("{\"name\":\n\"Ada\",}", to: "c.json")
        #expect(try cli.run(["card", "import", badJSON]).stderr.contains("line 2"))
        #expect(try cli.run(["card", "show", "--json"]).json["name"] == "Ada", "failed imports changed nothing")
        // A file of several cards is not read for its first: your card is one.
        try cli.run(["contacts", "add", "--name", "Grace Hopper"])
        try cli.run(["contacts", "add", "--name", "Alan Turing"])
        let book = try cli.write(try cli.run(["contacts", "export", "--vcard"]).stdout, to: "book.vcf")
        let several = try cli.run(["card", "import", book])
        #expect(several.code == 2 && several.stderr.contains("holds 2 cards") && several.stderr.contains("contacts import"), "\(several.stderr)")
        #expect(try cli.run(["card", "show", "--json"]).json["name"] == "Ada", "your card is unchanged")
    }
}

@Suite struct ContactsCommandTests {
    /// Looking never creates: without a home, read-only commands say how to make one (exit 3) and
    /// leave no directory behind.
    @Test func readOnlyCommandsNeverCreateAHome() throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        for args in [["id"], ["contacts"], ["contacts", "show", "Ada"], ["inbox"], ["outbox"], ["contacts", "export", "--json"], ["card", "show"]] {
            let r = try cli.run(args)
            #expect(r.code == 3, "\(args): \(r.stderr)")
            #expect(r.stderr.contains("nearcard init --name"), "\(args): \(r.stderr)")
            #expect(!FileManager.default.fileExists(atPath: cli.home.path), "\(args) created the home")
        }
    }

    /// At a terminal, delete shows whom and asks: "n" keeps the contact, "y" deletes it.
    @Test func deleteAsksAtATerminal() throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        try cli.run(["contacts", "add", "--name", "Ada Lovelace", "--company", "Analytical Engines"])
        let script = """
            import os, sys, pexpect
            for answer in ("n", "y"):
                c = pexpect.spawn(sys.argv[1], ["contacts", "delete", "ada lovelace"], env=dict(os.environ, NEARCARD_HOME=sys.argv[2]), encoding="utf-8", timeout=60)
                c.expect("Ada Lovelace .*Analytical Engines")
                c.expect_exact("Delete this contact? [y/N]")
                c.sendline(answer)
                c.expect(pexpect.EOF)
                c.close()
                print(answer, c.exitstatus)
            """
        let r = try CLI.run(executable: CLI.python, ["-c", script, CLI.executable.path, cli.home.path])
        #expect(r.stdout == "n 7\ny 0\n", "declining is exit 7, as a declined exchange: \(r.stdout) \(r.stderr)")
        #expect(try cli.run(["contacts", "--json"]).json.arrayValue?.isEmpty == true)
    }

    /// Export then import: nothing doubled; a new file's cards are added, look-alikes flagged.
    @Test func importMergesInsteadOfDoubling() throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        try cli.run(["contacts", "add", "--name", "Grace Hopper", "--email", "grace@navy.mil"])
        try cli.run(["contacts", "add", "--name", "Alan Turing"])
        let vcf = try cli.run(["contacts", "export", "--vcard"]).stdout
        let file = try cli.write(
            vcf
                + "BEGIN:VCARD\r\nVERSION:4.0\r\nFN:Ada Lovelace\r\nEND:VCARD\r\nBEGIN:VCARD\r\nVERSION:4.0\r\nFN:A. Turing\r\nEMAIL:alan@bletchley.uk\r\nEND:VCARD\r\nBEGIN:VCARD\r\nVERSION:4.0\r\nFN:alan turing\r\nTEL:+44 1908 640404\r\nEND:VCARD\r\n",
            to: "book.vcf")
        let r = try cli.run(["contacts", "import", file])
        #expect(r.code == 0, "\(r.stderr)")
        #expect(r.stdout.contains("3 added, 2 already in your contacts (1 possible duplicate among the added)"), "\(r.stdout)")
        #expect(try cli.run(["contacts", "--json"]).json.arrayValue?.count == 5)
        #expect(try cli.run(["contacts", "import", file]).stdout.contains("0 added, 5 already in your contacts"))
        let bad = try cli.write("BEGIN:VCARD\r\nFN:Broken\r\n", to: "bad.vcf")
        let b = try cli.run(["contacts", "import", bad])
        #expect(b.code == 2 && b.stderr.contains(bad))
        // The JSON export reads back too (cards and notes; what it claims of verification is not taken).
        try cli.run(["contacts", "add", "--name", "Edsger Dijkstra", "--note", "THE multiprogramming"])
        let json = try cli.write(try cli.run(["contacts", "export", "--json"]).stdout, to: "book.json")
        let elsewhere = try CLI()
        defer { elsewhere.cleanUp() }
        try elsewhere.run(["init", "--name", "Bob"])
        let back = try elsewhere.run(["contacts", "import", json])
        #expect(back.code == 0 && back.stdout.contains("6 added"), "\(back.stdout) \(back.stderr)")
        let edsger = try elsewhere.run(["contacts", "show", "edsger dijkstra", "--json"]).json
        #expect(edsger["notes"] == "THE multiprogramming" && edsger["verificationStatus"] == "unverified", "\(edsger)")
        let wrongItem = try cli.write(#"[{"name":"Ada"},{"nmae":"Typo"}]"#, to: "typo.json")
        let w = try elsewhere.run(["contacts", "import", wrongItem])
        #expect(w.code == 2 && w.stderr.contains("item 2") && w.stderr.contains("nmae"), "\(w.stderr)")
    }

    /// Output that does not reach its file is not a success: a full disk is exit 5 with the reason.
    /// (A reader that has gone, `| head`, ends the command quietly with 0: IdentityCommandTests.)
    @Test func outputThatCannotBeWrittenIsNotASuccess() throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        try cli.run(["contacts", "add", "--name", "Grace Hopper"])
        let full = try CLI.run(
            executable: "/bin/sh", ["-c", "\"$0\" contacts export --vcard > /dev/full", CLI.executable.path],
            env: ["NEARCARD_HOME": cli.home.path])
        #expect(full.code == 5 && full.stderr.contains("cannot write standard output: No space left on device"), "\(full.code) \(full.stderr)")
        let json = try CLI.run(
            executable: "/bin/sh", ["-c", "\"$0\" contacts --json > /dev/full", CLI.executable.path],
            env: ["NEARCARD_HOME": cli.home.path])
        #expect(json.code == 5, "\(json.code) \(json.stderr)")
    }

    @Test func addListShowDeleteExport() throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        let added = try cli.run(["contacts", "add", "--name", "Grace Hopper", "--email", "grace@navy.mil", "--note", "COBOL", "--json"]).json
        #expect(added["source"] == "manual")
        #expect(added["verificationStatus"] == "unverified")
        let id = added["id"]!.stringValue!
        #expect(id == id.uppercased())
        try cli.run(["contacts", "add", "--name", "Alan Turing"])

        let list = try cli.run(["contacts", "--json"]).json.arrayValue!
        #expect(list.map { $0["name"]!.stringValue! } == ["Alan Turing", "Grace Hopper"])
        let human = try cli.run(["contacts"]).stdout
        #expect(human.contains("Grace Hopper") && human.contains("unverified"))
        #expect(try cli.run(["contacts", "show", String(id.prefix(6)), "--json"]).json["email"] == "grace@navy.mil")
        #expect(try cli.run(["contacts", "show", "grace HOPPER"]).stdout.contains("grace@navy.mil"))
        // The one matcher (docs/DECISIONS.md): a reference that names no one (a part of a name names no one) exits 2.
        #expect(try cli.run(["contacts", "show", "hopper"]).code == 2, "a part of a name is not a reference")
        #expect(try cli.run(["contacts", "show", "nobody"]).code == 2)

        let vcard = try cli.run(["contacts", "export", "--vcard"]).stdout
        #expect(vcard.components(separatedBy: "BEGIN:VCARD").count == 3)
        #expect(vcard.contains("FN:Grace Hopper\r\n"))
        let out = cli.home.path + "-export.json"
        defer { try? FileManager.default.removeItem(atPath: out) }
        #expect(try cli.run(["contacts", "export", "--graph", "--out", out]).code == 0)
        let graph = try JSONParser.parse(String(contentsOfFile: out, encoding: .utf8))
        #expect(graph["edges"]?.arrayValue?.count == 2)
        #expect(fileMode(out) == 0o600)
        #expect(try cli.run(["contacts", "export"]).code == 64, "a format must be chosen")

        let unasked = try cli.run(["contacts", "delete", id])
        #expect(unasked.code == 2 && unasked.stderr.contains("pass --yes"), "no terminal to ask at: refused")
        #expect(try cli.run(["contacts", "delete", "o", "--yes"]).code == 2, "a letter of her name names no one")
        #expect(try cli.run(["contacts", "delete", id, "--yes"]).code == 0)
        #expect(try cli.run(["contacts", "--json"]).json.arrayValue?.count == 1)
    }

    @Test func corruptDatabaseIsAOneLineErrorAndUntouched() throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        try FileManager.default.createDirectory(at: cli.home, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let path = cli.home.appendingPathComponent("nearcard.sqlite").path
        try Data(repeating: 0x42, count: 4096).write(to: URL(fileURLWithPath: path))
        TestAccount.give(cli.home.path)
        TestAccount.give(path)
        let r = try cli.run(["contacts"])
        #expect(r.code == 5)
        #expect(r.stderr.contains(path) && r.stderr.split(separator: "\n").count == 1)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(repeating: 0x42, count: 4096))
    }
}
