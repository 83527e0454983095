import AsyncHTTPClient
package import Foundation
import Metrics
internal import NIOCore
import NIOHTTP1
import NearcardStore

/// Posts queued webhook deliveries (queued with each exchange, in its transaction): a signed JSON
/// POST per completed exchange, retried with back-off until a 2xx answer or `giveUpAfter`. It runs
/// beside the sessions and never holds one up: an exchange completes whether or not the receiver is up.
package struct WebhookWorker: Sendable {
    let context: NodeContext
    let webhook: Webhook

    /// How long one POST may take.
    package static let requestTimeout: TimeInterval = 10
    /// How long a delivery is retried before it is given up (the receiver was down all that time).
    package static let giveUpAfter: TimeInterval = 24 * 3600
    /// The largest answer body read (and dropped).
    static let maximumAnswer = 64 * 1024

    package init(context: NodeContext, webhook: Webhook) {
        self.context = context
        self.webhook = webhook
    }

    /// The wait before attempt `n + 1`: 1 s, 2 s, 4 s … at most 5 minutes.
    package static func backoff(attempts: Int) -> TimeInterval {
        min(pow(2, Double(max(0, attempts - 1))), 300)
    }

    /// Runs until cancelled: a pass every `interval` seconds.
    package func run(interval: TimeInterval = 1) async {
        while !Task.isCancelled {
            await deliverDue()
            try? await Task.sleep(nanoseconds: UInt64(interval * 1e9))
        }
    }

    /// One pass: posts every due delivery; returns them as they ended.
    @discardableResult
    package func deliverDue(now: Date = Date()) async -> [(id: String, delivered: Bool)] {
        guard let due = try? context.database.claimDueWebhooks(now: now) else { return [] }
        var done: [(String, Bool)] = []
        for delivery in due {
            let problem = await post(delivery)
            if let problem {
                let attempts = delivery.attempts + 1
                let giveUp = Date().timeIntervalSince(delivery.createdAt) > Self.giveUpAfter
                let retry = giveUp ? nil : Date().addingTimeInterval(Self.backoff(attempts: attempts))
                try? context.database.markWebhookFailed(id: delivery.id, error: problem, retryAt: retry)
                Counter(label: "nearcard_webhooks_total", dimensions: [("event", giveUp ? "failed" : "retry")]).increment()
                if giveUp {
                    context.events.emit(
                        .error(
                            message: "webhook: gave up delivering exchange \(delivery.id.prefix(12)) to \(delivery.url) after \(attempts) attempts: \(problem)")
                    )
                }
                done.append((delivery.id, false))
            } else {
                try? context.database.markWebhookDelivered(id: delivery.id)
                Counter(label: "nearcard_webhooks_total", dimensions: [("event", "delivered")]).increment()
                done.append((delivery.id, true))
            }
        }
        return done
    }

    /// Posts one delivery: nil when the receiver answered 2xx, else why not.
    func post(_ delivery: WebhookDelivery) async -> String? {
        let body = Array(delivery.body.utf8)
        let timestamp = Int64(Date().timeIntervalSince1970)
        var request = HTTPClientRequest(url: delivery.url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "User-Agent", value: "nearcard-webhook/1")
        request.headers.add(name: "X-Nearcard-Event", value: "exchange.completed")
        request.headers.add(name: "X-Nearcard-Delivery", value: delivery.id)
        request.headers.add(name: "X-Nearcard-Timestamp", value: "\(timestamp)")
        request.headers.add(name: "X-Nearcard-Signature", value: webhook.signature(body: body, timestamp: timestamp))
        request.body = .bytes(ByteBuffer(bytes: body))
        do {
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(Int64(Self.requestTimeout)))
            _ = try? await response.body.collect(upTo: Self.maximumAnswer)
            return (200..<300).contains(Int(response.status.code)) ? nil : "the receiver answered \(response.status.code) \(response.status.reasonPhrase)"
        } catch {
            return "\(error)".count > 200 ? String("\(error)".prefix(200)) : "\(error)"
        }
    }
}
