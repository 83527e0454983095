import Foundation
import NearcardText
import Testing

/// Catalogs as gettext's own `msgfmt` compiles them, read back; plural rules of real languages; the
/// environment gettext reads.
@Suite struct CatalogTests {
    /// Compiles `po` with msgfmt (GNU gettext) and returns the .mo bytes.
    func compiled(_ po: String) throws -> [UInt8] {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-po-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        try po.write(to: dir.appendingPathComponent("t.po"), atomically: true, encoding: .utf8)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/msgfmt")
        p.arguments = ["--check", "-o", dir.appendingPathComponent("t.mo").path, dir.appendingPathComponent("t.po").path]
        try p.run()
        p.waitUntilExit()
        try #require(p.terminationStatus == 0, "msgfmt refused the catalog")
        return Array(try Data(contentsOf: dir.appendingPathComponent("t.mo")))
    }

    static let german = #"""
        msgid ""
        msgstr ""
        "Content-Type: text/plain; charset=UTF-8\n"
        "Plural-Forms: nplurals=2; plural=(n != 1);\n"

        msgid "Exchanged cards with %1$@."
        msgstr "Karten mit %1$@ getauscht."

        msgctxt "button"
        msgid "Accept"
        msgstr "Annehmen"

        msgid "%1$ld contact"
        msgid_plural "%1$ld contacts"
        msgstr[0] "%1$ld Kontakt"
        msgstr[1] "%1$ld Kontakte"

        msgid "Not yet translated"
        msgstr ""
        """#

    @Test func readsWhatMsgfmtWrites() throws {
        let catalog = try MOCatalog(try compiled(Self.german))
        #expect(catalog.text("Exchanged cards with %1$@.") == "Karten mit %1$@ getauscht.")
        #expect(catalog.text("Accept", context: "button") == "Annehmen")
        #expect(catalog.text("Accept") == nil, "a context is part of the message")
        #expect(catalog.text("Not yet translated") == nil, "an empty translation is none")
        #expect(catalog.text("%1$ld contact", plural: "%1$ld contacts", count: 1) == "%1$ld Kontakt")
        #expect(catalog.text("%1$ld contact", plural: "%1$ld contacts", count: 3) == "%1$ld Kontakte")
        #expect(catalog.text("%1$ld contact", plural: "%1$ld contacts", count: 0) == "%1$ld Kontakte")
    }

    /// The first language asked for that has a catalog speaks; what it lacks stays English.
    @Test func theFirstLanguageWithACatalogSpeaks() throws {
        let german = try compiled(Self.german)
        let t = Translator(languages: ["fr_FR", "fr", "de"]) { $0 == "de" ? german : nil }
        #expect(t.language == "de")
        #expect(t("Exchanged cards with %1$@.", "Grace") == "Karten mit Grace getauscht.")
        #expect(t("Accept", context: "button") == "Annehmen")
        #expect(t("Not yet translated") == "Not yet translated")
        #expect(t.plural("%1$ld contact", "%1$ld contacts", count: 2, "2") == "2 Kontakte")
    }

    /// Arabic's six forms, Polish's three, French's two (0 and 1 alike), Japanese's one.
    @Test func pluralRulesOfRealLanguages() throws {
        let arabic = try PluralRule(
            header: "Plural-Forms: nplurals=6; plural=n==0 ? 0 : n==1 ? 1 : n==2 ? 2 : n%100>=3 && n%100<=10 ? 3 : n%100>=11 ? 4 : 5;")
        #expect([0, 1, 2, 3, 10, 11, 99, 100, 102, 103].map(arabic.form) == [0, 1, 2, 3, 3, 4, 4, 5, 5, 3])
        let polish = try PluralRule(
            header: "Plural-Forms: nplurals=3; plural=(n==1 ? 0 : n%10>=2 && n%10<=4 && (n%100<10 || n%100>=20) ? 1 : 2);")
        #expect([1, 2, 4, 5, 12, 22, 25].map(polish.form) == [0, 1, 1, 2, 2, 1, 2])
        let french = try PluralRule(header: "Plural-Forms: nplurals=2; plural=(n > 1);")
        #expect([0, 1, 2].map(french.form) == [0, 0, 1])
        let japanese = try PluralRule(header: "Plural-Forms: nplurals=1; plural=0;")
        #expect([0, 1, 7].map(japanese.form) == [0, 0, 0])
        #expect(try PluralRule(header: "").form(for: 1) == 0 && (try PluralRule(header: "")).form(for: 2) == 1, "no header: English")
    }

    @Test func malformedCatalogsAreRefusedWhole() {
        #expect(throws: MOCatalog.Malformed.self) { try MOCatalog(Array("not a catalog at all, not even close".utf8)) }
        #expect(throws: MOCatalog.Malformed.self) { try PluralRule(header: "Plural-Forms: nplurals=2; plural=(n != ;") }
        #expect(throws: MOCatalog.Malformed.self) { try PluralRule(header: "Plural-Forms: nplurals=2; plural=" + String(repeating: "(", count: 200) + "n") }
        // A string table pointing past the end of the file.
        var bytes = [UInt8](repeating: 0, count: 28)
        bytes[0...3] = [0xde, 0x12, 0x04, 0x95]
        bytes[8] = 1
        bytes[12] = 28
        bytes[16] = 28
        #expect(throws: MOCatalog.Malformed.self) { try MOCatalog(bytes + [0xff, 0xff, 0, 0, 0, 0, 0, 0]) }
    }

    @Test func theLanguagesAskedForAsGettextReadsThem() {
        #expect(Languages.preferred(["LANG": "de_AT.UTF-8"]) == ["de_AT", "de"])
        #expect(Languages.preferred(["LANGUAGE": "fr:de", "LANG": "en_GB.UTF-8"]) == ["fr", "de"])
        #expect(Languages.preferred(["LANGUAGE": "fr", "LC_ALL": "C"]).isEmpty, "a locale set to C is English, whatever LANGUAGE says")
        #expect(Languages.preferred(["LANGUAGE": "fr", "LANG": "C.UTF-8"]) == ["fr"], "as glibc: C.UTF-8 is not C")
        #expect(Languages.preferred(["LANG": "C.UTF-8"]).isEmpty)
        #expect(Languages.preferred(["LANGUAGE": "de"]) == ["de"], "LANGUAGE alone (no locale set) counts")
        #expect(Languages.preferred(["LC_ALL": "ar_EG.UTF-8", "LANG": "de_DE.UTF-8"]) == ["ar_EG", "ar"])
        #expect(Languages.preferred(["LC_MESSAGES": "sr_RS@latin"]) == ["sr_RS", "sr"])
        #expect(Languages.preferred([:]).isEmpty)
    }
}

/// Where the process's catalogs come from: installed under the binary's prefix first, else built in.
@Suite struct CatalogLookupTests {
    @Test func anInstalledCatalogWinsOverTheBuiltInOne() throws {
        let prefix = FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-prefix-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: prefix) }
        let bin = prefix.appendingPathComponent("bin")
        let messages = prefix.appendingPathComponent("share/locale/de/LC_MESSAGES")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: messages, withIntermediateDirectories: true)
        try Data().write(to: bin.appendingPathComponent("nearcard"))
        let executable = bin.appendingPathComponent("nearcard").path

        // Built in: the German of po/de.po.
        #expect(Catalogs.embeddedLanguages.contains("de") && Catalogs.embeddedLanguages.contains("ar"))
        #expect(Catalogs.translator(environment: ["LANGUAGE": "de"], executable: executable)("OVERVIEW:") == "ÜBERSICHT:")
        // Installed beside the binary: that one (a translator's fresh catalog).
        let mo = try CatalogTests().compiled(
            #"""
            msgid ""
            msgstr ""
            "Content-Type: text/plain; charset=UTF-8\n"

            msgid "OVERVIEW:"
            msgstr "ÜBERBLICK:"
            """#)
        try Data(mo).write(to: messages.appendingPathComponent("nearcard.mo"))
        #expect(Catalogs.translator(environment: ["LANGUAGE": "de"], executable: executable)("OVERVIEW:") == "ÜBERBLICK:")
        // English asked first stops there; a language with no catalog, and C, are English.
        #expect(Catalogs.translator(environment: ["LANGUAGE": "en:de"], executable: executable)("OVERVIEW:") == "OVERVIEW:")
        #expect(Catalogs.translator(environment: ["LANG": "ja_JP.UTF-8"], executable: executable).language == nil)
        #expect(Catalogs.translator(environment: ["LANGUAGE": "de", "LC_ALL": "C"], executable: executable).language == nil)
    }
}

@Suite struct TranslatorTests {
    @Test func placeholdersAreFilledByPositionAndInOrder() {
        #expect(Translator.format("%1$@ exchanged cards with %2$@", ["Ada", "Grace"]) == "Ada exchanged cards with Grace")
        #expect(Translator.format("mit %2$@ hat %1$@ Karten getauscht", ["Ada", "Grace"]) == "mit Grace hat Ada Karten getauscht")
        #expect(Translator.format("%@ and %@", ["a", "b"]) == "a and b")
        #expect(Translator.format("%1$ld contacts, 100%%", ["3"]) == "3 contacts, 100%")
        #expect(Translator.format("%3$@ is missing", ["a"]) == "%3$@ is missing", "a placeholder with no argument stays")
        #expect(Translator.format("50% off", []) == "50% off", "a lone percent sign stays")
    }

    @Test func englishWhenNoCatalogReads() {
        let t = Translator(languages: ["de", "fr"]) { _ in Array("not a catalog, not at all".utf8) }
        #expect(t.language == nil)
        #expect(t("Exchanged cards with %1$@.", "Grace") == "Exchanged cards with Grace.")
        #expect(t.plural("%1$ld contact", "%1$ld contacts", count: 1, "1") == "1 contact")
        #expect(t.plural("%1$ld contact", "%1$ld contacts", count: 2, "2") == "2 contacts")
    }
}

/// An error's sentence made below the faces and said above them: in English for logs and JSON, in the
/// person's language at a terminal or on a page, the phrase it wraps said in the same language, its
/// values (a name, a library's reason) as they are.
@Suite struct PhraseTests {
    static let german = #"""
        msgid ""
        msgstr ""
        "Content-Type: text/plain; charset=UTF-8\n"
        "Plural-Forms: nplurals=2; plural=(n != 1);\n"

        msgid "cannot connect to %1$@: %2$@"
        msgstr "keine Verbindung zu %1$@ möglich: %2$@"

        msgid "no addresses"
        msgstr "keine Adressen"
        """#

    @Test func aPhraseIsSaidInEnglishOrInTheLanguageAskedFor() throws {
        let mo = try CatalogTests().compiled(Self.german)
        let german = Translator(languages: ["de"]) { _ in mo }
        let nested = Phrase("cannot connect to %1$@: %2$@", "Grace", Phrase("no addresses"))
        #expect(nested.english == "cannot connect to Grace: no addresses")
        #expect(nested.description == nested.english)
        #expect(german.say(nested) == "keine Verbindung zu Grace möglich: keine Adressen")
        // A value is never looked up, even when it reads like a message of the catalog.
        let value = Phrase("cannot connect to %1$@: %2$@", "no addresses", Phrase(verbatim: "no addresses"))
        #expect(german.say(value) == "keine Verbindung zu no addresses möglich: no addresses")
        // A template the catalog lacks is said in English, its values filled.
        #expect(german.say(Phrase("the peer declined: %1$@", "busy")) == "the peer declined: busy")
    }
}
