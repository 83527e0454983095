public import Foundation
public import NearcardCrypto
public import NearcardModel
public import NearcardStore

/// What one sync did, for the person who asked.
public struct AddressBookSyncReport: Sendable, Equatable {
    public var created = 0
    public var updated = 0
    public var deleted = 0
    public var unchanged = 0
    /// Cards whose note or nickname the person changed on the server (now in `contacts show`).
    public var editsSeen = 0
    /// Contacts whose card the person deleted on the server (kept here; `--mirror-deletes` deletes them).
    public var goneOnServer: [String] = []
    /// Contacts deleted here because their card was deleted on the server (`--mirror-deletes`).
    public var mirroredDeletes: [String] = []
    /// Contacts with owned properties both sides changed: the server's edit was kept.
    public var conflicts: [String] = []
    /// Cards that could not be synced this time (they are tried again).
    public var failed: [String] = []

    public init() {}
}

/// What `addressbook status` shows besides the account.
public struct AddressBookPending: Sendable, Equatable {
    /// Contacts to create or update on the server.
    public var toWrite: Int
    /// Cards to delete on the server.
    public var toDelete: Int
    /// Cards the person deleted on the server.
    public var goneOnServer: Int
    public var conflicts: Int
    public var synced: Int
}

/// CardDAV sync of the book's contacts (docs/ADDRESSBOOK.md): adding an account, a sync pass, and what
/// is pending. The server is the only thing reached; nothing but the contact's disclosed fields, DID and
/// verification status is written there.
public enum AddressBookSync {
    /// Where a password may be read from, and the most read.
    static let maximumPassword = 4096

    /// The password an account's `credential` names: `file:PATH` (a private file: mode 0600 or
    /// stricter), `credential:NAME` (systemd's `$CREDENTIALS_DIRECTORY/NAME`) or `secret-service:SERVER USER`
    /// (the desktop's Secret Service). A final newline is dropped.
    public static func password(credential: String, account: String, environment: [String: String] = ProcessInfo.processInfo.environment)
        throws(AddressBookError) -> String
    {
        if credential.hasPrefix("secret-service:") { return try SecretService.lookup(credential, account: account, environment: environment) }
        let path: String
        if credential.hasPrefix("file:") {
            path = String(credential.dropFirst(5))
        } else if credential.hasPrefix("credential:") {
            let name = String(credential.dropFirst(11))
            guard let dir = environment["CREDENTIALS_DIRECTORY"], !dir.isEmpty else {
                throw AddressBookError(
                    .credential,
                    Phrase(
                        "%1$@: the password is the systemd credential \"%2$@\", but $CREDENTIALS_DIRECTORY is not set; run under systemd with LoadCredential=%2$@:FILE",
                        account, name))
            }
            path = dir + "/" + name
        } else {
            throw AddressBookError(.credential, Phrase("%1$@: \"%2$@\" is not a password source Nearcard knows; add the account again", account, credential))
        }
        let bytes: SecureBytes
        do { bytes = try FileIO.readSmallFile(path, limit: maximumPassword, privateOnly: true, what: "password file") } catch {
            throw AddressBookError(.credential, Phrase("%1$@: cannot read the password: %2$@", account, error.phrase))
        }
        var text = bytes.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
        while text.hasSuffix("\n") || text.hasSuffix("\r") { text.removeLast() }
        guard !text.isEmpty else { throw AddressBookError(.credential, Phrase("%1$@: the password file %2$@ is empty", account, path)) }
        return text
    }

    /// Finds the address book `serverURL` leads to and checks the account may write there; returns the
    /// collection's URL. `configured` are the accounts already added: a collection that is one of them
    /// under another address (another host name for the same machine, or holding the very cards an
    /// account wrote) is refused, naming it — the same book synced twice would hold every card twice.
    public static func connect(
        serverURL: String, username: String, credential: String, configured: [AddressBookAccount] = [], database: NearcardDatabase? = nil
    ) async throws(AddressBookError) -> String {
        guard let start = URL(string: serverURL), start.host != nil else {
            throw AddressBookError(.invalidInput, Phrase("\"%1$@\" is not a URL; give the server's address, e.g. https://dav.example.org/", serverURL))
        }
        try CardDAVClient.checkScheme(start, account: serverURL)
        let secret = try password(credential: credential, account: serverURL)
        let client = CardDAVClient(account: serverURL, username: username, password: secret)
        do throws(AddressBookError) {
            try await client.checkReachable(start)
            let collection = try await client.discover(start)
            if try await client.mayWrite(collection) == false {
                throw AddressBookError(
                    .readOnly,
                    Phrase(
                        "%1$@: user \"%2$@\" may only read this address book; give the account write access on the server, or choose another address book",
                        collection.absoluteString, username))
            }
            var text = collection.absoluteString
            if !text.hasSuffix("/") { text += "/" }
            let others = configured.filter { $0.url != text }
            if let same = others.first(where: { sameCollection($0.url, text) }) { throw alreadyAdded(text, as: same.url) }
            if !others.isEmpty, let database {
                let listing = try await client.list(collection)
                let theirs = Set(listing.map { ($0.value.url.lastPathComponent) + "\u{0}" + $0.value.etag })
                for other in others {
                    let written = (try? database.addressBookCards(book: other.url)) ?? []
                    if written.contains(where: { row in
                        guard let href = URL(string: row.href), let etag = row.etag else { return false }
                        return theirs.contains(href.lastPathComponent + "\u{0}" + etag)
                    }) {
                        throw alreadyAdded(text, as: other.url)
                    }
                }
            }
            await client.shutdown()
            return text
        } catch {
            await client.shutdown()
            throw error
        }
    }

    static func alreadyAdded(_ url: String, as existing: String) -> AddressBookError {
        AddressBookError(
            .invalidInput,
            Phrase(
                "%1$@ is the address book already added as %2$@ (the same server and collection); it is synced there already — to use this address instead, remove that one first (nearcard addressbook remove %2$@)",
                url, existing))
    }

    /// Whether two collection URLs name one collection on one server: the same path and port, and host
    /// names that are equal or resolve to a common address (`localhost` and `127.0.0.1`).
    public static func sameCollection(_ a: String, _ b: String) -> Bool {
        guard let x = URL(string: a), let y = URL(string: b), let hx = x.host?.lowercased(), let hy = y.host?.lowercased() else { return false }
        func port(_ u: URL) -> Int { u.port ?? (u.scheme?.lowercased() == "http" ? 80 : 443) }
        guard CardDAVClient.key(x) == CardDAVClient.key(y), port(x) == port(y) else { return false }
        if hx == hy { return true }
        return !addresses(of: hx).isDisjoint(with: addresses(of: hy))
    }

    /// The numeric addresses a host name resolves to (the system's resolver; nothing when it fails).
    static func addresses(of host: String) -> Set<String> {
        let name = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(name, nil, &hints, &list) == 0, let first = list else { return [] }
        defer { freeaddrinfo(first) }
        var found = Set<String>()
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let entry = cursor {
            var text = [CChar](repeating: 0, count: Int(NI_MAXHOST))
            if getnameinfo(entry.pointee.ai_addr, entry.pointee.ai_addrlen, &text, socklen_t(text.count), nil, 0, NI_NUMERICHOST) == 0 {
                found.insert(String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
            }
            cursor = entry.pointee.ai_next
        }
        return found
    }

    /// Whether a contact goes to this account: met in person always, QR contacts when the account says.
    public static func syncs(_ contact: Contact, to account: AddressBookAccount) -> Bool {
        contact.source == .proximity || (account.includeQR && contact.source == .qrCode)
    }

    /// The UID of a contact's card: one per contact, whatever the account (the same book under two
    /// addresses, or added again after a rename, names the same card rather than a second one), stable
    /// (a retried or concurrent first write names the same card), and telling the server nothing (a hash
    /// of Nearcard's random contact id).
    public static func uid(contactID: String) -> String {
        var h = SHA256.hash(Array("nearcard-addressbook-uid\u{0}\(contactID)".utf8)).prefix(16).map { $0 }
        h[6] = (h[6] & 0x0F) | 0x80 // version 8 (RFC 9562: custom)
        h[8] = (h[8] & 0x3F) | 0x80
        let hex = Hex.encode(h)
        let c = Array(hex)
        return String(c[0..<8]) + "-" + String(c[8..<12]) + "-" + String(c[12..<16]) + "-" + String(c[16..<20]) + "-" + String(c[20..<32])
    }

    /// What the next sync has to do, told without the server.
    public static func pending(_ account: AddressBookAccount, database: NearcardDatabase) throws(StoreError) -> AddressBookPending {
        let rows = try database.addressBookCards(book: account.url)
        let byContact = Dictionary(rows.map { ($0.contactID, $0) }, uniquingKeysWith: { a, _ in a })
        var p = AddressBookPending(toWrite: 0, toDelete: 0, goneOnServer: 0, conflicts: 0, synced: 0)
        var live = Set<String>()
        for contact in try database.contacts() where syncs(contact, to: account) {
            live.insert(contact.id)
            guard let row = byContact[contact.id] else {
                p.toWrite += 1
                continue
            }
            switch row.state {
            case .deleting: p.toDelete += 1
            case .goneOnServer: p.goneOnServer += 1
            case .synced:
                let ours = VCard.addressBookCard(contact, uid: row.uid)
                if VCard.ownedPart(ours) != VCard.ownedPart(row.written ?? "") { p.toWrite += 1 } else { p.synced += 1 }
                if row.conflict != nil { p.conflicts += 1 }
            }
        }
        p.toDelete += rows.filter { !live.contains($0.contactID) && $0.state != .goneOnServer }.count
        return p
    }

    /// One sync of an account: deletes on the server what was deleted here, sees what the person changed
    /// there (notes, nicknames, deleted cards), and writes every contact that is new or changed — merged
    /// into the server's copy, with `If-Match`. Throws when the server cannot be used at all (refused
    /// password, certificate, unreachable, read-only); a problem with one card is in the report and tried
    /// again next time. With `mirrorDeletes`, a card deleted on the server deletes its contact here.
    /// The pass is recorded on the account (`addressbook status`): when it reached the server, or its
    /// error and when a running node tries again (`retryAt`, default at once).
    public static func sync(_ account: AddressBookAccount, database: NearcardDatabase, mirrorDeletes: Bool = false, retryAt: Date? = nil)
        async throws(AddressBookError) -> AddressBookSyncReport
    {
        do throws(AddressBookError) {
            let report = try await pass(account, database: database, mirrorDeletes: mirrorDeletes)
            try? database.recordAddressBookPass(url: account.url, error: nil)
            return report
        } catch {
            try? database.recordAddressBookPass(url: account.url, error: error.message, retryAt: retryAt)
            throw error
        }
    }

    static func pass(_ account: AddressBookAccount, database: NearcardDatabase, mirrorDeletes: Bool) async throws(AddressBookError)
        -> AddressBookSyncReport
    {
        guard let collection = URL(string: account.url) else {
            throw AddressBookError(.invalidInput, Phrase("%1$@ is not a URL; remove the account and add it again", account.url))
        }
        let secret = try password(credential: account.credential, account: account.url)
        let client = CardDAVClient(account: account.url, username: account.username, password: secret)
        do throws(AddressBookError) {
            let report = try await Pass(account: account, collection: collection, database: database, client: client, mirrorDeletes: mirrorDeletes).run()
            await client.shutdown()
            return report
        } catch {
            await client.shutdown()
            throw error
        }
    }
}

/// One sync pass (AddressBookSync.sync).
private struct Pass {
    let account: AddressBookAccount
    let collection: URL
    let database: NearcardDatabase
    let client: CardDAVClient
    let mirrorDeletes: Bool

    func store<T>(_ body: () throws -> T) throws(AddressBookError) -> T {
        do { return try body() } catch {
            throw AddressBookError(.store, Phrase("%1$@: the book: %2$@", account.url, (error as? StoreError)?.phrase ?? Phrase(verbatim: "\(error)")))
        }
    }

    func run() async throws(AddressBookError) -> AddressBookSyncReport {
        var report = AddressBookSyncReport()
        try await client.checkReachable(collection)
        let listing = try await client.list(collection)
        let rows = try store { try database.addressBookCards(book: account.url) }
        let contacts = try store { try database.contacts() }.filter { AddressBookSync.syncs($0, to: account) }
        let byID = Dictionary(contacts.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        var handled = Set<String>()
        for row in rows {
            handled.insert(row.contactID)
            let onServer = URL(string: row.href).flatMap { listing[CardDAVClient.key($0)] }
            guard let contact = byID[row.contactID], row.state != .deleting else {
                try await delete(row, onServer: onServer, report: &report)
                continue
            }
            if row.state == .goneOnServer || onServer == nil {
                if mirrorDeletes {
                    _ = try store { try database.deleteContact(id: contact.id) }
                    try store { try database.forgetAddressBookCard(book: account.url, contactID: contact.id) }
                    report.mirroredDeletes.append(contact.name)
                } else {
                    if row.state != .goneOnServer {
                        try store { try database.saveAddressBookCard(row.with(state: .goneOnServer)) }
                    }
                    report.goneOnServer.append(contact.name)
                }
                continue
            }
            try await update(row, contact: contact, serverETag: onServer?.etag, report: &report)
        }
        for contact in contacts where !handled.contains(contact.id) {
            try await create(contact, listing: listing, report: &report)
        }
        return report
    }

    func delete(_ row: AddressBookCard, onServer: (url: URL, etag: String)?, report: inout AddressBookSyncReport) async throws(AddressBookError) {
        guard let onServer else {
            try store { try database.forgetAddressBookCard(book: account.url, contactID: row.contactID) }
            return
        }
        let answer = try await client.request("DELETE", onServer.url, headers: onServer.etag.isEmpty ? [] : [("If-Match", onServer.etag)])
        switch answer.status {
        case 200..<300, 404, 410:
            try store { try database.forgetAddressBookCard(book: account.url, contactID: row.contactID) }
            report.deleted += 1
        case 403: throw readOnly()
        default:
            report.failed.append("a deleted contact's card (\(answer.status) on DELETE; will retry)")
        }
    }

    func readOnly() -> AddressBookError {
        AddressBookError(
            .readOnly,
            Phrase(
                "%1$@: user \"%2$@\" may not write to this address book (403); give the account write access on the server, or add another address book",
                account.url, account.username))
    }

    /// The server's copy of a card: text and ETag; nil when it is gone.
    func fetch(_ url: URL, name: String) async throws(AddressBookError) -> (text: String, etag: String?)? {
        let answer = try await client.request("GET", url, limit: CardDAVClient.maximumCard)
        if answer.status == 404 || answer.status == 410 { return nil }
        guard answer.status == 200 else {
            throw AddressBookError(.server, Phrase("%1$@: GET %2$@ (%3$@'s card) answered %4$@", account.url, url.path, name, String(answer.status)))
        }
        return (answer.text, answer.etag)
    }

    func update(_ row: AddressBookCard, contact: Contact, serverETag: String?, report: inout AddressBookSyncReport) async throws(AddressBookError) {
        let ours = VCard.addressBookCard(contact, uid: row.uid)
        let serverChanged = serverETag != nil && serverETag != "" && serverETag != row.etag
        let oursChanged = VCard.ownedPart(ours) != VCard.ownedPart(row.written ?? "")
        guard serverChanged || oursChanged, let url = URL(string: row.href) else {
            report.unchanged += 1
            return
        }
        guard let theirs = try await fetch(url, name: contact.name) else {
            try store { try database.saveAddressBookCard(row.with(state: .goneOnServer)) }
            report.goneOnServer.append(contact.name)
            return
        }
        guard let merged = VCard.merge(base: row.written, ours: ours, theirs: theirs.text) else {
            report.failed.append("\(contact.name): the server's copy is not a vCard (left as it is)")
            return
        }
        var etag = theirs.etag ?? serverETag
        var updated = row.with(
            etag: etag, written: ours, serverNote: VCard.value(of: "NOTE", in: theirs.text),
            serverNickname: VCard.value(of: "NICKNAME", in: theirs.text),
            conflict: merged.conflicts.isEmpty ? (oursChanged ? nil : row.conflict) : merged.conflicts.joined(separator: ", "))
        if updated.serverNote != row.serverNote || updated.serverNickname != row.serverNickname { report.editsSeen += 1 }
        if !merged.conflicts.isEmpty { report.conflicts.append("\(contact.name) (\(merged.conflicts.joined(separator: ", ")))") }
        if VCard.ownedPart(merged.text) != VCard.ownedPart(theirs.text) {
            let answer = try await client.request(
                "PUT", url, headers: [("Content-Type", "text/vcard; charset=utf-8")] + (etag.map { [("If-Match", $0)] } ?? []), body: merged.text)
            switch answer.status {
            case 200..<300:
                etag = answer.etag
                updated = updated.with(etag: etag)
                report.updated += 1
            case 403: throw readOnly()
            case 412:
                report.failed.append("\(contact.name): the card changed on the server during the sync (will retry)")
                return
            default:
                report.failed.append("\(contact.name): PUT answered \(answer.status) (will retry)")
                return
            }
        } else {
            report.unchanged += 1
        }
        try store { try database.saveAddressBookCard(updated) }
    }

    func create(_ contact: Contact, listing: [String: (url: URL, etag: String)], report: inout AddressBookSyncReport) async throws(AddressBookError) {
        let uid = AddressBookSync.uid(contactID: contact.id)
        guard let url = URL(string: uid + ".vcf", relativeTo: collection)?.absoluteURL else { return }
        let ours = VCard.addressBookCard(contact, uid: uid)
        let answer = try await client.request(
            "PUT", url, headers: [("Content-Type", "text/vcard; charset=utf-8"), ("If-None-Match", "*")], body: ours)
        switch answer.status {
        case 200..<300:
            try store {
                try database.saveAddressBookCard(
                    AddressBookCard(
                        book: account.url, contactID: contact.id, uid: uid, href: url.absoluteString, etag: answer.etag, written: ours, state: .synced))
            }
            report.created += 1
        case 403: throw readOnly()
        case 412:
            // Written already (by another sync of the same account, or a row lost): take it as ours and merge.
            let row = AddressBookCard(
                book: account.url, contactID: contact.id, uid: uid, href: url.absoluteString, etag: nil, written: nil, state: .synced)
            try await update(row, contact: contact, serverETag: listing[CardDAVClient.key(url)]?.etag ?? "-", report: &report)
        default:
            report.failed.append("\(contact.name): PUT answered \(answer.status) (will retry)")
        }
    }
}

extension AddressBookCard {
    func with(
        state: State? = nil, etag: String?? = nil, written: String?? = nil, serverNote: String?? = nil, serverNickname: String?? = nil,
        conflict: String?? = nil
    ) -> AddressBookCard {
        AddressBookCard(
            book: book, contactID: contactID, uid: uid, href: href, etag: etag ?? self.etag, written: written ?? self.written, state: state ?? self.state,
            serverNote: serverNote ?? self.serverNote, serverNickname: serverNickname ?? self.serverNickname, conflict: conflict ?? self.conflict,
            lastError: nil)
    }
}

extension AddressBookSyncReport {
    /// `{"created", "updated", "deleted", "unchanged", "editsSeen", "goneOnServer", "mirroredDeletes", "conflicts", "failed"}`
    /// (`addressbook sync --json`, the web app).
    /// The report `json` wrote (a running node's answer to `addressbook sync`); nil for another shape.
    public init?(json: JSONValue) {
        func count(_ key: String) -> Int? { json[key]?.integerValue.map(Int.init) }
        func list(_ key: String) -> [String]? { json[key]?.arrayValue?.compactMap(\.stringValue) }
        guard let created = count("created"), let updated = count("updated"), let deleted = count("deleted"), let unchanged = count("unchanged"),
            let editsSeen = count("editsSeen"), let gone = list("goneOnServer"), let mirrored = list("mirroredDeletes"), let conflicts = list("conflicts"),
            let failed = list("failed")
        else { return nil }
        self.created = created
        self.updated = updated
        self.deleted = deleted
        self.unchanged = unchanged
        self.editsSeen = editsSeen
        self.goneOnServer = gone
        self.mirroredDeletes = mirrored
        self.conflicts = conflicts
        self.failed = failed
    }

    public var json: JSONValue {
        .object([
            "created": .number(Double(created)), "updated": .number(Double(updated)), "deleted": .number(Double(deleted)),
            "unchanged": .number(Double(unchanged)), "editsSeen": .number(Double(editsSeen)),
            "goneOnServer": .array(goneOnServer.map { .string($0) }), "mirroredDeletes": .array(mirroredDeletes.map { .string($0) }),
            "conflicts": .array(conflicts.map { .string($0) }), "failed": .array(failed.map { .string($0) }),
        ])
    }
}

extension AddressBookSync {
    /// Where an account's password is read from, for people: "file PATH", "systemd credential NAME".
    public static func passwordSource(_ credential: String) -> String {
        if credential.hasPrefix("file:") { return "file \(credential.dropFirst(5))" }
        if credential.hasPrefix("credential:") { return "systemd credential \(credential.dropFirst(11))" }
        if credential.hasPrefix("secret-service:") { return "the Secret Service" }
        return credential
    }

    /// An account and what waits for it (`addressbook status --json`, the web app): never the password.
    public static func json(_ a: AddressBookAccount, pending p: AddressBookPending, notices: [AddressBookNotice] = []) -> JSONValue {
        var o: JSONObject = [
            "url": .string(a.url), "user": .string(a.username), "password": .string(passwordSource(a.credential)),
            "includeQR": .bool(a.includeQR), "toWrite": .number(Double(p.toWrite)), "toDelete": .number(Double(p.toDelete)),
            "synced": .number(Double(p.synced)), "goneOnServer": .number(Double(p.goneOnServer)), "conflicts": .number(Double(p.conflicts)),
            "lastSync": a.lastSyncAt.map { .string(ISO8601.string($0)) } ?? .null, "lastError": a.lastError.map { .string($0) } ?? .null,
        ]
        if a.lastError != nil { o["nextAttempt"] = .string(ISO8601.string(a.nextAttemptAt)) }
        // The cards deleted there (contacts kept here) and changed on both sides (the address book's kept).
        o["notices"] = .array(
            notices.map { n in
                switch n.kind {
                case .goneOnServer: ["name": .string(n.name), "contact": .string(n.contactID), "kind": "goneOnServer"]
                case .conflict(let fields): ["name": .string(n.name), "contact": .string(n.contactID), "kind": "conflict", "fields": .string(fields)]
                }
            })
        return .object(o)
    }
}
