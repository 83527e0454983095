import Foundation
import NearcardTestSupport
import Testing

/// Commands that only read the book write nothing to it: not a byte of the database changes, and a
/// book its owner made read-only can still be listed (docs/PERFORMANCE.md "Commands": the fdatasyncs
/// a reading command used to make as it opened and closed the book).
@Suite struct ReadingTests {
    @Test func listingTheBookWritesNothing() throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        #expect(try cli.run(["init", "--name", "Ada Lovelace"]).code == 0)
        #expect(try cli.run(["contacts", "add", "--name", "Grace Hopper", "--email", "grace@example.org"]).code == 0)
        let db = cli.home.appendingPathComponent("nearcard.sqlite").path
        // A listing once, so the book is at rest as reading commands leave it.
        #expect(try cli.run(["contacts"]).code == 0)
        // The commands that wrote left their commits in the WAL (synced, not yet checkpointed:
        // docs/PERFORMANCE.md "Commands"); a listing reads them there and changes neither file.
        let before = (sha(db), sha(db + "-wal"))
        for args in [["contacts"], ["contacts", "--json"], ["contacts", "show", "Grace Hopper"], ["addressbook", "status"]] {
            let r = try cli.run(args)
            #expect(r.code == 0, "\(args): \(r.stderr)")
        }
        #expect(sha(db) == before.0, "a listing changed the database file")
        #expect(sha(db + "-wal") == before.1, "a listing changed the WAL")

        // Made read-only by its owner: still listed; a change is refused, saying why.
        chmod(db, 0o400)
        defer { chmod(db, 0o600) }
        let listed = try cli.run(["contacts", "--json"])
        #expect(listed.code == 0 && listed.stdout.contains("Grace Hopper"), "\(listed.stderr)")
        let added = try cli.run(["contacts", "add", "--name", "Alan Turing"])
        #expect(added.code == 5 && added.stderr.contains("not writable"), "\(added.stderr)")
    }
}
