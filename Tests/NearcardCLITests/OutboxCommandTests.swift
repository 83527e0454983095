import Foundation
import NearcardCrypto
import NearcardTestSupport
import Testing

/// `nearcard outbox`: what the person sees of messages sent. Delivering one needs two nodes (that is
/// NearcardLANTests/MessagingTests); here a delivered message is written into the store as the
/// store leaves it (`markDelivered`: metadata kept, text and envelope emptied).
@Suite struct OutboxCommandTests {
    @Test func deliveredMessagesAreListedWithoutTheirText() throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        #expect(try cli.run(["init", "--name", "Ada"]).code == 0)
        #expect(try cli.run(["contacts", "add", "--name", "Grace Hopper"]).code == 0)
        let db = cli.home.appendingPathComponent("nearcard.sqlite").path
        let sql = """
            UPDATE contact SET did = 'did:key:zGrace';
            INSERT INTO outboxMessage (id, contactID, contactDID, text, envelopeJSON, createdAt, state, attempts, nextAttemptAt, deliveredAt)
                SELECT 'QUFBQUFBQUFBQUFBQUFBQQ', id, 'did:key:zGrace', '', '', 1800000000, 'delivered', 1, 1800000000, 1800000005 FROM contact;
            """
        let written = try CLI.run(executable: "/usr/bin/sqlite3", [db, sql])
        #expect(written.code == 0, "\(written.stderr)")

        let human = try cli.run(["outbox", "--all"])
        #expect(human.code == 0, "\(human.stderr)")
        let line = try #require(human.stdout.split(separator: "\n").first { $0.hasPrefix("delivered") }, "\(human.stdout)")
        #expect(line.contains("Grace Hopper") && line.contains("delivered 2027-01-15T08:00:05Z") && line.hasSuffix("(text removed after delivery)"), "\(line)")

        let entry = try #require(try cli.run(["outbox", "--all", "--json"]).json.arrayValue?.first?.objectValue)
        #expect(entry["text"] == .null && entry.keys.contains("text"), "the member stays, null")
        #expect(entry["state"] == "delivered" && entry["contact"] == "Grace Hopper" && entry["deliveredAt"] == "2027-01-15T08:00:05Z")
        #expect(try cli.run(["outbox"]).stdout.contains("Nothing waiting"), "delivered ones are not listed without --all")
    }
}
