import ArgumentParser
import Foundation
import NearcardCrypto
import NearcardImage
import NearcardModel
import NearcardNode
import NearcardSemaphore

/// `nearcard card …`: your own card.
struct CardCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "card",
        abstract: t("Set, show or import your business card."),
        subcommands: [Set.self, Show.self, Import.self, Fields.self],
        defaultSubcommand: Show.self)

    struct Set: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set",
            abstract: t("Set fields of your card (only the fields given change; an empty value removes a field)."),
            usage: "nearcard card set [--FIELD VALUE …] [--no-FIELD …] [--issuer-proof FILE | --clear-issuer-proof] [--json]",
            discussion: FieldOptions.help(for: CardField.allCases)
                + "\n\n"
                + t(
                    "Example: nearcard card set --name \"Ada Lovelace\" --title Engineer --email ada@example.org --social mastodon:ada:https://example.social/@ada"
                )
        )

        @OptionGroup var global: GlobalOptions
        /// The card's fields, read against the field table (`FieldOptions`).
        @Argument(parsing: .allUnrecognized, help: .hidden) var fieldArguments: [String] = []
        @Flag(help: .hidden) var clearSocial = false
        @Flag(help: .hidden) var clearSkills = false
        @Option(
            help: ArgumentHelp(
                t("A Semaphore group proof your card carries from now on; it must verify and be bound to your DID (see: nearcard semaphore binding)."),
                valueName: "FILE"))
        var issuerProof: String?
        @Flag(help: ArgumentHelp(t("Stop carrying a group proof."))) var clearIssuerProof = false
        @Flag(help: ArgumentHelp(t("Print the card as JSON afterwards."))) var json = false

        func validate() throws {
            if issuerProof != nil && clearIssuerProof { throw ValidationError(t("give --issuer-proof or --clear-issuer-proof, not both")) }
            _ = try options()
        }

        /// The fields given (`--clear-social` and `--clear-skills` are the older `--no-social`, `--no-skill`).
        func options() throws -> FieldOptions {
            var arguments = fieldArguments
            if clearSocial { arguments.append("--no-" + CardField.socialNetworks.row.option) }
            if clearSkills { arguments.append("--no-" + CardField.skills.row.option) }
            return try FieldOptions(arguments, fields: CardField.allCases)
        }

        func run() async throws {
            let db = try global.database()
            let existing = try db.myCard()?.card
            if let issuerProof {
                let proof = try IssuerProofs.checked(issuerProof, holderDID: try global.identity().did)
                try db.setIssuerProof(proof.exportJSON)
                Console.err(t("Your card now carries a proof of membership of root %1$@ (depth %2$@).", "\(proof.root)", String(proof.depth)))
            }
            if clearIssuerProof {
                try db.setIssuerProof(nil)
                Console.err(t("Your card no longer carries a group proof."))
            }
            let options = try options()
            if options.isEmpty && (issuerProof != nil || clearIssuerProof) {
                try await RunningNode.changed(global, ["card"])
                if let existing { if json { Console.json(existing.json) } else { try CardDisplay.show(existing, database: db) } }
                return
            }
            let typedName = options.values[.name]?.first?.trimmingCharacters(in: .whitespaces)
            if options.removed.contains(.name) || typedName == "" {
                throw CLIError(.malformedInput, t("--name cannot be empty: a card always has a name (--name \"Your Name\")"))
            }
            guard existing != nil || typedName != nil else {
                throw CLIError(.malformedInput, t("you have no card yet: give at least --name"))
            }
            let card = try options.applied(to: existing ?? Card(name: typedName ?? ""))
            // What was typed now must have its field's shape (an email address, a phone number, a URL).
            try options.typed(on: card).checkShapes { "--" + $0.row.option }
            let saved = try db.saveMyCard(card)
            // A node running on this home announces a new name and sends the new card from now on.
            try await RunningNode.changed(global, ["card"])
            if json { Console.json(saved.card.json) } else { try CardDisplay.show(saved.card, database: db) }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "show", abstract: t("Show your card and which fields exchanges disclose."))
        @OptionGroup var global: GlobalOptions
        @Flag(help: ArgumentHelp(t("Print the card as JSON."))) var json = false

        func run() async throws {
            let db = try global.existingDatabase()
            guard let mine = try db.myCard() else {
                throw CLIError(.notFound, t("you have no card yet; make one with: nearcard card set --name \"Your Name\" --email …"))
            }
            if json { Console.json(mine.card.json) } else { try CardDisplay.show(mine.card, database: db) }
        }
    }

    struct Fields: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "fields",
            abstract: t("List the fields a card can hold: option, limit, vCard property, whether exchanges share it by default."),
            discussion: t("The list is the node's field table; --json prints it whole (one object a field, in the card's order)."))
        @Flag(help: ArgumentHelp(t("Print the table as JSON."))) var json = false

        func run() throws {
            if json { return Console.json(CardField.tableJSON) }
            let rows = CardField.displayOrder.map(\.row)
            ContactDisplay.columns(
                [t("FIELD"), t("OPTION"), t("LIMIT"), "VCARD", t("SHARED"), t("SINCE")],
                rows.map { row in
                    [
                        row.field.rawValue, "--\(row.option)", "\(row.maximumCharacters)", row.vCardProperty,
                        row.sharedByDefault ? t("by default") : t("if chosen"), "v\(row.since)",
                    ]
                })
        }
    }

    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "import",
            abstract: t("Replace your card with one read from a vCard 4.0 file or a Nearcard JSON card."))
        @OptionGroup var global: GlobalOptions
        @Argument(help: ArgumentHelp(t("The file (vCard: BEGIN:VCARD…; JSON: {\"name\": …})."))) var file: String
        @Flag(help: ArgumentHelp(t("Print the card as JSON afterwards."))) var json = false

        func run() async throws {
            let card = try CardFiles.read(file)
            let db = try global.database()
            let saved = try db.saveMyCard(card)
            try await RunningNode.changed(global, ["card"])
            if json {
                Console.json(saved.card.json)
            } else {
                Console.out(t("Imported your card from %1$@", file))
                try CardDisplay.show(saved.card, database: db)
            }
        }
    }
}

/// Reading card files (vCard or JSON), with errors that name the file and the line or key.
enum CardFiles {
    /// The one card of a file (your own card): a file of several is refused, not read for its first.
    static func read(_ path: String) throws -> Card {
        let entries = try readAll(path)
        guard let first = entries.first else { throw CLIError(.malformedInput, t("%1$@ holds no card", path)) }
        guard entries.count == 1 else {
            throw CLIError(
                .malformedInput,
                t.plural(
                    "%1$@ holds %2$@ card and your card is one: give a file with one card (to add these as contacts: nearcard contacts import %1$@)",
                    "%1$@ holds %2$@ cards and your card is one: give a file with one card (to add these as contacts: nearcard contacts import %1$@)",
                    count: entries.count, path, String(entries.count))
            )
        }
        return first.card
    }

    /// Every card in the file: the vCards of a vCard file, the one JSON card, or a JSON array of
    /// cards or of contacts (`contacts export --json`; of a contact, its card and notes are read,
    /// not what it claims of its verification).
    static func readAll(_ path: String) throws -> [VCard.Entry] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CLIError(.malformedInput, t("cannot read %1$@: %2$@", path, PrivateFiles.unreadable(path)))
        }
        guard data.count <= VCard.maximumLength else {
            throw CLIError(
                .malformedInput,
                t.plural("%1$@ is larger than %2$@ byte", "%1$@ is larger than %2$@ bytes", count: VCard.maximumLength, path, String(VCard.maximumLength)))
        }
        guard let text = String(validating: Array(data), as: UTF8.self) else { throw CLIError(.malformedInput, t("%1$@ is not UTF-8 text", path)) }
        let trimmed = text.drop { $0 == "\u{FEFF}" || $0.isWhitespace }
        do {
            if trimmed.first == "{" {
                return [VCard.Entry(card: try Card(json: try JSONParser.parse(Array(data))), notes: nil)]
            }
            if trimmed.first == "[" {
                guard let items = try JSONParser.parse(Array(data)).arrayValue else { throw CLIError(.malformedInput, t("%1$@ is not a JSON array", path)) }
                guard !items.isEmpty else { throw CLIError(.malformedInput, t("%1$@ holds no card", path)) }
                return try items.enumerated().map { i, item in
                    do { return try entry(item) } catch let e as ModelError {
                        throw CLIError(.malformedInput, t("%1$@: item %2$@: %3$@", path, String(i + 1), t.say(e.phrase)))
                    }
                }
            }
            let entries = try VCard.parse(text)
            guard !entries.isEmpty else { throw CLIError(.malformedInput, t("%1$@ holds no card", path)) }
            return entries
        } catch let e as ModelError {
            throw CLIError(.malformedInput, "\(path): " + t.say(e.phrase))
        } catch let e as CryptoError {
            throw CLIError(.malformedInput, "\(path): " + t.say(e.phrase))
        }
    }

    /// One item of a JSON array: a card, or a contact as `contacts export --json` writes it (its
    /// card's members and its notes; the rest — ids, keys, verification — belongs to the book it came from).
    static func entry(_ item: JSONValue) throws(ModelError) -> VCard.Entry {
        guard let o = item.objectValue, o["verificationStatus"] != nil || o["receivedAt"] != nil else {
            return VCard.Entry(card: try Card(json: item), notes: nil)
        }
        let card = JSONObject(o.members.filter { CardField(rawValue: $0.key) != nil && !$0.value.isNull }.map { ($0.key, $0.value) })
        return VCard.Entry(card: try Card(json: .object(card)), notes: o["notes"]?.stringValue)
    }
}

/// How cards are shown to people.
enum CardDisplay {
    static func rows(_ card: Card) -> [(String, String)] {
        var rows: [(String, String)] = []
        for field in CardField.displayOrder {
            switch field.kind {
            case .text: if let v = card[text: field] { rows.append((t(field.label), v)) }
            case .socialProfiles:
                for s in card.socialNetworks { rows.append((t(field.label), "\(s.platform): \(s.username)" + (s.url.map { " <\($0)>" } ?? ""))) }
            case .skills: if !card.skills.isEmpty { rows.append((t(field.label), card.skills.map(\.name).joined(separator: ", "))) }
            case .photo: if let photo = card.photo { rows.append((t(field.label), Photo.describe(photo))) }
            }
        }
        // What a card says is the card holder's text: isolated, it cannot reorder the line it is on.
        return rows.map { ($0.0, Console.isolated($0.1)) }
    }

    static func show(_ card: Card, database: Book) throws {
        var rows = rows(card)
        if let text = try database.issuerProof(), let proof = try? SemaphoreProof(json: text) {
            rows.append((t("Group proof"), t("member of root %1$@ (Semaphore, depth %2$@)", "\(proof.root)", String(proof.depth))))
        }
        Console.table(rows)
        Console.out("")
        let disclosed = try database.sharingPolicy().orderedFieldNames.joined(separator: ", ")
        Console.out(t("Exchanges disclose: %1$@  (change with: nearcard share --fields …)", disclosed))
    }
}
