import Foundation
import HTTPTypes
import Hummingbird
import Logging
import Metrics
import Prometheus
import Synchronization

/// `--metrics HOST:PORT`: the node's swift-metrics, kept by swift-prometheus and served at
/// `GET /metrics` in Prometheus's text format (nothing else is served there).
public enum MetricsEndpoint {
    /// Where to serve: "127.0.0.1:9464", "[::1]:9464", "0.0.0.0:9464".
    public static func parse(_ text: String) throws(MetricsError) -> (host: String, port: Int) {
        var host = text
        var portText = ""
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            host = String(text[text.index(after: text.startIndex)..<close])
            portText = String(text[close...].dropFirst().drop { $0 == ":" })
        } else if let colon = text.lastIndex(of: ":") {
            host = String(text[..<colon])
            portText = String(text[text.index(after: colon)...])
        }
        guard !host.isEmpty, let port = Int(portText), (1...65535).contains(port) else {
            throw MetricsError(message: "--metrics \(text) is not HOST:PORT (e.g. 127.0.0.1:9464)")
        }
        return (host, port)
    }

    public struct MetricsError: Error, CustomStringConvertible, Sendable {
        public let message: String
        public var description: String { message }
    }

    /// The exchange latency histogram's buckets (seconds).
    static let latencyBuckets: [Duration] = [
        .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100),
        .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(2500), .seconds(5),
        .seconds(10), .seconds(30), .seconds(60),
    ]

    /// The one registry of this process, bootstrapped into swift-metrics on first use.
    static let registry: PrometheusCollectorRegistry = {
        let registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.durationHistogramBuckets["nearcard_exchange_duration_seconds"] = latencyBuckets
        MetricsSystem.bootstrap(factory)
        return registry
    }()

    /// Bootstraps the metrics system (before the node makes its first metric).
    public static func bootstrap() { _ = registry }

    /// Binds `host:port` and serves until the calling task is cancelled; returns once bound, or
    /// throws why it could not bind. The server runs in the returned task.
    public static func start(host: String, port: Int) async throws -> Task<Void, Never> {
        let registry = self.registry
        let router = Router()
        router.get("/metrics") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(bytes: registry.emitToBuffer())))
        }
        var logger = Logger(label: "nearcard.metrics")
        logger.logLevel = .critical
        // The server reports running (or fails to bind) on its own time: whichever comes first is kept
        // for the caller, waiting or not yet.
        let outcome = Mutex<(waiter: CheckedContinuation<Void, any Error>?, result: Result<Void, any Error>?)>((nil, nil))
        @Sendable func finish(_ result: Result<Void, any Error>) {
            outcome.withLock { state in
                guard state.result == nil else { return }
                state.result = result
                state.waiter?.resume(with: result)
                state.waiter = nil
            }
        }
        let task = Task {
            let app = Application(
                router: router, configuration: .init(address: .hostname(host, port: port), serverName: nil),
                onServerRunning: { _ in finish(.success(())) }, logger: logger)
            do { try await app.run() } catch { finish(.failure(error)) }
        }
        // A bind failure is thrown as the socket's error: the CLI says it in words (BindProblem).
        try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, any Error>) in
            outcome.withLock { state in
                if let result = state.result { c.resume(with: result) } else { state.waiter = c }
            }
        }
        return task
    }
}
