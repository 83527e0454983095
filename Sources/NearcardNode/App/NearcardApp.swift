public import Foundation
import NearcardAddressBook
public import NearcardCrypto
public import NearcardModel
import NearcardStore

/// What a face (the web app; the CLI and the JSON-lines controller as they move onto it) does with a
/// home, in one place over a node's runtime: the card and what it shares, contacts and
/// their export, messages, address books. Each change goes to the book and is followed by the node
/// at once (a new name announced, a deleted contact a stranger), so a face never has to remember to
/// tell the node. (Card codes and scanning are NearcardQR's, beside the node: NearcardControl's
/// `NearcardApp+Codes.swift` adds them.) Errors are `NodeError`s, whose kind
/// decides a face's status or exit code.
public final class NearcardApp: Sendable {
    public let runtime: NodeRuntime
    private var context: NodeContext { runtime.context }
    private var database: NearcardDatabase { runtime.context.database }

    public init(runtime: NodeRuntime) { self.runtime = runtime }

    /// Who this home is: its name, DID and fingerprint.
    public var identity: PublicIdentity { context.identity }

    /// The book the node keeps, for what the methods below do not cover.
    public var book: Book { Book(database) }

    /// Lends this home's identity keys to `body` for one signature (a signed card code: NearcardQR's
    /// envelopes, beside the node); nothing keeps them after the call.
    public func signing<T>(_ body: (IdentityKeys) throws -> T) rethrows -> T { try body(context.keys) }

    /// A store call, its failure as the node's kind (not found, invalid input, storage).
    @discardableResult
    private func stored<T>(_ doing: Phrase, _ body: () throws -> T) throws(NodeError) -> T {
        do { return try body() } catch let e as NodeError { throw e } catch { throw NodeError(storage: error, while: doing) }
    }

    // MARK: the card

    /// The card (nil before one is made) and the fields every exchange discloses.
    public func card() throws(NodeError) -> (card: Card?, sharing: SharingPolicy) {
        try stored(Phrase("reading your card")) { (try database.myCard()?.card, try database.sharingPolicy()) }
    }

    /// Saves the card; the node announces a new name before this returns and sends the new card from
    /// the next session.
    public func saveCard(_ card: Card) async throws(NodeError) {
        try stored(Phrase("saving your card")) { try database.saveMyCard(card) }
        try await runtime.cardChanged()
    }

    /// Sets the fields every exchange discloses, from the next session on.
    public func share(_ fields: Set<CardField>) async throws(NodeError) {
        try stored(Phrase("saving what you share")) { try database.saveSharingPolicy(SharingPolicy(fields: fields)) }
        try await runtime.cardChanged()
    }

    // MARK: contacts

    public func contacts() throws(NodeError) -> [Contact] {
        try stored(Phrase("reading your contacts")) { try database.contacts() }
    }

    public func contact(id: String) throws(NodeError) -> Contact? {
        try stored(Phrase("reading a contact")) { try database.contact(id: id) }
    }

    /// Deletes a contact and all tied to them; the node recognises them no more from the return on.
    /// False when there was no such contact.
    @discardableResult
    public func deleteContact(id: String) throws(NodeError) -> Bool {
        let deleted = try stored(Phrase("deleting a contact")) { try database.deleteContact(id: id) }
        if deleted { runtime.contactsChanged() }
        return deleted
    }

    /// The ways the contacts leave Nearcard.
    public enum ExportFormat: String, Sendable, CaseIterable {
        /// vCard 4.0, one card per contact.
        case vcard
        /// The contacts as JSON.
        case json
        /// The social-graph export (the iOS app's format): edges with both signatures and messages.
        case graph

        /// The media type of the text `export` gives.
        public var mediaType: String { self == .vcard ? "text/vcard; charset=utf-8" : "application/json" }
        /// A file name for it.
        public var fileName: String { self == .vcard ? "contacts.vcf" : self == .json ? "contacts.json" : "graph.json" }
    }

    /// Every contact, as `format` writes them.
    public func export(_ format: ExportFormat, now: Date = Date()) throws(NodeError) -> String {
        Self.export(try contacts(), as: format, now: now)
    }

    /// `contacts` as `format` writes them (one place for every face's export).
    public static func export(_ contacts: [Contact], as format: ExportFormat, now: Date = Date()) -> String {
        switch format {
        case .vcard: contacts.map(vCard).joined()
        case .json: JSONValue.array(contacts.map(\.json)).prettyText + "\n"
        case .graph: GraphExport.json(contacts: contacts, exportedAt: now).prettyText + "\n"
        }
    }

    /// One contact as a vCard 4.0.
    public static func vCard(_ c: Contact) -> String { VCard.serialize(c.card, notes: c.notes, did: c.didPublicKey, uid: c.id) }

    // MARK: messages

    /// What contacts wrote, and what was sent with how it stands (as docs/JSONL.md shows a message).
    public func messages() throws(NodeError) -> (inbox: [JSONValue], outbox: [JSONValue]) {
        try stored(Phrase("reading your messages")) { (try database.inbox().map(\.json), try database.outbox(all: true).map(\.json)) }
    }

    /// Sends a follow-up to a contact (queued when they are away); the message as docs/JSONL.md shows it.
    public func send(message text: String, to contact: String, wait: TimeInterval) async throws(NodeError) -> JSONValue {
        do { return try await runtime.send(message: text, to: contact, wait: wait).json } catch let e as NodeError { throw e } catch {
            throw NodeError(storage: error, while: Phrase("sending the message"))
        }
    }

    /// Tries every queued message now (the contacts looked for on the LAN for `wait` seconds): how
    /// many were tried, and delivered.
    public func retryOutbox(wait: TimeInterval) async -> (tried: Int, delivered: Int) {
        let tried = await runtime.deliverQueued(wait: wait)
        return (tried.count, tried.filter { $0.state == .delivered }.count)
    }

    // MARK: address books

    /// Each account and what waits for it (never its password), as `addressbook status --json` shows it.
    public func addressBooks() throws(NodeError) -> [JSONValue] {
        let db = database
        return try stored(Phrase("reading the address books")) {
            try db.addressBooks().map { a in
                AddressBookSync.json(
                    a, pending: try AddressBookSync.pending(a, database: db), notices: try db.addressBookNotices(book: a.url, unsaid: false))
            }
        }
    }

    /// Adds an account (the collection found from `serverURL`) whose password is in the file
    /// `credential` names, and syncs it (the node's syncs wait). An account the server refuses for good
    /// (not merely down) is not kept. The collection's URL and the sync's report, or the error's sentence.
    public func addAddressBook(serverURL: String, username: String, credential: String) async -> Result<
        (url: String, report: JSONValue), AddressBookRefusal
    > {
        let collection: String
        do throws(AddressBookError) {
            collection = try await book.connectAddressBook(serverURL: serverURL, username: username, credential: credential)
        } catch {
            return .failure(AddressBookRefusal(error))
        }
        let existed: Bool
        do throws(NodeError) {
            existed = try stored(Phrase("reading the address books")) { try database.addressBooks().contains { $0.url == collection } }
            let account = AddressBookAccount(url: collection, serverURL: serverURL, username: username, credential: credential, includeQR: false)
            try stored(Phrase("saving the address book")) { try database.saveAddressBook(account) }
            let outcome = try await runtime.syncAddressBooks(url: collection, mirrorDeletes: false).first
            if let report = outcome?.report { return .success((collection, report)) }
            // Refused for good (not merely down): not kept.
            if outcome?.errorKind != AddressBookErrorKind.unreachable.rawValue && !existed {
                _ = try? database.removeAddressBook(url: collection)
            }
            let kind = outcome?.errorKind.flatMap(AddressBookErrorKind.init(rawValue:)) ?? .store
            return .failure(AddressBookRefusal(AddressBookError(kind, outcome?.message ?? "\(collection) was removed while it synced")))
        } catch {
            return .failure(AddressBookRefusal(field: nil, formMessage: error.message, message: error.message))
        }
    }

    /// Removes an account (its cards on the server stay); nil when there is none. Returns where its
    /// password was kept (`file:PATH`, …), for the face that made the file to remove it.
    public func removeAddressBook(url: String) async throws(NodeError) -> String? {
        guard let account = try stored(Phrase("reading the address books"), { try database.addressBooks().first { $0.url == url } }) else { return nil }
        _ = try stored(Phrase("removing the address book")) { try database.removeAddressBook(url: account.url) }
        await runtime.addressBooksChanged()
        return account.credential
    }

    /// Where a face keeps an address book's password it was typed (the web app's form): a 0600 file in
    /// the home named for the account, `addressbook-<16 hex>.password`.
    public static func addressBookPasswordFile(home: String, url: String, user: String) -> String {
        home + "/addressbook-" + Hex.encode(SHA256.hash(Array("\(url)\u{0}\(user)".utf8)).prefix(8).map { $0 }) + ".password"
    }

    /// The password file Nearcard made for an account (`addressBookPasswordFile`), when the account's
    /// credential is one: it goes with the account, whichever face removes it. A file the person gave
    /// (`--password-file`) is theirs and stays.
    public static func keptPasswordFile(credential: String, home: String) -> String? {
        guard credential.hasPrefix("file:") else { return nil }
        let path = String(credential.dropFirst(5))
        let name = (path as NSString).lastPathComponent
        guard (path as NSString).deletingLastPathComponent == home, name.hasPrefix("addressbook-"), name.hasSuffix(".password"),
            name.count == "addressbook-".count + 16 + ".password".count
        else { return nil }
        return path
    }

    /// Writes a secret (an address book's password) to `path`, 0600, replacing what was there.
    public static func keepSecret(_ secret: String, at path: String) throws(NodeError) {
        do { try FileIO.writeAtomically(SecureBytes(Array(secret.utf8)), to: path, mode: 0o600, replace: true) } catch {
            throw NodeError(storage: error, while: Phrase("keeping the password"))
        }
    }
}

/// Why an address book was not added, for a form that asked for its URL, user name and password: the
/// field to correct and a sentence in the form's terms (no command lines), besides the full sentence.
public struct AddressBookRefusal: Error, Sendable {
    public enum Field: String, Sendable { case url, user, password }
    public let field: Field?
    public let formMessage: String
    public let message: String

    public init(field: Field?, formMessage: String, message: String) {
        self.field = field
        self.formMessage = formMessage
        self.message = message
    }

    init(_ error: AddressBookError) {
        // The detail without the account's URL in front and without advice to run a command.
        var detail = error.message
        if detail.hasPrefix("http"), let colon = detail.range(of: ": ") { detail = String(detail[colon.upperBound...]) }
        let clauses = detail.components(separatedBy: "; ").filter { !$0.contains("nearcard ") && !$0.contains("--password-file") }
        detail = clauses.joined(separator: "; ")
        if let first = detail.first { detail = first.uppercased() + detail.dropFirst() }
        if !detail.hasSuffix(".") { detail += "." }
        switch error.kind {
        case .unauthorized:
            self.init(field: .password, formMessage: "The server refused this user name and password. Check both and try again.", message: error.message)
        case .credential: self.init(field: .password, formMessage: detail, message: error.message)
        case .readOnly:
            self.init(
                field: .user,
                formMessage: "This user may only read that address book: give it write access on the server, or choose another address book.",
                message: error.message)
        case .certificate: self.init(field: .url, formMessage: "The server's certificate was not accepted. " + detail, message: error.message)
        case .unreachable: self.init(field: .url, formMessage: "Cannot reach the server. " + detail, message: error.message)
        case .notAddressBook, .invalidInput: self.init(field: .url, formMessage: detail, message: error.message)
        default: self.init(field: nil, formMessage: detail, message: error.message)
        }
    }
}
