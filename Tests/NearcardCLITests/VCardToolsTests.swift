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
        let people: JSONValue = [
            [
                "name": "Grace Hopper", "pronouns": "she/her", "title": "Rear Admiral",
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
        #expect(graceBack["socialNetworks"]?.arrayValue?.last?["url"] == nil, "a profile without a URL gets none")
    }
}
