import Foundation
import Hummingbird
import NearcardCrypto
import NearcardNode

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
                return Self.json(["error": "Give the server's address, e.g. https://dav.example.org/", "field": "url"], status: .badRequest)
            }
            guard let user = body["user"]?.stringValue?.trimmingCharacters(in: .whitespaces), !user.isEmpty else {
                return Self.json(["error": "Give the account's user name.", "field": "user"], status: .badRequest)
            }
            guard let password = body["password"]?.stringValue, !password.isEmpty, password.utf8.count <= Self.maximumPassword,
                !password.contains(where: \.isNewline)
            else {
                return Self.json(
                    ["error": .string("Give the account's password (one line, at most \(Self.maximumPassword) bytes)."), "field": "password"],
                    status: .badRequest)
            }
            guard let directory = self.options.secretsDirectory else {
                return Self.error(
                    .badRequest,
                    Phrase("This node keeps no files, so it cannot keep a password typed here; its operator adds address books from the command line."))
            }
            let file = NearcardApp.addressBookPasswordFile(home: directory, url: url, user: user)
            do throws(NodeError) { try NearcardApp.keepSecret(password, at: file) } catch { return Self.error(.internalServerError, error.phrase) }
            switch await self.app.addAddressBook(serverURL: url, username: user, credential: "file:" + file) {
            case .success(let added):
                return Self.json(["url": .string(added.url), "sync": added.report])
            case .failure(let refusal):
                // Not kept (refused for good): its password file goes too.
                if (try? self.app.addressBooks().contains { $0["password"]?.stringValue == "file " + file }) != true { unlink(file) }
                // Said beside the form, in its terms, naming the field to correct.
                return Self.json(
                    ["error": .string(refusal.formMessage), "field": refusal.field.map { .string($0.rawValue) } ?? .null], status: .badRequest)
            }
        }
        router.post("/api/addressbooks/sync") { _, _ in
            // The node's syncs run one at a time: this one waits for a pass of its worker, never beside it.
            let books = try await self.runtime.syncAddressBooks(url: nil, mirrorDeletes: false)
            return Self.json(
                .array(
                    books.map { b in
                        if let report = b.report { return ["url": .string(b.url), "sync": report] }
                        return ["url": .string(b.url), "error": .string(b.message ?? "the sync failed")]
                    }))
        }
        router.post("/api/addressbooks/remove") { request, _ in
            let body = try await Self.body(request)
            guard let url = body["url"]?.stringValue, let credential = try await self.app.removeAddressBook(url: url) else {
                return Self.error(.notFound, Phrase("no such address book"))
            }
            // A password file this page made goes with its account.
            if let directory = self.options.secretsDirectory, let file = NearcardApp.keptPasswordFile(credential: credential, home: directory) {
                unlink(file)
            }
            return Self.json(["ok": true])
        }
    }

    func addressBookStates() throws -> [JSONValue] { try app.addressBooks() }
}
