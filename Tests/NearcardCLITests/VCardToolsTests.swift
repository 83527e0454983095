import Foundation
import NearcardCrypto
import NearcardTestSupport
import Testing

/// The vCards Nearcard writes (`contacts export --vcard`, the web app's download and CardDAV share one
/// serializer) as other address books read them: Python's vobject and khard (Tests/Interop/vcard_check.py).
@Suite struct VCardToolsTests {
    @Test func addressBooksReadNamesWebPagesAndPronouns() throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        try cli.run(["init", "--name", "Ada"])
        // A photo as Nearcard makes one (from a PNG Pillow draws), to put on Grace's card.
        let png = cli.home.deletingLastPathComponent().appendingPathComponent("pic-\(UUID().uuidString).png").path
        defer { try? FileManager.default.removeItem(atPath: png) }
        #expect(
            try CLI.run(executable: CLI.python, ["-c", "import sys; from PIL import Image; Image.new('RGB', (300, 200), (9, 99, 199)).save(sys.argv[1])", png])
                .code == 0)
        let made = try cli.run(["card", "set", "--name", "Ada", "--photo", png, "--json"])
        let photo = try #require(made.json["photo"]?.stringValue, "\(made.stderr)")
        let people: JSONValue = [
            [
                "name": "Grace Hopper", "pronouns": "she/her", "title": "Rear Admiral", "photo": .string(photo),
                "socialNetworks": [
                    ["platform": "mastodon", "username": "grace", "url": "https://navy.social/@grace"], ["platform": "signal", "username": "grace.01"],
                ],
            ],
            ["name": "Ludwig van Beethoven", "company": "Wiener Klassik"],
            ["name": "Lovelace, Ada", "email": "ada@example.org"],
            ["name": "李小龙"],
        ]
        let file = cli.home.deletingLastPathComponent().appendingPathComponent("people-\(UUID().uuidString).json")
        try people.prettyText.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let imported = try cli.run(["contacts", "import", file.path])
        #expect(imported.code == 0, "\(imported.stderr)")
        let vcf = cli.home.appendingPathComponent("all.vcf").path
        #expect(try cli.run(["contacts", "export", "--vcard", "--out", vcf]).code == 0)

        let checker = CLI.packageRoot.appendingPathComponent("Tests/Interop/vcard_check.py").path
        let r = try CLI.run(executable: CLI.python, [checker, vcf], env: [:])
        #expect(r.code == 0, "\(r.stdout) \(r.stderr)")
        func card(_ tool: String, _ fn: String) -> JSONValue? { r.json[tool]?.arrayValue?.first { $0["fn"]?.stringValue == fn } }

        // vobject: N split best effort, a URL for the profile that has one, RFC 9554's PRONOUNS and SOCIALPROFILE.
        let grace = try #require(card("vobject", "Grace Hopper"), "\(r.stdout)")
        #expect(grace["family"] == "Hopper" && grace["given"] == "Grace")
        #expect(grace["urls"] == ["https://navy.social/@grace"])
        #expect(grace["pronouns"] == ["she/her"])
        #expect(grace["photo"]?["mediaType"] == "image/jpeg" && (grace["photo"]?["bytes"]?.doubleValue ?? 0) > 0, "PHOTO as a data: URI")
        #expect(
            grace["socialProfiles"]
                == [
                    ["serviceType": "mastodon", "username": "grace", "valueType": "uri", "value": "https://navy.social/@grace"],
                    ["serviceType": "signal", "username": "grace.01", "valueType": "text", "value": "grace.01"],
                ])
        #expect(card("vobject", "Ludwig van Beethoven")?["family"] == "van Beethoven" && card("vobject", "Ludwig van Beethoven")?["given"] == "Ludwig")
        #expect(card("vobject", "Lovelace, Ada")?["family"] == "Lovelace" && card("vobject", "Lovelace, Ada")?["given"] == "Ada")
        #expect(card("vobject", "李小龙")?["family"] == "李小龙" && card("vobject", "李小龙")?["given"] == "")

        // khard: first and last name, and the profile as a web page.
        let shown = try #require(card("khard", "Grace Hopper"), "\(r.stdout)")
        #expect(shown["firstName"] == "Grace" && shown["lastName"] == "Hopper")
        #expect(shown["webpages"] == ["https://navy.social/@grace"])
        #expect(card("khard", "Ludwig van Beethoven")?["lastName"] == "van Beethoven")

        // And Nearcard reads its own vCards back as the same cards (the URL lines are the profiles', not new fields).
        let again = try CLI()
        defer { again.cleanUp() }
        try again.run(["init", "--name", "Bob"])
        #expect(try again.run(["contacts", "import", vcf]).code == 0)
        let back = try again.run(["contacts", "--json"]).json.arrayValue ?? []
        let graceBack = try #require(back.first { $0["name"] == "Grace Hopper" })
        #expect(graceBack["socialNetworks"]?.arrayValue?.count == 2 && graceBack["pronouns"] == "she/her")
        #expect(graceBack["photo"]?.stringValue == photo, "the photo read back as it was")
        #expect(graceBack["socialNetworks"]?.arrayValue?.last?["url"] == nil, "a profile without a URL gets none")
    }
}
