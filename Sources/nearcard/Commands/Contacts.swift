import ArgumentParser
import Foundation
import NearcardCrypto
import NearcardModel
import NearcardNode

/// `nearcard contacts …`: the contact book.
struct Contacts: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "contacts",
        abstract: t("List, show, add, import, delete and export contacts."),
        subcommands: [List.self, Show.self, Add.self, Import.self, Delete.self, Export.self],
        defaultSubcommand: List.self)

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: t("List contacts."))
        @OptionGroup var global: GlobalOptions
        @Flag(help: ArgumentHelp(t("Print the contacts as a JSON array."))) var json = false

        func run() async throws {
            let db = try global.readingDatabase()
            let contacts = try db.contacts()
            // Exchanges stored unconfirmed (docs/PROTOCOL.md §11): the other node has not yet said it kept ours.
            let unconfirmed = try db.unconfirmedContactDIDs()
            if json {
                Console.json(
                    .array(
                        contacts.map { c in
                            guard var o = c.json.objectValue else { return c.json }
                            o["unconfirmed"] = .bool(c.didPublicKey.map(unconfirmed.contains) ?? false)
                            return .object(o)
                        }))
                return
            }
            if contacts.isEmpty {
                Console.out(t("No contacts yet. Exchange cards with `nearcard exchange PEER`, or add one with `nearcard contacts add --name …`."))
                try Self.sayWithdrawn(db)
                return
            }
            let rows = contacts.map { c in
                [
                    String(c.id.prefix(8)), c.name, c.card.company ?? "", c.source.rawValue,
                    (c.didPublicKey.map(unconfirmed.contains) ?? false)
                        ? t("%1$@ (unconfirmed)", c.verificationStatus.rawValue) : c.verificationStatus.rawValue,
                    ISO8601.string(c.receivedAt),
                ]
            }
            ContactDisplay.columns([t("ID"), t("NAME"), t("COMPANY"), t("SOURCE"), t("STATUS"), t("RECEIVED")], rows)
            if !unconfirmed.isEmpty {
                Console.out(
                    t(
                        "(unconfirmed: the connection ended before their node confirmed it kept your card; it is confirmed or withdrawn when your nodes next reach each other)"
                    ))
            }
            try Self.sayWithdrawn(db)
        }

        /// Exchanges withdrawn with a contact that was new with them: gone from the list, not from the
        /// history (the latest five).
        static func sayWithdrawn(_ db: Book) throws {
            for w in try db.withdrawnExchanges(anonymousOnly: true).prefix(5) {
                Console.out(
                    t(
                        "(withdrawn: the exchange of %1$@ — their node never kept your card, so theirs was removed on %2$@; nothing of it is kept)",
                        ISO8601.string(w.exchangedAt), ISO8601.string(w.withdrawnAt)))
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "show", abstract: t("Show one contact (by id, id prefix, DID or name)."))
        @OptionGroup var global: GlobalOptions
        @Argument(help: ArgumentHelp(t("Contact id (or its first characters), DID, or name.")), completion: ContactCompletion.kind) var id: String
        @Flag(help: ArgumentHelp(t("Print every field as JSON."))) var json = false

        func run() async throws {
            let db = try global.readingDatabase()
            let contact = try db.findContact(id)
            let exchanges = try contact.didPublicKey.map { try db.exchanges(contactDID: $0) } ?? []
            if json {
                var doc = Book.contactDocument(contact, exchanges: exchanges)
                // The contacts in common the last exchange found (§22), by DID; absent when none was run.
                if let did = contact.didPublicKey, var o = doc.objectValue {
                    // [] when the step found none; absent when none ran.
                    if let common = try db.commonContacts(with: did) { o["commonContacts"] = .array(common.map { .string($0) }) }
                    doc = .object(o)
                }
                // What the person keeps for this contact in their address books (docs/ADDRESSBOOK.md).
                let cards = try db.addressBookCards(contactID: contact.id)
                if !cards.isEmpty, var o = doc.objectValue {
                    o["addressBooks"] = .array(
                        cards.map { c in
                            .object([
                                "url": .string(c.book), "state": .string(c.state.rawValue), "note": c.serverNote.map { .string($0) } ?? .null,
                                "nickname": c.serverNickname.map { .string($0) } ?? .null, "conflict": c.conflict.map { .string($0) } ?? .null,
                            ])
                        })
                    doc = .object(o)
                }
                Console.json(doc)
            } else {
                ContactDisplay.show(contact, database: db, exchanges: exchanges)
            }
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add",
            abstract: t("Add a contact by hand (source manual, status unverified)."),
            usage: "nearcard contacts add --name NAME [--FIELD VALUE …] [--note TEXT] [--json]",
            discussion:
                t(
                    "The same card twice is stored once; a card with the name, email or phone of a contact already in the book is stored and said to be a possible duplicate."
                ) + "\n\n" + FieldOptions.help(for: Self.fields, heading: t("Their card's fields (--name is required)"))
        )
        /// The fields people type for someone else (the field table's `typedForContacts`).
        static let fields = CardField.table.filter(\.typedForContacts).map(\.field)

        @OptionGroup var global: GlobalOptions
        @Option(help: ArgumentHelp(t("A note."), valueName: "TEXT")) var note: String?
        @Flag(help: ArgumentHelp(t("Print the contact as JSON, with what became of it under \"merge\"."))) var json = false
        @Argument(parsing: .allUnrecognized, help: .hidden) var fieldArguments: [String] = []

        func validate() throws {
            let options = try FieldOptions(fieldArguments, fields: Self.fields)
            guard options.values[.name]?.first?.trimmingCharacters(in: .whitespaces).isEmpty == false else {
                throw ValidationError(t("give the contact's name: --name NAME"))
            }
        }

        func run() async throws {
            let options = try FieldOptions(fieldArguments, fields: Self.fields)
            let card = try options.applied(to: Card(name: "?"))
            try card.validate()
            try card.checkShapes { "--" + $0.row.option }
            let contact = Contact(card: card, source: .manual, verificationStatus: .unverified, receivedAt: Date(), notes: note)
            let kept = try global.database().keep(contact, payloadJSON: nil)
            if json {
                var o = kept.contact.json.objectValue ?? [:]
                o["merge"] = kept.json
                Console.json(.object(o))
            } else if kept.outcome == .added {
                Console.out(t("Added %1$@ (%2$@)", kept.contact.name, kept.contact.id))
            } else {
                Console.out("\(kept.contact.name) (\(kept.contact.id.prefix(8))): \(kept.summary)")
            }
        }
    }

    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "import",
            abstract: t("Add the contacts of a vCard file (one or many cards, e.g. from `contacts export --vcard`) or a JSON card."),
            discussion:
                t(
                    "Each card is added as `contacts add` adds one (source manual, status unverified): a card already in the book is not stored twice, and one that looks like a contact is said to be a possible duplicate. A vCard's X-NEARCARD-DID is not trusted: DIDs come only from exchanges and signed codes."
                )
        )
        @OptionGroup var global: GlobalOptions
        @Argument(help: ArgumentHelp(t("The file (vCard 4.0 or 3.0: BEGIN:VCARD…; JSON: {\"name\": …})."))) var file: String
        @Flag(help: ArgumentHelp(t("Print one JSON object per card: the contact and what became of it."))) var json = false

        func run() async throws {
            let entries = try CardFiles.readAll(file)
            let db = try global.database()
            var reports: [JSONValue] = []
            var counts: [String: Int] = [:]
            for entry in entries {
                let contact = Contact(card: entry.card, source: .manual, verificationStatus: .unverified, receivedAt: Date(), notes: entry.notes)
                let kept = try db.keep(contact, payloadJSON: nil)
                var o = kept.contact.json.objectValue ?? [:]
                o["merge"] = kept.json
                reports.append(.object(o))
                let outcome = kept.json["outcome"]?.stringValue ?? "added"
                counts[outcome, default: 0] += 1
                if !json, kept.outcome != .added { Console.out("\(kept.contact.name): \(kept.summary)") }
            }
            if json {
                Console.json(.array(reports))
                return
            }
            let added = (counts["added"] ?? 0) + (counts["possibleDuplicate"] ?? 0)
            let unchanged = String(counts["unchanged"] ?? 0)
            if let dup = counts["possibleDuplicate"] {
                Console.out(
                    t.plural(
                        "Imported %1$@: %2$@ added, %3$@ already in your contacts (%4$@ possible duplicate among the added)",
                        "Imported %1$@: %2$@ added, %3$@ already in your contacts (%4$@ possible duplicates among the added)",
                        count: dup, file, String(added), unchanged, String(dup)))
            } else {
                Console.out(t("Imported %1$@: %2$@ added, %3$@ already in your contacts", file, String(added), unchanged))
            }
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "delete",
            abstract: t("Delete a contact."),
            discussion:
                t(
                    "The contact is named exactly: its id or at least its first 4 characters, its DID, or its whole name (any case). At a terminal, shows whom and asks; scripts pass --yes."
                )
        )
        @OptionGroup var global: GlobalOptions
        @Argument(help: ArgumentHelp(t("Contact id (or its first 4+ characters), DID, or whole name.")), completion: ContactCompletion.kind) var id: String
        @Flag(name: [.short, .long], help: ArgumentHelp(t("Delete without asking."))) var yes = false

        func run() async throws {
            let db = try global.existingDatabase()
            let contact = try db.findContact(id)
            if !yes {
                guard Console.stdinIsTerminal else {
                    throw CLIError(
                        .malformedInput,
                        t("deleting %1$@ (%2$@) needs confirmation: run at a terminal, or pass --yes", contact.name, String(contact.id.prefix(8))))
                }
                let what = [contact.card.company, contact.source.rawValue, contact.verificationStatus.rawValue].compactMap { $0 }.joined(separator: ", ")
                Console.out(t("%1$@ (%2$@; %3$@), received %4$@", contact.name, String(contact.id.prefix(8)), what, ISO8601.string(contact.receivedAt)))
                guard let a = await Prompter().ask(t("Delete this contact? [y/N] "), timeout: 120), TerminalConsent.isYes(a) else {
                    throw CLIError(.declined, t("not deleted"))
                }
            }
            try db.deleteContact(id: contact.id)
            // A node running on this home no longer recognises them when this returns.
            try await RunningNode.changed(global, ["contacts"])
            Console.out(t("Deleted %1$@ (%2$@)", contact.name, contact.id))
        }
    }

    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "export",
            abstract: t("Export contacts as vCard 4.0, JSON, or the social-graph export (iOS format); or their photos."))
        @OptionGroup var global: GlobalOptions
        @Option(help: ArgumentHelp(t("Write each photo a contact's card carried to DIR as NAME-ID.jpg (mode 0600; DIR is made 0700)."), valueName: "DIR"))
        var photo: String?
        @Flag(help: ArgumentHelp(t("vCard 4.0, one card per contact."))) var vcard = false
        @Flag(help: ArgumentHelp(t("JSON array of contacts (as `contacts --json`)."))) var json = false
        @Flag(help: ArgumentHelp(t("The graph export: edges with both exchange signatures and both ephemeral messages."))) var graph = false
        @Option(help: ArgumentHelp(t("Write to FILE (mode 0600) instead of standard output."), valueName: "FILE")) var out: String?

        func validate() throws {
            let formats = [vcard, json, graph].filter({ $0 }).count
            if photo != nil {
                if formats != 0 || out != nil {
                    throw ValidationError(t("--photo DIR writes the photos alone: give it without --vcard, --json, --graph or --out"))
                }
            } else if formats != 1 {
                throw ValidationError(t("choose one of --vcard, --json, --graph (or --photo DIR)"))
            }
        }

        func run() async throws {
            let contacts = try global.existingDatabase().contacts()
            if let photo { return try Self.writePhotos(contacts, to: photo) }
            // The one export every face uses (the web app's Export too).
            let text = NearcardApp.export(contacts, as: vcard ? .vcard : json ? .json : .graph)
            if let out {
                try PrivateFiles.write(SecureBytes(Array(text.utf8)), to: out, mode: 0o600, replace: true)
                Console.err(
                    t.plural("Exported %1$@ contact(s) to %2$@", "Exported %1$@ contact(s) to %2$@", count: contacts.count, String(contacts.count), out))
            } else {
                Console.write(STDOUT_FILENO, text)
            }
        }

        /// Each photo as a JPEG file, named for its contact (letters and digits of the name, and the id's
        /// first 8 characters, so two of one name never collide).
        static func writePhotos(_ contacts: [Contact], to dir: String) throws {
            do { try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700]) } catch {
                throw CLIError(.storage, t("cannot make %1$@: %2$@", dir, error.localizedDescription))
            }
            var written = 0
            for c in contacts {
                guard let jpeg = c.card.photo else { continue }
                let base = String(c.name.unicodeScalars.map { CharacterSet.alphanumerics.contains($0) ? Character($0) : "-" }.prefix(40))
                let path = (dir as NSString).appendingPathComponent("\(base)-\(c.id.prefix(8)).jpg")
                try PrivateFiles.write(SecureBytes(jpeg), to: path, mode: 0o600, replace: true)
                written += 1
            }
            Console.err(
                t.plural(
                    "Wrote %1$@ photo(s) of %2$@ contact(s) to %3$@", "Wrote %1$@ photo(s) of %2$@ contact(s) to %3$@", count: written, String(written),
                    String(contacts.count), dir))
        }
    }
}

enum ContactDisplay {
    static func columns(_ header: [String], _ rows: [[String]]) {
        let rows = rows.map { $0.map(Console.isolated) }
        var widths = header.map(Console.width)
        for r in rows { for (i, v) in r.enumerated() { widths[i] = max(widths[i], Console.width(v)) } }
        func line(_ r: [String]) -> String {
            r.enumerated().map { i, v in i == r.count - 1 ? v : v + String(repeating: " ", count: max(0, widths[i] + 2 - Console.width(v))) }.joined()
        }
        Console.out(line(header))
        for r in rows { Console.out(line(r)) }
    }

    static func show(_ c: Contact, database: Book?, exchanges: [ExchangeRecord] = []) {
        var rows = CardDisplay.rows(c.card)
        rows.append((t("Status"), t("%1$@ (source %2$@)", c.verificationStatus.rawValue, c.source.rawValue)))
        if let note = c.olderCardNote { rows.append((t("Card"), note)) }
        if let note = GroupNote.note(for: c) { rows.append((t("Group"), note)) }
        if let did = c.didPublicKey { rows.append((t("DID"), did)) }
        // What the private common-contacts step of the last exchange found (docs/PROTOCOL.md §22).
        if let did = c.didPublicKey, let database, let common = (try? database.commonContacts(with: did)) ?? nil, !common.isEmpty {
            let names = common.map { (try? database.contact(did: $0))??.name ?? String($0.prefix(20)) + "…" }.sorted()
            rows.append(
                (
                    t("In common"),
                    t.plural(
                        "%1$@ contact in common: %2$@", "%1$@ contacts in common: %2$@", count: common.count, String(common.count),
                        names.joined(separator: ", "))
                ))
        }
        rows.append((t("Received"), ISO8601.string(c.receivedAt)))
        if let when = c.exchangeTimestamp { rows.append((t("Exchanged"), ISO8601.string(when))) }
        if exchanges.count > 1 || exchanges.contains(where: { !$0.node.isEmpty }) {
            // Which machine's node made them matters only when several nodes share this book (a fleet).
            let nodes = Set(exchanges.map(\.node).filter { !$0.isEmpty }).sorted()
            rows.append(
                (
                    t("Exchanges"),
                    nodes.count > 1
                        ? t("%1$@ (made by this book's nodes on %2$@)", String(exchanges.count), nodes.joined(separator: ", ")) : String(exchanges.count)
                ))
        }
        if let did = c.didPublicKey, let database {
            for w in (try? database.withdrawnExchanges(contactDID: did)) ?? [] {
                rows.append(
                    (
                        t("Withdrawn"),
                        t(
                            "the exchange of %1$@, on %2$@: their node never kept it; the contact is as the exchange before left it",
                            ISO8601.string(w.exchangedAt), ISO8601.string(w.withdrawnAt))
                    ))
            }
        }
        // A peer's words, isolated: an override in them (U+202E) cannot reorder the line.
        if let m = c.theirEphemeralMessage { rows.append((t("Their message"), Console.isolated(m))) }
        if let m = c.myEphemeralMessage { rows.append((t("My message"), m)) }
        if c.sealedRoute != nil { rows.append((t("Sealed route"), t("held (private follow-up messages possible)"))) }
        if let n = c.notes { rows.append((t("Notes"), n)) }
        // What the person keeps for this contact in their address books (never sent to anyone).
        let cards = (try? database?.addressBookCards(contactID: c.id)) ?? []
        let hosts = cards.map { URL(string: $0.book)?.host ?? $0.book }
        for card in cards {
            // An address book by its host; two on one host by their full address.
            let url = URL(string: card.book)
            var host = url?.host ?? card.book
            if hosts.filter({ $0 == host }).count > 1, let url {
                host += (url.port.map { ":\($0)" } ?? "") + url.path
                while host.hasSuffix("/") { host.removeLast() }
            }
            if let nick = card.serverNickname { rows.append((t("Nickname"), t("%1$@  (address book %2$@)", nick, host))) }
            if let note = card.serverNote { rows.append((t("Book note"), t("%1$@  (address book %2$@)", note, host))) }
            if card.state == .goneOnServer {
                rows.append((t("Address book"), t("deleted on %1$@; kept here (addressbook sync --mirror-deletes deletes it)", host)))
            }
            if let conflict = card.conflict { rows.append((t("Address book"), t("%1$@ keeps its own %2$@ (changed there)", host, conflict))) }
        }
        rows.append((t("ID"), c.id))
        Console.table(rows)
    }
}
