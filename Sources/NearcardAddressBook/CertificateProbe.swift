import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import Synchronization

/// Why a server's certificate was refused, when its dates say: a second handshake that only looks at
/// the certificate the server presents (it never sends a request, and always ends the handshake). The
/// first, refused, handshake did the real verification; this one only finds the words for it.
enum CertificateProbe {
    /// "expired on 2026-11-26", "not valid before …", or nil (another name, or a CA the system does not trust).
    static func dateProblem(host: String, port: Int, now: Date = Date()) async -> Phrase? {
        guard let context = try? NIOSSLContext(configuration: .makeClientConfiguration()) else { return nil }
        let seen = Mutex<(notBefore: time_t, notAfter: time_t)?>(nil)
        let isAddress = host.contains(":") || host.allSatisfy { $0.isNumber || $0 == "." }
        let bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).connectTimeout(.seconds(5)).channelInitializer { channel in
            channel.eventLoop.makeCompletedFuture {
                let handler = try NIOSSLClientHandler(
                    context: context, serverHostname: isAddress ? nil : host,
                    customVerificationCallback: { certificates, promise in
                        if let leaf = certificates.first { seen.withLock { $0 = (leaf.notValidBefore, leaf.notValidAfter) } }
                        promise.succeed(.failed)
                    })
                try channel.pipeline.syncOperations.addHandler(handler)
            }
        }
        guard let channel = try? await bootstrap.connect(host: host, port: port).get() else { return nil }
        // The handshake fails at the callback and the channel closes; do not wait for a silent server.
        let closed = channel.closeFuture
        channel.eventLoop.scheduleTask(in: .seconds(5)) { channel.close(promise: nil) }
        try? await closed.get()
        guard let dates = seen.withLock({ $0 }) else { return nil }
        let day = ISO8601DateFormatter()
        day.formatOptions = [.withFullDate]
        let t = time_t(now.timeIntervalSince1970)
        if t > dates.notAfter { return Phrase("it expired on %1$@", day.string(from: Date(timeIntervalSince1970: TimeInterval(dates.notAfter)))) }
        if t < dates.notBefore {
            return Phrase(
                "it is not valid before %1$@ (is this machine's clock right?)", day.string(from: Date(timeIntervalSince1970: TimeInterval(dates.notBefore))))
        }
        return nil
    }
}
