import Foundation
import Hummingbird
import NearcardAddressBook
import NearcardCrypto
import NearcardNode
import NearcardStore

/// The Contacts page's "Address book" (docs/ADDRESSBOOK.md): the accounts and what waits for them, adding
/// one, syncing now, removing one. A password typed here is kept in a 0600 file in the home (the book
/// keeps only its path), never in the database, never in an answer.
extension WebUI {
    /// The longest password accepted from the page.
    static let maximumPassword = 4096

    func addressBookRoutes(_ router: Router<BasicRequestContext>) {
        router.get("/api/addressbooks") { _, _ in Self.json(.array(try self.addressBookStates())) }
        router.post("/api/addressbooks") { request, _ in
            let body = try await Self.body(request)
            guard let url = body["url"]?.stringValue?.trimmingCharacters(in: .whitespaces), !url.isEmpty else {
                return Self.error(.badRequest, "give the server's address (\"url\"), e.g. https://dav.example.org/")
            }
            guard let user = body["user"]?.stringValue?.trimmingCharacters(in: .whitespaces), !user.isEmpty else {
                return Self.error(.badRequest, "give the account's user name (\"user\")")
            }
            guard let password = body["password"]?.stringValue, !password.isEmpty, password.utf8.count <= Self.maximumPassword,
                !password.contains(where: \.isNewline)
            else { return Self.error(.badRequest, "give the account's password (one line, at most \(Self.maximumPassword) bytes)") }
            guard let directory = self.options.secretsDirectory else {
                return Self.error(
                    .badRequest, "this node keeps no files; add the address book with: nearcard addressbook add URL --user NAME --password-file FILE")
            }
            let db = self.runtime.context.database
            let file = directory + "/addressbook-" + Hex.encode(SHA256.hash(Array("\(url)\u{0}\(user)".utf8)).prefix(8).map { $0 }) + ".password"
            let credential = "file:" + file
            do throws(StoreError) {
                try FileIO.writeAtomically(SecureBytes(Array(password.utf8)), to: file, mode: 0o600, replace: true)
            } catch {
                return Self.error(.internalServerError, error.message)
            }
            let collection: String
            do throws(AddressBookError) {
                collection = try await AddressBookSync.connect(serverURL: url, username: user, credential: credential)
            } catch {
                unlink(file)
                return Self.error(.badRequest, error.message)
            }
            let existed = try db.addressBooks().contains { $0.url == collection }
            let account = AddressBookAccount(url: collection, serverURL: url, username: user, credential: credential, includeQR: false)
            try db.saveAddressBook(account)
            let outcome: Result<AddressBookSyncReport, AddressBookError>
            do throws(AddressBookError) { outcome = .success(try await AddressBookSync.sync(account, database: db)) } catch { outcome = .failure(error) }
            switch outcome {
            case .success(let report):
                return Self.json(["url": .string(collection), "sync": report.json])
            case .failure(let error):
                // Refused for good (not merely down): not kept.
                if error.kind != .unreachable && !existed {
                    try db.removeAddressBook(url: collection)
                    unlink(file)
                }
                return Self.error(.badRequest, error.message)
            }
        }
        router.post("/api/addressbooks/sync") { _, _ in
            let db = self.runtime.context.database
            var results: [JSONValue] = []
            for account in try db.addressBooks() {
                do throws(AddressBookError) {
                    let report = try await AddressBookSync.sync(account, database: db)
                    results.append(["url": .string(account.url), "sync": report.json])
                } catch {
                    results.append(["url": .string(account.url), "error": .string(error.message)])
                }
            }
            return Self.json(.array(results))
        }
        router.post("/api/addressbooks/remove") { request, _ in
            let body = try await Self.body(request)
            let db = self.runtime.context.database
            guard let url = body["url"]?.stringValue, let account = try db.addressBooks().first(where: { $0.url == url }) else {
                return Self.error(.notFound, "no such address book")
            }
            try db.removeAddressBook(url: account.url)
            // A password file this page made goes with its account.
            if let directory = self.options.secretsDirectory, account.credential.hasPrefix("file:" + directory + "/addressbook-") {
                unlink(String(account.credential.dropFirst(5)))
            }
            return Self.json(["ok": true])
        }
    }

    func addressBookStates() throws -> [JSONValue] {
        let db = runtime.context.database
        return try db.addressBooks().map { a in AddressBookSync.json(a, pending: try AddressBookSync.pending(a, database: db)) }
    }
}
