import NearcardCrypto
import Testing

/// RFC 8785 vectors: each input canonicalises byte for byte to its output.
@Suite struct JCSTests {
    @Test(arguments: ["arrays", "french", "structures", "unicode", "values", "weird"])
    func canonicalisesVector(name: String) throws {
        let input = try Vectors.bytes("jcs/\(name).input.json")
        let expected = try Vectors.bytes("jcs/\(name).output.json")
        #expect(try JCS.canonicalize(jsonText: input) == expected)
    }

    /// Member order is by UTF-16 code units, also after a shared non-ASCII prefix and where UTF-8
    /// order differs (U+FB33 sorts after U+1F602 in UTF-16, before it in UTF-8), against a plain
    /// UTF-16 sort of the same keys.
    @Test func membersSortByUTF16CodeUnits() throws {
        let keys = [
            "é", "éb", "éa", "é\u{FB33}", "é\u{1F602}", "éa\u{FB33}", "éa\u{1F602}", "", "b", "a", "ab", "\u{7F}", "\u{80}",
            "\u{FFFF}", "\u{10000}", "z\u{E000}", "z\u{10FFFF}", "zz",
        ]
        let object = JSONValue.object(JSONObject(keys.map { ($0, JSONValue.number(1)) }))
        let order = keys.sorted { $0.utf16.lexicographicallyPrecedes($1.utf16) }
        let expected = "{" + order.map { JSONValue.string($0).canonicalText + ":1" }.joined(separator: ",") + "}"
        #expect(object.canonicalText == expected)
        #expect(order.firstIndex(of: "é\u{1F602}")! < order.firstIndex(of: "é\u{FB33}")!)
    }

    /// ECMAScript number formatting (RFC 8785 appendix B samples).
    @Test(arguments: [
        (0.0, "0"), (-0.0, "0"), (1.0, "1"), (-1.5, "-1.5"), (1e21, "1e+21"), (1e20, "100000000000000000000"),
        (9007199254740992.0, "9007199254740992"), (9007199254740994.0, "9007199254740994"),
        (295147905179352830000.0, "295147905179352830000"), (1e-7, "1e-7"), (0.000001, "0.000001"),
        (Double.leastNonzeroMagnitude, "5e-324"), (1.7976931348623157e308, "1.7976931348623157e+308"), (333333333.3333333, "333333333.3333333"),
        (4.35, "4.35"), (0.002, "0.002"), (1e23, "1e+23"), (123456789012345680000.0, "123456789012345680000"),
    ])
    func ecmaScriptNumbers(value: Double, text: String) {
        #expect(JCS.numberString(value) == text)
    }
}

@Suite struct JSONParserTests {
    @Test(arguments: [
        "{\"a\":1,\"a\":2}", // duplicate key
        "[1,]", "{\"a\":1,}", // trailing commas
        "01", "-", "1.", "1e", "NaN", "Infinity", "1e400",
        "\"\\ud800\"", // lone high surrogate
        "\"\\udc00\"", // lone low surrogate
        "\"a\u{01}b\"", // raw control character
        "\"\\x41\"", // unknown escape
        "{\"a\" 1}", "[1 2]", "tru", "nul", "\"abc", "",
        "[1] [2]",
    ])
    func refusesMalformedJSON(text: String) {
        #expect(throws: CryptoError.self) { try JSONParser.parse(text) }
    }

    @Test func refusesInvalidUTF8() {
        for bad: [UInt8] in [[0x22, 0xC0, 0x80, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22], [0x22, 0xF5, 0x80, 0x80, 0x80, 0x22], [0x22, 0xE2, 0x82, 0x22]] {
            #expect(throws: CryptoError.self) { try JSONParser.parse(bad) }
        }
    }

    @Test func boundsDepthAndLength() {
        let deep = String(repeating: "[", count: 65) + String(repeating: "]", count: 65)
        #expect(throws: CryptoError.self) { try JSONParser.parse(deep) }
        let ok = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        #expect(throws: Never.self) { try JSONParser.parse(ok) }
        #expect(throws: CryptoError.self) { try JSONParser(maximumLength: 10).parse(Array("[1,2,3,4,5,6]".utf8)) }
    }

    /// A repeated member name is refused wherever it repeats, in small objects and in large ones
    /// (the parser scans the first 16 names and keeps a set after that), escaped or not.
    @Test(arguments: [(2, 1), (15, 3), (16, 0), (17, 16), (40, 3), (40, 39)])
    func refusesARepeatedNameAnywhere(members: Int, repeatOf: Int) throws {
        let distinct = (0..<members).map { "\"k\($0)\":\($0)" }
        #expect(throws: Never.self) { try JSONParser.parse("{" + distinct.joined(separator: ",") + "}") }
        let repeated = distinct + ["\"k\\u00\(String(Array("\(repeatOf)".utf8)[0], radix: 16))\(String("\(repeatOf)".dropFirst()))\":0"]
        #expect(throws: CryptoError.self) { try JSONParser.parse("{" + repeated.joined(separator: ",") + "}") }
    }

    /// Keys that are canonically equivalent in Unicode but different code points are different keys.
    @Test func keysCompareByScalarsNotCanonicalEquivalence() throws {
        let v = try JSONParser.parse("{\"A\\u030a\":1,\"\\u00c5\":2}")
        #expect(v.objectValue?.count == 2)
        #expect(v["\u{00C5}"] == 2)
        #expect(v["A\u{030A}"] == 1)
    }

    @Test func errorsSayWhere() {
        #expect {
            try JSONParser.parse("{\n  \"a\": tru\n}")
        } throws: { ($0 as? CryptoError)?.message.contains("line 2") == true }
    }

    @Test func parsesAndWritesBack() throws {
        let text = "{\"b\":[true,false,null,1.5,\"x\\n\\\"\"],\"a\":{}}"
        let v = try JSONParser.parse(text)
        #expect(v.compactText == text)
        #expect(v.canonicalText == "{\"a\":{},\"b\":[true,false,null,1.5,\"x\\n\\\"\"]}")
        #expect(try JSONParser.parse(v.prettyText) == v)
    }

    /// Escapes at the start, in the middle, back to back and at the end of a string, around runs of
    /// plain and multi-byte text, are written as RFC 8785 says and read back to the same string.
    @Test func stringsWithEscapesAnywhereRoundTrip() throws {
        let cases: [(String, String)] = [
            ("plain", #""plain""#),
            ("", #""""#),
            ("\"start", #""\"start""#),
            ("end\\", #""end\\""#),
            ("a\u{1}\u{1f}b\tc\n", #""a\u0001\u001fb\tc\n""#),
            ("\"\"\\", #""\"\"\\""#),
            ("é\u{8}ü\u{c}✓\r", #""é\bü\f✓\r""#),
            ("\u{7f}/<>", "\"\u{7f}/<>\""),
        ]
        for (value, text) in cases {
            #expect(JSONValue.string(value).compactText == text, "\(value.debugDescription)")
            #expect(try JSONParser.parse(text) == .string(value), "\(text)")
        }
        // Every control character, each between two runs.
        for c in 0..<0x20 {
            let value = "x" + String(UnicodeScalar(UInt8(c))) + "é"
            #expect(try JSONParser.parse(JSONValue.string(value).compactText) == .string(value))
        }
    }
}

@Suite struct EncodingTests {
    @Test func base64RoundTripsAndIsStrict() throws {
        for n in 0..<40 {
            let bytes = (0..<n).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            #expect(try Base64.decode(Base64.encode(bytes)) == bytes)
            #expect(try Base64.urlDecode(Base64.urlEncode(bytes)) == bytes)
        }
        #expect(Base64.encode(Array("Möbius".utf8)) == "TcO2Yml1cw==")
        // RFC 4648 §10, and the two alphabets' last characters.
        for (text, padded, url) in [
            ("", "", ""), ("f", "Zg==", "Zg"), ("fo", "Zm8=", "Zm8"), ("foo", "Zm9v", "Zm9v"),
            ("foob", "Zm9vYg==", "Zm9vYg"), ("fooba", "Zm9vYmE=", "Zm9vYmE"), ("foobar", "Zm9vYmFy", "Zm9vYmFy"),
        ] {
            #expect(Base64.encode(Array(text.utf8)) == padded)
            #expect(Base64.urlEncode(Array(text.utf8)) == url)
        }
        #expect(Base64.encode([0xFB, 0xFF]) == "+/8=")
        #expect(Base64.urlEncode([0xFB, 0xFF]) == "-_8")
        for bad in ["TQ=", "TR==", "T===", "TQ==\n", "T Q==", "@@@@"] {
            #expect(throws: CryptoError.self, "\(bad)") { try Base64.decode(bad) }
        }
        for bad in ["TQ==", "TR", "T", "a+b/"] {
            #expect(throws: CryptoError.self, "\(bad)") { try Base64.urlDecode(bad) }
        }
    }

    /// Token parts are split on the separator byte: empty parts are kept, and a separator followed by
    /// a combining mark still separates.
    @Test func splitsOnAnASCIISeparatorByte() {
        #expect("a~~b~".split(ascii: "~") == ["a", "", "b", ""])
        #expect("".split(ascii: ".") == [""])
        #expect("h.\u{301}p.s".split(ascii: ".") == ["h", "\u{301}p", "s"])
        #expect("é.ü".split(ascii: ".") == ["é", "ü"])
    }

    @Test func base58MatchesKnownValues() throws {
        #expect(Base58.encode(Array("Hello World!".utf8)) == "2NEpo7TZRRrLZSi2U")
        #expect(Base58.encode([0, 0, 1]) == "112")
        #expect(try Base58.decode("112") == [0, 0, 1])
        #expect(throws: CryptoError.self) { try Base58.decode("0OIl") }
    }

    @Test func varintsAreMinimal() {
        #expect(Varint.encode(0x1200) == [0x80, 0x24])
        #expect(Varint.encode(0xED) == [0xED, 0x01])
        #expect(Varint.decode([0x80, 0x24, 0xFF])! == (0x1200, 2))
        #expect(Varint.decode([0x80, 0x00]) == nil, "non-minimal")
        #expect(Varint.decode([0x80]) == nil, "truncated")
    }
}

/// A phrase as the control socket hands it to a face beside the node (docs/JSONL.md `failure.phrase`).
@Suite struct PhraseJSONTests {
    @Test func aPhraseReadsBackAsItWasMade() throws {
        let phrase = Phrase("cannot connect to %1$@: %2$@", "Grace", Phrase("no addresses"))
        let text = phrase.json.compactText
        #expect(text == #"{"template":"cannot connect to %1$@: %2$@","arguments":["Grace",{"template":"no addresses","arguments":[]}]}"#)
        let back = try #require(Phrase(json: try JSONParser.parse(text)))
        #expect(back == phrase && back.english == "cannot connect to Grace: no addresses")
        #expect(Phrase(json: "plain") == Phrase(verbatim: "plain"))
        // Neither shape, or nested deeper than a sentence: nothing is said from it.
        #expect(Phrase(json: 42) == nil)
        #expect(Phrase(json: ["template": "x"]) == nil)
        var deep: JSONValue = "x"
        for _ in 0..<20 { deep = ["template": "%1$@", "arguments": [deep]] }
        #expect(Phrase(json: deep) == nil)
    }
}
