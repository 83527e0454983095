import Foundation
import Hummingbird
import NearcardCrypto
import NearcardNode
import NearcardStore

/// The "Messages" page's API: what contacts wrote, what you sent and how it stands, and writing one.
extension WebUI {
    func messageRoutes(_ router: Router<BasicRequestContext>) {
        router.get("/api/messages") { _, _ in
            let db = self.runtime.context.database
            return Self.json(["inbox": .array(try db.inbox().map(\.json)), "outbox": .array(try db.outbox(all: true).map(\.json))])
        }
        router.post("/api/outbox/retry") { _, _ in
            // Every queued message, tried now (the contacts looked for on the LAN for a few seconds).
            let tried = await self.runtime.deliverQueued(wait: 3)
            return Self.json(["tried": .number(Double(tried.count)), "delivered": .number(Double(tried.filter { $0.state == .delivered }.count))])
        }
        router.post("/api/messages") { request, _ in
            let body = try await Self.body(request)
            guard let contact = body["contact"]?.stringValue, !contact.isEmpty else { return Self.error(.badRequest, "say to whom (\"contact\": its id)") }
            guard let text = body["text"]?.stringValue, !text.isEmpty else { return Self.error(.badRequest, "the message is empty") }
            do {
                let item = try await self.runtime.send(message: text, to: contact, wait: 3)
                return Self.json(item.json)
            } catch let e as NodeError {
                return Self.error(e.kind == .notFound ? .notFound : .badRequest, e.message)
            } catch let e as StoreError {
                return Self.error(e.kind == .notFound || e.kind == .unmatched ? .notFound : .badRequest, e.message)
            }
        }
    }
}
