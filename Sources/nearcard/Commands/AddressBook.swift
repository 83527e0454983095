import ArgumentParser
import Foundation
import NearcardAddressBook
import NearcardCrypto
import NearcardModel
import NearcardNode
import Synchronization

/// `nearcard addressbook …`: the contacts in a CardDAV address book (docs/ADDRESSBOOK.md).
struct AddressBookCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "addressbook",
        abstract: t("Keep your contacts in a CardDAV address book (Nextcloud, Fastmail, Radicale, GNOME/Evolution, Thunderbird)."),
        discussion:
            t(
                "Each contact met in person is written there as a vCard 4.0 with only what its owner disclosed, their DID and how it was verified. A running listen, ui or bot writes each new contact within seconds and retries while the server is down. Notes and nicknames you add in the address book stay there: contacts show shows them, nobody is sent them."
            ),
        subcommands: [Add.self, Remove.self, Sync.self, Status.self],
        defaultSubcommand: Status.self)

    /// The one account a reference names: its collection URL, the URL it was added with, or (one account) nothing.
    static func account(_ reference: String?, in db: Book) throws -> AddressBookAccount {
        let accounts = try db.addressBooks()
        guard !accounts.isEmpty else {
            throw CLIError(.notFound, t("no address book yet; add one: nearcard addressbook add URL --user NAME --password-file FILE"))
        }
        guard let reference else {
            if accounts.count == 1 { return accounts[0] }
            throw CLIError(
                .malformedInput,
                t.plural(
                    "there are %1$@ address books; name one: %2$@", "there are %1$@ address books; name one: %2$@", count: accounts.count,
                    String(accounts.count), accounts.map(\.url).joined(separator: ", ")))
        }
        let trimmed = reference.hasSuffix("/") ? String(reference.dropLast()) : reference
        let found = accounts.filter { a in [a.url, a.serverURL].contains { $0 == reference || $0.hasSuffix("/") && String($0.dropLast()) == trimmed } }
        guard let one = found.first else {
            throw CLIError(.malformedInput, t("no address book %1$@; these are: %2$@", reference, accounts.map(\.url).joined(separator: ", ")))
        }
        return one
    }

    /// Runs a sync (which records itself on the account), as a result to report.
    static func sync(_ account: AddressBookAccount, db: Book, mirrorDeletes: Bool) async -> Result<AddressBookSyncReport, AddressBookError> {
        await db.sync(account, mirrorDeletes: mirrorDeletes)
    }

    /// Syncs one account: by the node running on this home when there is one (never two syncs of one
    /// account at once: the node's own passes wait), else here.
    static func sync(
        _ account: AddressBookAccount, db: Book, mirrorDeletes: Bool, global: GlobalOptions
    ) async throws -> Result<AddressBookSyncReport, AddressBookError> {
        guard let node = RunningNode.link(global) else { return await sync(account, db: db, mirrorDeletes: mirrorDeletes) }
        let reply = try await RunningNode.call(node, ["cmd": "addressbook.sync", "url": .string(account.url), "mirrorDeletes": .bool(mirrorDeletes)])
        try RunningNode.check(reply)
        guard let book = reply["books"]?.arrayValue?.first(where: { $0["url"]?.stringValue == account.url }) else {
            return .failure(AddressBookError(.store, "\(account.url) was removed while the running node synced"))
        }
        if let report = book["report"].flatMap(AddressBookSyncReport.init(json:)) { return .success(report) }
        let kind = book["error"]?["kind"]?.stringValue.flatMap(AddressBookErrorKind.init(rawValue:)) ?? .server
        return .failure(AddressBookError(kind, book["error"]?["message"]?.stringValue ?? "the running node did not say why the sync failed"))
    }

    /// A failed sync's line with what becomes of the contacts: a kept account whose server may answer
    /// later keeps them waiting for the next sync; any other failure needs the person first.
    static func waiting(_ error: AddressBookError) -> AddressBookError {
        guard error.kind.passes else { return error }
        return AddressBookError(error.kind, Phrase("%1$@; the contacts wait in the book and go with the next sync", error.phrase))
    }

    /// How long `exchange` waits for the address books after a new contact before it leaves the rest
    /// to the next sync (a running node's, or `addressbook sync`).
    static let exchangeSyncBudget: Double = 5

    /// After an exchange: writes the new contact to each address book, within `exchangeSyncBudget`
    /// seconds; what does not get there stays pending (`addressbook status`) and goes with the next sync.
    static func afterExchange(_ db: Book, quiet: Bool) async {
        guard let accounts = try? db.addressBooks(), !accounts.isEmpty else { return }
        for account in accounts {
            // Whichever comes first: the sync, or the budget. A sync still running then is left to end with
            // the process (what it did not write stays pending): the exchange does not wait on a silent server.
            let outcome: Result<AddressBookSyncReport, AddressBookError>? = await withCheckedContinuation { continuation in
                let answered = Mutex(false)
                let answer: @Sendable (Result<AddressBookSyncReport, AddressBookError>?) -> Void = { result in
                    let first = answered.withLock { done in
                        defer { done = true }
                        return !done
                    }
                    if first { continuation.resume(returning: result) }
                }
                Task { answer(await sync(account, db: db, mirrorDeletes: false)) }
                Task {
                    try? await Task.sleep(nanoseconds: UInt64(exchangeSyncBudget * 1e9))
                    answer(nil)
                }
            }
            guard !quiet else { continue }
            let host = URL(string: account.url)?.host ?? account.url
            switch outcome {
            case .success(let r)?: if r.created + r.updated > 0 { Console.out(t("Saved to your address book at %1$@.", host)) }
            case .failure(let e)?: Console.err("nearcard: " + t("not yet in your address book (it goes with the next sync): %1$@", t.say(e.phrase)))
            case nil:
                Console.err("nearcard: " + t("%1$@ did not answer within %2$@ s; the contact goes with the next sync", host, String(Int(exchangeSyncBudget))))
            }
        }
        // A conflict or deletion the person has not heard of yet (this sync's, or a running node's): said here, once.
        guard !quiet, let notices = try? db.addressBookNotices(unsaid: true), !notices.isEmpty else { return }
        for line in noticeLines(notices) { Console.out(t("Address book: %1$@", line)) }
        try? db.addressBookNoticesSaid(notices)
    }

    /// The lines for what the person has not been told yet (`notices`): cards deleted in the address
    /// book, cards changed on both sides.
    static func noticeLines(_ notices: [AddressBookNotice]) -> [String] {
        var lines: [String] = []
        let gone = notices.filter { $0.kind == .goneOnServer }.map(\.name)
        if !gone.isEmpty {
            lines.append(
                t("deleted in the address book, kept here: %1$@ (addressbook sync --mirror-deletes deletes them here too)", gone.joined(separator: ", ")))
        }
        let both = notices.compactMap { n -> String? in
            if case .conflict(let fields) = n.kind { return "\(n.name) (\(fields))" }
            return nil
        }
        if !both.isEmpty {
            lines.append(
                t("changed on both sides, the address book's edit kept: %1$@ — see nearcard contacts show NAME", both.joined(separator: "; ")))
        }
        return lines
    }

    /// One sync's lines. Deletions and conflicts are said from `notices` — what the person has not heard
    /// yet, from this pass or a running node's earlier one — so each is said once, not at every pass.
    static func summary(_ r: AddressBookSyncReport, notices: [AddressBookNotice]) -> [String] {
        var parts: [String] = []
        if r.created > 0 { parts.append(t("%1$@ added", String(r.created))) }
        if r.updated > 0 { parts.append(t("%1$@ updated", String(r.updated))) }
        if r.deleted > 0 { parts.append(t("%1$@ deleted", String(r.deleted))) }
        if r.editsSeen > 0 {
            parts.append(t("%1$@ edited in the address book", String(r.editsSeen)))
        }
        var lines = [parts.isEmpty ? t("nothing to change (%1$@ up to date)", String(r.unchanged)) : parts.joined(separator: ", ")]
        lines += noticeLines(notices)
        if !r.mirroredDeletes.isEmpty { lines.append(t("deleted here as in the address book: %1$@", r.mirroredDeletes.joined(separator: ", "))) }
        for f in r.failed { lines.append(t("not synced: %1$@", f)) }
        return lines
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add",
            abstract: t("Add a CardDAV address book (a server's root, or the address book's own URL) and sync it."),
            usage: "nearcard addressbook add https://dav.example.org/ --user alice --password-file ~/.config/dav-password",
            discussion:
                t(
                    "The password is never an argument and never in the book: give a file only you can read (chmod 600), the name of a systemd credential ($CREDENTIALS_DIRECTORY), or --secret-service to keep it in the desktop's keyring. The server's certificate must be one this system trusts."
                )
        )
        @OptionGroup var global: GlobalOptions
        @Argument(help: ArgumentHelp(t("The server (https://…; its /.well-known/carddav is followed) or the address book's URL."))) var url: String
        @Option(help: ArgumentHelp(t("The account's user name."))) var user: String
        @Option(help: ArgumentHelp(t("A file holding the password (mode 0600; a final newline is ignored).")), completion: .file()) var passwordFile: String?
        @Option(help: ArgumentHelp(t("The name of a systemd credential holding the password (read from $CREDENTIALS_DIRECTORY)."))) var credential: String?
        @Flag(
            help: ArgumentHelp(
                t("Keep the password in the desktop's Secret Service (GNOME Keyring, KWallet): asked for on the terminal, or read from standard input.")))
        var secretService = false
        @Flag(help: ArgumentHelp(t("Also sync contacts from scanned QR codes (contacts met in person always are)."))) var includeQr = false
        @Flag(help: ArgumentHelp(t("Only add the account; sync later."))) var noSync = false
        @Flag(help: ArgumentHelp(t("Print the account and the first sync as JSON."))) var json = false

        func validate() throws {
            if [passwordFile != nil, credential != nil, secretService].filter({ $0 }).count != 1 {
                throw ValidationError(t("give the password as --password-file FILE, --credential NAME or --secret-service (one of them)"))
            }
        }

        func run() async throws {
            let source: String
            if let passwordFile {
                let path = URL(fileURLWithPath: (passwordFile as NSString).expandingTildeInPath).standardizedFileURL.path
                source = "file:" + path
            } else if let credential {
                source = "credential:" + credential
            } else {
                // Read once (a prompt without echo, or a pipe), handed to secret-tool through a pipe.
                let typed: SecureBytes
                if isatty(STDIN_FILENO) != 0 {
                    guard let p = Passphrase.prompt(t("Password of %1$@ at %2$@: ", user, url)) else {
                        throw CLIError(.malformedInput, t("no terminal to ask for the password on"))
                    }
                    typed = p
                } else {
                    let line = readLine(strippingNewline: true) ?? ""
                    typed = SecureBytes(Array(line.utf8))
                }
                guard typed.count > 0 else { throw CLIError(.malformedInput, t("the password is empty")) }
                try typed.withUnsafeBytes { bytes throws(AddressBookError) in
                    try SecretService.store(password: Array(bytes), server: url, user: user)
                }
                source = SecretService.credential(server: url, user: user)
            }
            let db = try global.database()
            let collection: String
            do {
                collection = try await db.connectAddressBook(serverURL: url, username: user, credential: source)
            } catch {
                // Nothing is kept, so nothing is tried again: the line says so.
                if secretService { SecretService.clear(source) }
                throw AddressBookError(error.kind, t("%1$@; nothing was added", t.say(error.phrase)))
            }
            let existed = try db.addressBooks().contains { $0.url == collection }
            let account = AddressBookAccount(url: collection, serverURL: url, username: user, credential: source, includeQR: includeQr)
            try db.saveAddressBook(account)
            var doc: JSONObject = ["url": .string(collection), "user": .string(user), "password": .string(AddressBookSync.passwordSource(source))]
            let added = t("Added the address book %1$@ (user %2$@).", collection, user)
            if noSync {
                if json { Console.json(.object(doc)) } else { Console.out(added) }
                return
            }
            switch try await AddressBookCommand.sync(account, db: db, mirrorDeletes: false, global: global) {
            case .success(let report):
                if json {
                    doc["sync"] = report.json
                    Console.json(.object(doc))
                } else {
                    Console.out(added)
                    let notices = (try? db.addressBookNotices(book: account.url, unsaid: true)) ?? []
                    for line in AddressBookCommand.summary(report, notices: notices) { Console.out(t("Synced: %1$@", line)) }
                    try? db.addressBookNoticesSaid(notices)
                }
            case .failure(let error):
                // A server that refuses this account for good is not kept; one that is down, failing or
                // full is (its contacts go with the next sync), and the line says which.
                if existed { throw AddressBookError(error.kind, t("%1$@; the address book was already added and stays", t.say(error.phrase))) }
                if error.kind.passes {
                    throw AddressBookError(
                        error.kind, t("%1$@; the address book is added and its contacts go with the next sync (nearcard addressbook sync)", t.say(error.phrase))
                    )
                }
                try db.removeAddressBook(url: collection)
                if secretService { SecretService.clear(source) }
                throw AddressBookError(error.kind, t("%1$@; nothing was added", t.say(error.phrase)))
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "remove",
            abstract: t("Stop syncing to an address book (the cards already there stay there)."))
        @OptionGroup var global: GlobalOptions
        @Argument(help: ArgumentHelp(t("The address book's URL (as `addressbook status` shows it, or as it was added)."))) var url: String

        func run() async throws {
            let db = try global.existingDatabase()
            let account = try AddressBookCommand.account(url, in: db)
            try db.removeAddressBook(url: account.url)
            // A running node's pass in flight on it ends before this returns; none starts after.
            try await RunningNode.changed(global, ["addressbooks"])
            // A password Nearcard kept goes with the account: in the Secret Service, or in the file the web
            // app made for it in the home (a file the person gave with --password-file is theirs and stays).
            if account.credential.hasPrefix("secret-service:") { SecretService.clear(account.credential) }
            if let file = NearcardApp.keptPasswordFile(credential: account.credential, home: global.homePath) { unlink(file) }
            Console.out(t("Removed %1$@; the cards already written there stay until you delete them there.", account.url))
        }
    }

    struct Sync: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "sync",
            abstract: t("Sync now: write new and changed contacts, delete deleted ones, read your edits made in the address book."))
        @OptionGroup var global: GlobalOptions
        @Argument(help: ArgumentHelp(t("One address book (default: all)."))) var url: String?
        @Flag(help: ArgumentHelp(t("Also delete here the contacts whose card you deleted in the address book."))) var mirrorDeletes = false
        @Flag(help: ArgumentHelp(t("Print one JSON object per address book."))) var json = false

        func run() async throws {
            let db = try global.existingDatabase()
            let accounts = url == nil ? try db.addressBooks() : [try AddressBookCommand.account(url, in: db)]
            if accounts.isEmpty {
                throw CLIError(.notFound, t("no address book yet; add one: nearcard addressbook add URL --user NAME --password-file FILE"))
            }
            var docs: [JSONValue] = []
            var firstError: AddressBookError?
            for account in accounts {
                switch try await AddressBookCommand.sync(account, db: db, mirrorDeletes: mirrorDeletes, global: global) {
                case .success(let report):
                    if json {
                        var o = report.json.objectValue ?? [:]
                        o["url"] = .string(account.url)
                        docs.append(.object(o))
                    } else {
                        // What the person has not heard yet (this pass's, or a running node's earlier one), said once.
                        let notices = (try? db.addressBookNotices(book: account.url, unsaid: true)) ?? []
                        for line in AddressBookCommand.summary(report, notices: notices) { Console.out("\(account.url): \(line)") }
                        try? db.addressBookNoticesSaid(notices)
                    }
                case .failure(let failure):
                    let error = AddressBookCommand.waiting(failure)
                    firstError = firstError ?? error
                    if json { docs.append(.object(["url": .string(account.url), "error": .string(error.message)])) }
                    if accounts.count > 1 || json { Console.err("nearcard: " + t.say(error.phrase)) }
                }
            }
            if json { Console.json(.array(docs)) }
            if let firstError {
                if accounts.count > 1 || json { throw ExitCode(classify(firstError).0.rawValue) }
                throw firstError
            }
        }
    }

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "status", abstract: t("Show each address book: when it last synced, what is waiting, what failed."))
        @OptionGroup var global: GlobalOptions
        @Flag(help: ArgumentHelp(t("Print the address books as a JSON array."))) var json = false

        func run() async throws {
            let db = try global.readingDatabase()
            let accounts = try db.addressBooks()
            var docs: [JSONValue] = []
            if accounts.isEmpty && !json {
                Console.out(t("No address book. Add one: nearcard addressbook add https://dav.example.org/ --user NAME --password-file FILE"))
                return
            }
            for (i, a) in accounts.enumerated() {
                let p = try db.pending(a)
                if json {
                    docs.append(AddressBookSync.json(a, pending: p, notices: try db.addressBookNotices(book: a.url, unsaid: false)))
                    continue
                }
                if i > 0 { Console.out("") }
                var rows: [(String, String)] = [
                    (t("Address book"), a.url), (t("User"), a.username), (t("Password"), AddressBookSync.passwordSource(a.credential)),
                ]
                rows.append((t("Contacts"), a.includeQR ? t("met in person and from QR codes") : t("met in person")))
                rows.append((t("Last sync"), a.lastSyncAt.map(ISO8601.string) ?? t("never")))
                let waiting = p.toWrite + p.toDelete
                rows.append(
                    (
                        t("Pending"),
                        waiting == 0
                            ? t("nothing (%1$@ in sync)", String(p.synced))
                            : t("%1$@ to write, %2$@ to delete (%3$@ in sync)", String(p.toWrite), String(p.toDelete), String(p.synced))
                    ))
                if p.goneOnServer > 0 {
                    rows.append((t("Deleted there"), t("%1$@ (kept here; addressbook sync --mirror-deletes deletes them)", String(p.goneOnServer))))
                }
                if p.conflicts > 0 {
                    rows.append(
                        (
                            t("Conflicts"),
                            t.plural(
                                "%1$@ contact(s) keep the address book's own edit (contacts show)",
                                "%1$@ contact(s) keep the address book's own edit (contacts show)", count: p.conflicts, String(p.conflicts))
                        ))
                }
                if let e = a.lastError { rows.append((t("Last error"), t("%1$@ — next try %2$@ by a running node", e, ISO8601.string(a.nextAttemptAt)))) }
                Console.table(rows)
            }
            if json { Console.json(.array(docs)) }
        }
    }
}
