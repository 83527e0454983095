import Foundation
import NearcardCrypto
import NearcardModel
import Testing

@Suite struct CardTests {
    /// The control-character test every received text goes through is the Cc general category, for
    /// every Unicode scalar (it is a range check, not a lookup).
    @Test func controlCharactersAreExactlyTheCcCategory() {
        var mismatches: [UInt32] = []
        for v in UInt32(0)...0x10FFFF {
            guard let scalar = Unicode.Scalar(v) else { continue } // surrogates are not scalars
            if scalar.isControl != (scalar.properties.generalCategory == .control) { mismatches.append(v) }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(10).map { String($0, radix: 16) })")
        #expect(Unicode.Scalar(0x85)!.isControl && !Unicode.Scalar(0xA0)!.isControl && !Unicode.Scalar(0x200B)!.isControl)
    }

    @Test func argumentsParse() throws {
        #expect(
            try SocialProfile(argument: "github:ada:https://github.com/ada")
                == SocialProfile(platform: "github", username: "ada", url: "https://github.com/ada"))
        #expect(try SocialProfile(argument: "x:ada") == SocialProfile(platform: "x", username: "ada"))
        #expect(throws: ModelError.self) { try SocialProfile(argument: "nohandle") }
        #expect(try Skill(argument: "Swift:programming:expert") == Skill(name: "Swift", category: "programming", proficiency: "expert"))
        #expect(try CardField.parseList("name, Company,TITLE") == [.name, .company, .title])
        #expect(throws: ModelError.self) { try CardField.parseList("name,age") }
    }

    @Test func jsonErrorsNameTheKey() {
        #expect { try Card(json: JSONParser.parse("{\"name\":\"x\",\"skills\":[{\"category\":\"y\"}]}")) } throws: {
            ($0 as? ModelError)?.message.contains("skills[0]") == true
        }
        #expect { try Card(json: JSONParser.parse("{\"name\":5}")) } throws: { ($0 as? ModelError)?.message.contains("\"name\"") == true }
        // An item's members are its own: one more is named, not dropped (§9).
        #expect { try Card(json: JSONParser.parse(#"{"name":"x","socialNetworks":[{"platform":"p","username":"u","x":"y"}]}"#)) } throws: {
            ($0 as? ModelError)?.message.contains(#""socialNetworks[0]" has an unknown member "x""#) == true
        }
        #expect { try Card(json: JSONParser.parse(#"{"name":"x","skills":[{"name":"n","level":"3"}]}"#)) } throws: {
            ($0 as? ModelError)?.message.contains(#"unknown member "level""#) == true
        }
        #expect { try Card(json: JSONParser.parse("{\"name\":\"\(String(repeating: "x", count: 300))\"}")) } throws: {
            ($0 as? ModelError)?.kind == .limitExceeded
        }
    }

    /// §1: no card string holds an explicit embedding, override or isolate ("Dora\u{202E}XoR" would print
    /// as "DoraRoX" and reverse what follows); right-to-left letters are text like any other.
    @Test func bidirectionalControlsAreRefused() throws {
        for scalar in [0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069] {
            let text = "Dora" + String(Character(Unicode.Scalar(scalar)!)) + "XoR"
            #expect(throws: ModelError.self) { try Card(name: text).validate() }
            #expect(throws: ModelError.self) { try Card(name: "Dora", title: text).validate() }
        }
        let refused = #expect(throws: ModelError.self) { try Card(name: "Dora\u{202E}XoR").validate() }
        #expect(refused?.message == "\"name\" contains a bidirectional control (U+202E), which would reorder the text around it")
        try Card(name: "דורה לוי", company: "شركة").validate()
    }

    /// §9: an empty list is omitted by a sender; one received anyway is the field absent.
    @Test func anEmptyListIsAnAbsentField() throws {
        let card = try Card(json: JSONParser.parse(#"{"name":"Ada","skills":[],"socialNetworks":[]}"#))
        #expect(card.presentFields == [.name] && card.value(of: .skills) == nil)
        #expect(card.json == ["name": "Ada"], "and is not sent on")
    }

    /// §1: a card's limits count Unicode scalars, so `card set`, `card import`, QR import and a peer's
    /// card all refuse one grapheme of 257 code points, and accept 256 characters of 4 bytes each.
    @Test func cardLimitsCountUnicodeScalarsNotGraphemes() throws {
        let oneGrapheme = "e" + String(repeating: "\u{0301}", count: 256)
        #expect(oneGrapheme.count == 1 && oneGrapheme.unicodeScalars.count == 257)
        #expect { try Card(name: oneGrapheme).validate() } throws: {
            ($0 as? ModelError)?.kind == .limitExceeded && ($0 as? ModelError)?.message == "\"name\" is 257 characters; at most 256 (Unicode code points)"
        }
        try Card(name: String(repeating: "😀", count: 256), company: String(repeating: "é", count: 256)).validate()
    }

    @Test func sharingPolicyAlwaysIncludesName() {
        #expect(SharingPolicy(fields: [.email]).fields == [.name, .email])
        #expect(SharingPolicy(fields: [.skills, .email, .name]).orderedFieldNames == ["name", "email", "skills"])
    }

    @Test func graphEdgeIDIsTheSameOnBothSides() {
        let b = Sodium.randomBytes(32)
        #expect(Contact.graphEdgeID("did:key:zA", "did:key:zB", sessionBinding: b) == Contact.graphEdgeID("did:key:zB", "did:key:zA", sessionBinding: b))
        #expect(
            Contact.graphEdgeID("did:key:zA", "did:key:zB", sessionBinding: b)
                != Contact.graphEdgeID("did:key:zA", "did:key:zB", sessionBinding: Sodium.randomBytes(32)))
    }

    @Test func graphExportShape() {
        let c = Contact(
            card: ada, source: .proximity, verificationStatus: .verified, receivedAt: Date(timeIntervalSince1970: 0),
            exchangeSignature: "their", myExchangeSignature: "mine", exchangeTimestamp: Date(timeIntervalSince1970: 60),
            myEphemeralMessage: "hi", theirEphemeralMessage: "hello", graphExportEdgeId: "e1")
        let g = GraphExport.json(contacts: [c], exportedAt: Date(timeIntervalSince1970: 120))
        #expect(g["version"] == 1)
        #expect(g["exported_at"] == "1970-01-01T00:02:00Z")
        let edge = g["edges"]!.arrayValue![0]
        #expect(
            Set(edge.objectValue!.keys) == [
                "id", "name", "verification", "exchange_timestamp", "graph_edge_id", "my_signature", "their_signature", "my_message", "their_message",
            ])
        #expect(edge["my_signature"] == "mine" && edge["their_signature"] == "their")
        #expect(edge["my_message"] == "hi" && edge["their_message"] == "hello")
        #expect(edge["exchange_timestamp"] == "1970-01-01T00:01:00Z")
    }
}

@Suite struct VCardTests {
    @Test func roundTripsACard() throws {
        let text = VCard.serialize(ada, notes: "met at a conference; talked about looms")
        #expect(text.hasPrefix("BEGIN:VCARD\r\nVERSION:4.0\r\n"))
        #expect(text.split(separator: "\r\n").allSatisfy { $0.utf8.count <= 75 }, "folded at 75 octets")
        let back = try VCard.parse(text)
        #expect(back.count == 1)
        #expect(back[0].card == ada)
        #expect(back[0].notes == "met at a conference; talked about looms")
    }

    @Test func readsFoldingEscapesGroupsAndQuotedParameters() throws {
        let text =
            "BEGIN:VCARD\r\nVERSION:4.0\r\nitem1.FN:Grace\r\n  Hopper\r\nN:Hopper;Grace;;;\r\nORG:US Navy;Computing\r\n"
            + "TITLE:Rear Admiral\\, retired\r\nTEL;VALUE=uri;TYPE=\"work,voice\":tel:+1-555-0100\r\nEMAIL;TYPE=work:grace@navy.mil\r\n"
            + "X-SOCIALPROFILE;TYPE=github;X-USER=ghopper:https://github.com/ghopper\r\nPHOTO:data:image/png;base64,AAAA\r\nEND:VCARD\r\n"
        let card = try VCard.parse(text)[0].card
        #expect(card.name == "Grace Hopper")
        #expect(card.company == "US Navy")
        #expect(card.title == "Rear Admiral, retired")
        #expect(card.phone == "+1-555-0100")
        #expect(card.socialNetworks == [SocialProfile(platform: "github", username: "ghopper", url: "https://github.com/ghopper")])
    }

    @Test(arguments: [
        ("FN:x\r\n", "no BEGIN:VCARD"),
        ("BEGIN:VCARD\r\nFN:x\r\nEND:VCARD\r\nNOTE:y\r\n", "outside BEGIN:VCARD"),
        ("BEGIN:VCARD\r\nFN:x\r\n", "no END:VCARD"),
        ("BEGIN:VCARD\r\nVERSION:4.0\r\nEND:VCARD\r\n", "no FN"),
        ("BEGIN:VCARD\r\nVERSION:4.0\r\nFN x\r\nEND:VCARD\r\n", "line 3"),
        ("BEGIN:VCARD\r\nVERSION:2.1\r\nFN:x\r\nEND:VCARD\r\n", "VERSION 2.1"),
        ("hello", "no BEGIN:VCARD"),
    ])
    func errorsNameTheProblem(text: String, expected: String) {
        #expect { try VCard.parse(text) } throws: { ($0 as? ModelError)?.message.contains(expected) == true }
    }
}
