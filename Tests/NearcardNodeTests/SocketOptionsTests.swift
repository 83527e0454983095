import Foundation
import NearcardCrypto
import NearcardModel
import NearcardNode
import NearcardProtocol
import NearcardStore
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// What the kernel says of this process's TCP sockets (read with getsockopt, not from our own options).
struct OpenTCPSocket {
    let fd: Int32
    let localPort: Int
    let peerPort: Int
    let noDelay: Bool
    /// SO_DEBUG: only a privileged process may set it. A TCP option given at the socket level by mistake
    /// (SOL_SOCKET with TCP_NODELAY's number) sets this instead; as root it silently succeeds.
    let debug: Bool

    /// Every connected TCP socket this process holds now.
    static func all() -> [OpenTCPSocket] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return [] }
        var out: [OpenTCPSocket] = []
        for name in names {
            guard let fd = Int32(name) else { continue }
            var type: Int32 = 0
            var listening: Int32 = 0
            var noDelay: Int32 = 0
            var len = socklen_t(MemoryLayout<Int32>.size)
            guard getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) == 0, type == Int32(SOCK_STREAM.rawValue) else { continue }
            len = socklen_t(MemoryLayout<Int32>.size)
            guard getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) == 0, listening == 0 else { continue }
            guard let local = port(fd, peer: false), let peer = port(fd, peer: true) else { continue }
            len = socklen_t(MemoryLayout<Int32>.size)
            guard getsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, &len) == 0 else { continue }
            var debug: Int32 = 0
            len = socklen_t(MemoryLayout<Int32>.size)
            guard getsockopt(fd, SOL_SOCKET, SO_DEBUG, &debug, &len) == 0 else { continue }
            out.append(OpenTCPSocket(fd: fd, localPort: local, peerPort: peer, noDelay: noDelay != 0, debug: debug != 0))
        }
        return out
    }

    private static func port(_ fd: Int32, peer: Bool) -> Int? {
        var storage = sockaddr_storage()
        var len = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let rc = withUnsafeMutablePointer(to: &storage) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { peer ? getpeername(fd, $0, &len) : getsockname(fd, $0, &len) }
        }
        guard rc == 0 else { return nil }
        // sockaddr_in and sockaddr_in6 both keep the port, in network order, right after the 2-byte
        // family (read as bytes: their members are declared by both Glibc and NIO's CNIOLinux, and
        // which one a build sees first varies).
        guard Int32(storage.ss_family) == AF_INET || Int32(storage.ss_family) == AF_INET6 else { return nil }
        return withUnsafeBytes(of: &storage) { Int($0[2]) << 8 | Int($0[3]) }
    }
}

/// A responder's consent that first looks at the sockets of the session it is asked about (both ends
/// are open while a decision is awaited), then accepts.
final class SocketProbe: ConsentProvider, @unchecked Sendable {
    private let lock = NSLock()
    private var seen: [OpenTCPSocket] = []
    var sockets: [OpenTCPSocket] { lock.withLock { seen } }

    func decide(_ request: ConsentRequest) async -> ConsentAnswer {
        let now = OpenTCPSocket.all()
        lock.withLock { seen = now }
        return ConsentAnswer(accept: true)
    }
}

@Suite struct SocketOptionsTests {
    /// Exchange frames are small and each waits for an answer: Nagle's algorithm would hold them back.
    /// The option must be the TCP-level one (IPPROTO_TCP); at SOL_SOCKET the same number is SO_DEBUG,
    /// which an ordinary user may not set at all, so neither could dial nor accept. Run as root, that
    /// mistake shows as SO_DEBUG set; run as a user, as a session that never starts.
    @Test func bothEndsOfASessionSetTCPNoDelayAndNothingPrivileged() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-sockopt-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let probe = SocketProbe()
        let ada = IdentityKeys.generate()
        let grace = IdentityKeys.generate()
        // Generous phase times: in the whole suite this test's tasks can wait minutes for a thread (the
        // LAN suites hold the pool), and a consent timeout would turn that wait into a refusal.
        var limits = NodeLimits()
        limits.consentTimeout = 900
        limits.handshakeTimeout = 900
        limits.peerDecisionGrace = 900
        limits.idleTimeout = 900
        limits.sessionTimeout = 1800
        limits.connectBudget = 900
        let listenerContext = NodeContext(
            keys: ada, identity: ada.publicIdentity(name: "Ada"),
            database: try NearcardDatabase(path: dir + "/ada/nearcard.sqlite"), consent: probe, limits: limits)
        let dialerContext = NodeContext(
            keys: grace, identity: grace.publicIdentity(name: "Grace"),
            database: try NearcardDatabase(path: dir + "/grace/nearcard.sqlite"), consent: AcceptAll(message: nil), limits: limits)
        let listener = try await Listener.start(context: listenerContext, host: "127.0.0.1", port: 0)
        defer { Task { await listener.close() } }
        let target = DialTarget(addresses: try PeerQuery.resolve(host: "127.0.0.1", port: listener.port), expected: ExpectedPeer(), label: "ada")
        let result = try await Dialer.exchange(with: target, context: dialerContext, consent: AcceptAll(message: nil))
        guard case .completed = result else {
            Issue.record("the exchange did not complete: \(result)")
            return
        }

        let sockets = probe.sockets
        let accepted = sockets.filter { $0.localPort == listener.port }
        let dialled = sockets.filter { $0.peerPort == listener.port }
        #expect(accepted.count == 1 && dialled.count == 1, "both ends of the session were open during consent: \(sockets)")
        #expect(accepted.allSatisfy { $0.noDelay }, "the accepted socket has TCP_NODELAY")
        #expect(dialled.allSatisfy { $0.noDelay }, "the dialling socket has TCP_NODELAY")
        #expect(!sockets.contains { $0.debug }, "no session socket has SO_DEBUG (a TCP option set at the socket level)")
    }
}
