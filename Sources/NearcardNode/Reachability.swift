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
}
