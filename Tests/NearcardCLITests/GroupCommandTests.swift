import Foundation
import NearcardCrypto
import NearcardTestSupport
import Testing

/// Semaphore group proofs through the CLI: `semaphore verify`, `group trust|list|remove`, the proof a
/// card carries, and what a scanner concludes from a copied proof.
@Suite struct GroupCommandTests {
    static let root = "4990292586352433503726012711155167179034286198473030768981544541070532815155"
    static let nullifier = "17540473064543782218297133630279824063352907908315494138425986188962403570231"

    /// The real depth-10 proof (Tests/Vectors/semaphore, from the Semaphore repository), as its export JSON.
    func vector() throws -> JSONObject {
        let url = CLI.packageRoot.appendingPathComponent("Tests/Vectors/semaphore/v4-depth10-proof.json")
        return try JSONParser.parse(String(contentsOf: url, encoding: .utf8))["semaphore_proof"]!.objectValue!
    }

    func write(_ cli: CLI, _ o: JSONObject, _ name: String) throws -> String { try cli.write(JSONValue.object(o).canonicalText, to: name) }

    @Test func verifiesTheRealProofAndNamesTheGroupAndNullifier() throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        let file = try write(cli, try vector(), "proof.json")
        let r = try cli.run(["semaphore", "verify", file, "--json"])
        #expect(r.code == 0, "\(r.stderr)")
        #expect(r.json["valid"] == true && r.json["trusted"] == false && r.json["group"] == .null)
        #expect(r.json["root"]?.stringValue == Self.root && r.json["nullifier"]?.stringValue == Self.nullifier && r.json["depth"] == 10)
        // Not trusted yet: --require-trusted fails; trusting the root names the group.
        let strict = try cli.run(["semaphore", "verify", file, "--require-trusted"])
        #expect(strict.code == 1 && strict.stderr.contains("not a group you trust"))
        #expect(try cli.run(["group", "trust", Self.root, "--name", "Conference attendees", "--depth", "10"]).code == 0)
        let trusted = try cli.run(["semaphore", "verify", file, "--json", "--require-trusted"])
        #expect(trusted.code == 0 && trusted.json["group"] == "Conference attendees" && trusted.json["trusted"] == true)
        // The human form names the group and the nullifier.
        let text = try cli.run(["semaphore", "verify", file]).stdout
        #expect(text.contains("Valid Semaphore proof") && text.contains("Conference attendees") && text.contains(Self.nullifier))
        // The iOS app's wrapper (the proof as a JSON string) and stdin work alike.
        let wrapper: JSONValue = ["version": 1, "semaphore_proof": .string(JSONValue.object(try vector()).canonicalText), "member_count": 2]
        #expect(try cli.run(["semaphore", "verify", "-"], stdin: wrapper.canonicalText).code == 0)
        // Not bound to a card holder's DID: the vector was made for "Hello world".
        let holder = try cli.run(["semaphore", "verify", file, "--holder", "did:key:zDnaeZbzLstTujAWhG3v6FXZc6tcvTKeXFTc3VckdXq3qzNvj", "--json"])
        #expect(holder.code == 1 && holder.json["bound"] == false && holder.json["valid"] == false)
    }

    /// A changed public input does not verify (1); broken encodings are refused as malformed (2), with a reason.
    @Test func tamperedAndMalformedProofs() throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        var tampered = try vector()
        tampered["nullifier"] = "1234"
        let t = try cli.run(["semaphore", "verify", try write(cli, tampered, "tampered.json")])
        #expect(t.code == 1 && t.stderr.contains("does not verify"), "\(t.stderr)")

        var offCurve = try vector()
        var points = offCurve["points"]!.arrayValue!
        points[1] = "5"
        offCurve["points"] = .array(points)
        let c = try cli.run(["semaphore", "verify", try write(cli, offCurve, "off.json"), "--json"])
        #expect(c.code == 2 && c.json["reason"]?.stringValue?.contains("A is not on G1") == true)

        var outOfRange = try vector()
        outOfRange["merkle_tree_root"] = .string(String(repeating: "9", count: 77))
        let o = try cli.run(["semaphore", "verify", try write(cli, outOfRange, "range.json")])
        #expect(o.code == 2 && o.stderr.contains("out-of-range"), "\(o.stderr)")

        let m = try cli.run(["semaphore", "verify", try cli.write("{\"merkle_tree_depth\": 10", to: "bad.json")])
        #expect(m.code == 2 && m.stderr.contains("bad.json") && m.stderr.contains("malformed"))
        #expect(try cli.run(["semaphore", "verify", "/nonexistent/proof.json"]).code == 2)
    }

    @Test func trustListAndRemoveGroups() throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        #expect(try cli.run(["group", "list"]).code == 3, "looking does not create a home")
        try cli.run(["init", "--name", "Grace"])
        #expect(try cli.run(["group", "list"]).stdout.contains("No trusted groups"))
        let hex = "0x" + Hex.encode([UInt8](repeating: 0, count: 31) + [42])
        #expect(try cli.run(["group", "trust", hex, "--name", "Hex group"]).code == 0)
        #expect(try cli.run(["group", "trust", Self.root, "--name", "Attendees"]).code == 0)
        let list = try cli.run(["group", "list", "--json"]).list()
        #expect(list.map { $0["root"]?.stringValue } == ["42", Self.root])
        #expect(list.first?["depth"] == .null)
        // A value that is no root: refused, nothing stored.
        let bad = try cli.run(["group", "trust", "21888242871839275222246405745257275088548364400416034343698204186575808495617", "--name", "r"])
        #expect(bad.code == 2 && bad.stderr.contains("scalar modulus"))
        #expect(try cli.run(["group", "trust", "banana", "--name", "x"]).code == 2)
        #expect(try cli.run(["group", "trust", "0x", "--name", "x"]).code == 2, "no digits is no root (it read as 0)")
        // Trusting a root again says what it was: a rename is never silent.
        let again = try cli.run(["group", "trust", "42", "--name", "Renamed"])
        #expect(again.code == 0 && again.stdout.contains("trusted already as") && again.stdout.contains("now “Renamed”"), "\(again.stdout)")
        #expect(try cli.run(["group", "trust", "1", "--name", "x", "--depth", "33"]).code == 64)
        #expect(try cli.run(["group", "remove", "42"]).code == 0)
        #expect(try cli.run(["group", "remove", "42"]).code == 6)
        #expect(try cli.run(["group", "list", "--json"]).json.arrayValue?.count == 1)
    }

    /// A card only carries a proof bound to its owner's DID; `semaphore binding` gives the values to prove.
    @Test func aCardRefusesAProofNotBoundToItsOwner() throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        try cli.run(["init", "--name", "Ada"])
        try cli.run(["card", "set", "--name", "Ada Lovelace"])
        let did = try cli.run(["id", "--json"]).json["did"]!.stringValue!
        let binding = try cli.run(["semaphore", "binding", "--json"]).json
        #expect(binding["did"]?.stringValue == did)
        let expected = SHA256.hash(Array("nearcard/semaphore/message/v1".utf8) + [0] + Array(did.utf8))
        #expect(binding["message"]?.stringValue == decimal(expected))
        let r = try cli.run(["card", "set", "--issuer-proof", try write(cli, try vector(), "proof.json")])
        #expect(r.code == 1 && r.stderr.contains("not bound to your DID"), "\(r.stderr)")
        #expect(!(try cli.run(["card", "show"]).stdout.contains("Group proof")))
    }

    /// A zkProof QR carrying someone else's group proof (a copied proof): the scanner marks it failed and says why.
    @Test func aScannerRefusesACopiedGroupProof() throws {
        let ada = try CLI()
        let grace = try CLI()
        defer {
            ada.cleanUp()
            grace.cleanUp()
        }
        try ada.run(["init", "--name", "Ada"])
        try ada.run(["card", "set", "--name", "Ada Lovelace", "--company", "Analytical Engines"])
        // Bypass `card set`'s own check, as a modified client would.
        let db = ada.home.appendingPathComponent("nearcard.sqlite").path
        let sql = "INSERT INTO setting (key, value) VALUES ('card.issuerProof', '\(JSONValue.object(try vector()).canonicalText)')"
        #expect(try CLI.run(executable: "/usr/bin/sqlite3", [db, sql]).code == 0)
        let text = try ada.run(["qr", "make", "--format", "zk", "--text"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(text.contains("issuerProof"))
        try grace.run(["group", "trust", Self.root, "--name", "Attendees"])
        let r = try grace.run(["qr", "scan", text, "--json"])
        #expect(r.code == 1)
        let c = try #require(r.json.arrayValue?.first)
        #expect(c["verificationStatus"] == "failed" && c["memberOf"] == .null)
        #expect(c["reason"]?.stringValue?.contains("not bound") == true, "\(c)")
        // The verdict is decided once, when the code is scanned, and kept with the contact: `contacts show`
        // reads it back, also after the trust list changes.
        let id = try #require(c["id"]?.stringValue)
        #expect(c["groupVerdict"]?.stringValue?.hasPrefix("the group proof fails: the group proof is not bound") == true, "\(c)")
        #expect(try grace.run(["group", "remove", Self.root]).code == 0)
        let shown = try grace.run(["contacts", "show", id, "--json"]).json
        #expect(shown["groupVerdict"] == c["groupVerdict"] && shown["verificationStatus"] == "failed")
        #expect(try grace.run(["contacts", "show", id]).stdout.contains("Group"), "the human view names the verdict")
    }

    func decimal(_ bytes: [UInt8]) -> String {
        var digits = [UInt8](repeating: 0, count: 1) // little-endian base-10 digits
        for byte in bytes {
            var carry = Int(byte)
            for i in digits.indices {
                let v = Int(digits[i]) * 256 + carry
                digits[i] = UInt8(v % 10)
                carry = v / 10
            }
            while carry > 0 {
                digits.append(UInt8(carry % 10))
                carry /= 10
            }
        }
        while digits.count > 1 && digits.last == 0 { digits.removeLast() }
        return String(digits.reversed().map { Character(String($0)) })
    }
}
