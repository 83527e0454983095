import Foundation
import Hummingbird
import NearcardCrypto
import NearcardNode

/// The "Messages" page's API: what contacts wrote, what you sent and how it stands, and writing one.
extension WebUI {
    func messageRoutes(_ router: Router<BasicRequestContext>) {
        router.get("/api/messages") { _, _ in
            let (inbox, outbox) = try self.app.messages()
            return Self.json(["inbox": .array(inbox), "outbox": .array(outbox)])
        }
        router.post("/api/outbox/retry") { _, _ in
            // Every queued message, tried now (the contacts looked for on the LAN for a few seconds).
            let (tried, delivered) = await self.app.retryOutbox(wait: 3)
            return Self.json(["tried": .number(Double(tried)), "delivered": .number(Double(delivered))])
        }
        router.post("/api/messages") { request, _ in
            let body = try await Self.body(request)
            guard let contact = body["contact"]?.stringValue, !contact.isEmpty else {
                return Self.error(.badRequest, Phrase("say to whom (\"contact\": its id)"))
            }
            guard let text = body["text"]?.stringValue, !text.isEmpty else { return Self.error(.badRequest, Phrase("the message is empty")) }
            do throws(NodeError) {
                return Self.json(try await self.app.send(message: text, to: contact, wait: 3))
            } catch {
                return Self.error(error.kind == .notFound ? .notFound : .badRequest, error.phrase)
            }
        }
    }
}
