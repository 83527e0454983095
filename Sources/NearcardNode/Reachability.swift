import NearcardDiscovery
internal import NIOCore
internal import NIOPosix

/// Whether a node answers on TCP at any of its addresses (connect, then close at once: the node sees a
/// silent connection, which it does not report).
public enum Reachability {
    public static func answers(_ peer: DiscoveredPeer, seconds: Int64 = 1) async -> Bool {
        for address in peer.dialOrder {
            guard let socket = try? address.socketAddress() else { continue }
            let bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).connectTimeout(.seconds(seconds))
            if let channel = try? await bootstrap.connect(to: socket).get() {
                try? await channel.close()
                return true
            }
        }
        return false
    }

    /// Whether something takes TCP connections at `host`:`port` (e.g. a node on this machine).
    public static func answers(host: String, port: Int, seconds: Int64 = 1) async -> Bool {
        guard let socket = try? SocketAddress(ipAddress: host, port: port) else { return false }
        let bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).connectTimeout(.seconds(seconds))
        guard let channel = try? await bootstrap.connect(to: socket).get() else { return false }
        try? await channel.close()
        return true
    }
}
