import ArgumentParser
import Foundation
import NearcardCrypto
import NearcardModel
import NearcardStore

/// `nearcard contacts …`: the contact book.
struct Contacts: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List, show, add, delete and export contacts.",
        subcommands: [List.self, Show.self, Add.self, Delete.self, Export.self],
        defaultSubcommand: List.self)

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List contacts.")
        @OptionGroup var global: GlobalOptions
        @Flag(help: "Print the contacts as a JSON array.") var json = false

        func run() async throws {
            let contacts = try global.database().contacts()
            if json {
                Console.json(.array(contacts.map(\.json)))
                return
            }
            if contacts.isEmpty {
                Console.out("No contacts yet. Exchange cards with `nearcard exchange PEER`, or add one with `nearcard contacts add --name …`.")
                return
            }
            let rows = contacts.map { c in
                [String(c.id.prefix(8)), c.name, c.card.company ?? "", c.source.rawValue, c.verificationStatus.rawValue,
                 ISO8601.string(c.receivedAt)]
            }
            ContactDisplay.columns(["ID", "NAME", "COMPANY", "SOURCE", "STATUS", "RECEIVED"], rows)
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show one contact (by id, id prefix, DID or name).")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "Contact id (or its first characters), DID, or name.") var id: String
        @Flag(help: "Print every field as JSON.") var json = false

        func run() async throws {
            let db = try global.database()
            let contact = try db.findContact(id)
            if json { Console.json(contact.json) } else { ContactDisplay.show(contact, database: db) }
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add a contact by hand (source manual, status unverified).")
        @OptionGroup var global: GlobalOptions
        @Option(help: "Name.") var name: String
        @Option(help: "Email address.") var email: String?
        @Option(help: "Phone number.") var phone: String?
        @Option(help: "Company.") var company: String?
        @Option(help: "Job title.") var title: String?
        @Option(help: "A note.") var note: String?
        @Flag(help: "Print the new contact as JSON.") var json = false

        func run() async throws {
            let card = Card(name: name.trimmingCharacters(in: .whitespaces), email: email, phone: phone, company: company, title: title)
            let contact = try global.database().addManualContact(card, notes: note)
            if json { Console.json(contact.json) } else { Console.out("Added \(contact.name) (\(contact.id))") }
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a contact.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "Contact id (or its first characters), DID, or name.") var id: String

        func run() async throws {
            let db = try global.database()
            let contact = try db.findContact(id)
            try db.deleteContact(id: contact.id)
            Console.out("Deleted \(contact.name) (\(contact.id))")
        }
    }

    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Export contacts as vCard 4.0, JSON, or the social-graph export (iOS format).")
        @OptionGroup var global: GlobalOptions
        @Flag(help: "vCard 4.0, one card per contact.") var vcard = false
        @Flag(help: "JSON array of contacts (as `contacts --json`).") var json = false
        @Flag(help: "The graph export: edges with both exchange signatures and both ephemeral messages.") var graph = false
        @Option(help: ArgumentHelp("Write to FILE (mode 0600) instead of standard output.", valueName: "FILE")) var out: String?

        func validate() throws {
            if [vcard, json, graph].filter({ $0 }).count != 1 { throw ValidationError("choose one of --vcard, --json, --graph") }
        }

        func run() async throws {
            let contacts = try global.database().contacts()
            let text: String
            if vcard {
                text = contacts.map { VCard.serialize($0.card, notes: $0.notes, did: $0.didPublicKey, uid: $0.id) }.joined()
            } else if json {
                text = JSONValue.array(contacts.map(\.json)).prettyText + "\n"
            } else {
                text = GraphExport.json(contacts: contacts, exportedAt: Date()).prettyText + "\n"
            }
            if let out {
                try FileIO.writeAtomically(SecureBytes(Array(text.utf8)), to: out, mode: 0o600, replace: true)
                Console.err("Exported \(contacts.count) contact(s) to \(out)")
            } else {
                Console.write(STDOUT_FILENO, text)
            }
        }
    }
}

enum ContactDisplay {
    static func columns(_ header: [String], _ rows: [[String]]) {
        var widths = header.map(\.count)
        for r in rows { for (i, v) in r.enumerated() { widths[i] = max(widths[i], v.count) } }
        func line(_ r: [String]) -> String {
            r.enumerated().map { i, v in i == r.count - 1 ? v : v.padding(toLength: widths[i] + 2) }.joined()
        }
        Console.out(line(header))
        for r in rows { Console.out(line(r)) }
    }

    static func show(_ c: Contact, database: NearcardDatabase?) {
        var rows = CardDisplay.rows(c.card)
        rows.append(("Status", c.verificationStatus.rawValue + " (source \(c.source.rawValue))"))
        if let note = GroupNote.note(for: c) { rows.append(("Group", note)) }
        if let did = c.didPublicKey { rows.append(("DID", did)) }
        rows.append(("Received", ISO8601.string(c.receivedAt)))
        if let t = c.exchangeTimestamp { rows.append(("Exchanged", ISO8601.string(t))) }
        if let m = c.theirEphemeralMessage { rows.append(("Their message", m)) }
        if let m = c.myEphemeralMessage { rows.append(("My message", m)) }
        if c.sealedRoute != nil { rows.append(("Sealed route", "held (private follow-up messages possible)")) }
        if let n = c.notes { rows.append(("Notes", n)) }
        rows.append(("ID", c.id))
        Console.table(rows)
    }
}
