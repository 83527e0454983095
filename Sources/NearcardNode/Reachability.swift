internal import NIOCore
internal import NIOPosix
public import NearcardDiscovery

/// Whether a node answers on TCP (connect, then close at once: the node sees a silent connection,
/// which it does not report).
public enum Reachability {
    /// Whether it answers at any of its addresses.
    public static func answers(_ peer: DiscoveredPeer, seconds: Int64 = 1) async -> Bool {
        for address in peer.dialOrder where await connectProblem(address, seconds: seconds) == nil { return true }
        return false
    }

    /// Whether something takes TCP connections at `host`:`port` (e.g. a node on this machine).
    public static func answers(host: String, port: Int, seconds: Int64 = 1) async -> Bool {
        await connectProblem(PeerAddress(ip: host, port: port, interfaceName: "", interfaceIndex: 0), seconds: seconds) == nil
    }

    /// Why a TCP connection to `address` fails within `seconds`, or nil when it succeeds.
    package static func connectProblem(_ address: PeerAddress, seconds: Int64 = 1) async -> String? {
        guard let socket = try? address.socketAddress() else { return "not an address" }
        let bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).connectTimeout(.seconds(seconds))
        do {
            let channel = try await bootstrap.connect(to: socket).get()
            try? await channel.close()
            return nil
        } catch let e as ChannelError {
            if case .connectTimeout = e { return "no answer within \(seconds) s" }
            return "\(e)"
        } catch {
            return "\(error)"
        }
    }
}
