import ArgumentParser
import Foundation
import NearcardCrypto
import NearcardModel
import NearcardNode
import NearcardSemaphore

/// `nearcard card …`: your own card.
struct CardCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "card",
        abstract: "Set, show or import your business card.",
        subcommands: [Set.self, Show.self, Import.self],
        defaultSubcommand: Show.self)

    struct Set: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set",
            abstract: "Set fields of your card (only the fields given change; an empty value removes a field).",
            discussion: "--social and --skill replace the whole list when given; repeat them for several.")

        @OptionGroup var global: GlobalOptions
        @Option(help: "Your name (required for a new card).") var name: String?
        @Option(help: "Email address.") var email: String?
        @Option(help: "Phone number.") var phone: String?
        @Option(help: "Company.") var company: String?
        @Option(help: "Job title.") var title: String?
        @Option(help: ArgumentHelp("A social profile, PLATFORM:HANDLE[:URL]; repeatable.", valueName: "PLATFORM:HANDLE[:URL]"))
        var social: [String] = []
        @Option(help: ArgumentHelp("A skill, NAME[:CATEGORY[:PROFICIENCY]]; repeatable.", valueName: "NAME"))
        var skill: [String] = []
        @Flag(help: "Remove all social profiles.") var clearSocial = false
        @Flag(help: "Remove all skills.") var clearSkills = false
        @Option(
            help: ArgumentHelp(
                "A Semaphore group proof your card carries from now on; it must verify and be bound to your DID (see: nearcard semaphore binding).",
                valueName: "FILE"))
        var issuerProof: String?
        @Flag(help: "Stop carrying a group proof.") var clearIssuerProof = false
        @Flag(help: "Print the card as JSON afterwards.") var json = false

        func validate() throws {
            if issuerProof != nil && clearIssuerProof { throw ValidationError("give --issuer-proof or --clear-issuer-proof, not both") }
        }

        func run() async throws {
            let db = try global.database()
            let existing = try db.myCard()?.card
            if let issuerProof {
                let proof = try IssuerProofs.checked(issuerProof, holderDID: try global.identity().did)
                try db.setIssuerProof(proof.exportJSON)
                Console.err("Your card now carries a proof of membership of root \(proof.root) (depth \(proof.depth)).")
            }
            if clearIssuerProof {
                try db.setIssuerProof(nil)
                Console.err("Your card no longer carries a group proof.")
            }
            let fieldsGiven =
                name != nil || email != nil || phone != nil || company != nil || title != nil || !social.isEmpty
                || !skill.isEmpty || clearSocial || clearSkills
            if !fieldsGiven && (issuerProof != nil || clearIssuerProof) {
                try await RunningNode.changed(global, ["card"])
                if let existing { if json { Console.json(existing.json) } else { try CardDisplay.show(existing, database: db) } }
                return
            }
            guard existing != nil || (name.map { !$0.isEmpty } ?? false) else {
                if name != nil { throw CLIError(.malformedInput, "--name is empty: a card needs a name (--name \"Your Name\")") }
                throw CLIError(.malformedInput, "you have no card yet: give at least --name")
            }
            var card = existing ?? Card(name: "")
            func clean(_ s: String?) -> String?? {
                guard let s else { return .none } // not given: keep
                let t = s.trimmingCharacters(in: .whitespaces)
                return .some(t.isEmpty ? nil : t)
            }
            if let n = clean(name) {
                guard let n else { throw CLIError(.malformedInput, "--name cannot be empty: a card always has a name") }
                card.name = n
            }
            if let v = clean(email) { card.email = v }
            if let v = clean(phone) { card.phone = v }
            if let v = clean(company) { card.company = v }
            if let v = clean(title) { card.title = v }
            if clearSocial { card.socialNetworks = [] }
            if clearSkills { card.skills = [] }
            if !social.isEmpty { card.socialNetworks = try social.map { try SocialProfile(argument: $0) } }
            if !skill.isEmpty { card.skills = try skill.map { try Skill(argument: $0) } }
            // What was typed now must have its field's shape (an email address, a phone number, a URL).
            var typed = Card(name: card.name)
            for (field, value) in [(CardField.email, email), (.phone, phone)] { typed[text: field] = clean(value) ?? nil }
            if !social.isEmpty { typed.socialNetworks = card.socialNetworks }
            try typed.checkShapes { "--" + ($0 == .socialNetworks ? "social" : $0.rawValue) }
            let saved = try db.saveMyCard(card)
            // A node running on this home announces a new name and sends the new card from now on.
            try await RunningNode.changed(global, ["card"])
            if json { Console.json(saved.card.json) } else { try CardDisplay.show(saved.card, database: db) }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "show", abstract: "Show your card and which fields exchanges disclose.")
        @OptionGroup var global: GlobalOptions
        @Flag(help: "Print the card as JSON.") var json = false

        func run() async throws {
            let db = try global.existingDatabase()
            guard let mine = try db.myCard() else {
                throw CLIError(.notFound, "you have no card yet; make one with: nearcard card set --name \"Your Name\" --email …")
            }
            if json { Console.json(mine.card.json) } else { try CardDisplay.show(mine.card, database: db) }
        }
    }

    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "import",
            abstract: "Replace your card with one read from a vCard 4.0 file or a Nearcard JSON card.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The file (vCard: BEGIN:VCARD…; JSON: {\"name\": …}).") var file: String
        @Flag(help: "Print the card as JSON afterwards.") var json = false

        func run() async throws {
            let card = try CardFiles.read(file)
            let db = try global.database()
            let saved = try db.saveMyCard(card)
            try await RunningNode.changed(global, ["card"])
            if json {
                Console.json(saved.card.json)
            } else {
                Console.out("Imported your card from \(file)")
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
        guard let first = entries.first else { throw CLIError(.malformedInput, "\(path) holds no card") }
        guard entries.count == 1 else {
            throw CLIError(
                .malformedInput,
                "\(path) holds \(entries.count) cards and your card is one: give a file with one card (to add these as contacts: nearcard contacts import \(path))"
            )
        }
        return first.card
    }

    /// Every card in the file: the vCards of a vCard file, the one JSON card, or a JSON array of
    /// cards or of contacts (`contacts export --json`; of a contact, its card and notes are read,
    /// not what it claims of its verification).
    static func readAll(_ path: String) throws -> [VCard.Entry] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CLIError(.malformedInput, "cannot read \(path): \(PrivateFiles.unreadable(path))")
        }
        guard data.count <= VCard.maximumLength else { throw CLIError(.malformedInput, "\(path) is larger than \(VCard.maximumLength) bytes") }
        guard let text = String(validating: Array(data), as: UTF8.self) else { throw CLIError(.malformedInput, "\(path) is not UTF-8 text") }
        let trimmed = text.drop { $0 == "\u{FEFF}" || $0.isWhitespace }
        do {
            if trimmed.first == "{" {
                return [VCard.Entry(card: try Card(json: try JSONParser.parse(Array(data))), notes: nil)]
            }
            if trimmed.first == "[" {
                guard let items = try JSONParser.parse(Array(data)).arrayValue else { throw CLIError(.malformedInput, "\(path) is not a JSON array") }
                guard !items.isEmpty else { throw CLIError(.malformedInput, "\(path) holds no card") }
                return try items.enumerated().map { i, item in
                    do { return try entry(item) } catch let e as ModelError {
                        throw CLIError(.malformedInput, "\(path): item \(i + 1): \(e.message)")
                    }
                }
            }
            let entries = try VCard.parse(text)
            guard !entries.isEmpty else { throw CLIError(.malformedInput, "\(path) holds no card") }
            return entries
        } catch let e as ModelError {
            throw CLIError(.malformedInput, "\(path): \(e.message)")
        } catch let e as CryptoError {
            throw CLIError(.malformedInput, "\(path): \(e.message)")
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
            case .text: if let v = card[text: field] { rows.append((field.label, v)) }
            case .socialProfiles:
                for s in card.socialNetworks { rows.append((field.label, "\(s.platform): \(s.username)" + (s.url.map { " <\($0)>" } ?? ""))) }
            case .skills: if !card.skills.isEmpty { rows.append((field.label, card.skills.map(\.name).joined(separator: ", "))) }
            }
        }
        // What a card says is the card holder's text: isolated, it cannot reorder the line it is on.
        return rows.map { ($0.0, Console.isolated($0.1)) }
    }

    static func show(_ card: Card, database: Book) throws {
        var rows = rows(card)
        if let text = try database.issuerProof(), let proof = try? SemaphoreProof(json: text) {
            rows.append(("Group proof", "member of root \(proof.root) (Semaphore, depth \(proof.depth))"))
        }
        Console.table(rows)
        Console.out("")
        Console.out("Exchanges disclose: \(try database.sharingPolicy().orderedFieldNames.joined(separator: ", "))  (change with: nearcard share --fields …)")
    }
}
