import Foundation
internal import NIOCore
internal import NIOPosix
import NearcardDiscovery
import NearcardModel
import NearcardProtocol

/// A listening node: accepts exchanges on TCP, under admission control.
package final class Listener: Sendable {
    package let context: NodeContext
    package let port: Int
    private let channel: any Channel
    package let admission: Admission

    /// Binds `host:port` (port 0 picks a free one). "::" accepts IPv4 too; if IPv6 is unavailable
    /// it falls back to 0.0.0.0.
    /// Once bound, `context`'s route hints name this machine's addresses and the bound port.
    package static func start(context: NodeContext, host: String = "::", port: Int = defaultPort) async throws -> Listener {
        try await start(context: context, host: host, port: port, group: MultiThreadedEventLoopGroup.singleton)
    }

    static func start(context: NodeContext, host: String, port: Int, group: any EventLoopGroup) async throws -> Listener {
        let admission = Admission(limits: context.limits)
        let probes = ProbeCounter(events: context.events, interval: context.limits.probeSummaryInterval)
        let refusals = RefusalCounter(events: context.events, interval: context.limits.probeSummaryInterval)
        let mailbox = MailboxAuthority(context: context)
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 1024)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                let address = channel.remoteAddress.flatMap(plainIP) ?? "unknown"
                let evict: @Sendable () -> Void = {
                    probes.record(.evicted, from: address)
                    channel.close(promise: nil)
                }
                // The node stopping: the session ends with a reason and reports it (not just a closed socket).
                let stop: @Sendable () -> Void = { channel.pipeline.fireUserInboundEventTriggered(NodeStopping()) }
                switch admission.admit(address: address, evict: evict, stop: stop) {
                case .refuse(let reason, _):
                    NodeMetrics.connectionRefused()
                    refusals.record(reason, from: address)
                    return channel.close()
                case .admit(let ticket):
                    if TestFault.has(.leak) { TestFault.leakOne() }
                    channel.closeFuture.whenComplete { _ in admission.release(ticket) }
                    let remote = channel.remoteAddress.map(displayAddress) ?? address
                    let admitted = AdmittedConnection(admission: admission, ticket: ticket, probes: probes)
                    return channel.eventLoop.makeCompletedFuture {
                        try SessionPipeline.configureResponder(channel, context: context, mailbox: mailbox, remote: remote, admitted: admitted)
                    }
                }
            }
        let channel: any Channel
        do {
            channel = try await bind(bootstrap, host: host, port: port)
        } catch {
            throw Self.bindError(error, port: port)
        }
        let bound = channel.localAddress?.port ?? port
        context.routeHints = LocalAddresses.current(filter: InterfaceFilter()).map { RouteRecord.Hint(host: $0, port: bound) }
        context.listeningPort = bound
        return Listener(context: context, port: bound, channel: channel, admission: admission)
    }

    /// Binds the listening socket. An address literal is bound as it is (no name look-up: getaddrinfo
    /// refuses "::" with EAI_ADDRFAMILY where IPv6 is disabled, although nothing needs resolving). "::"
    /// (every address, both families) that cannot be had for any reason but the port falls back to
    /// 0.0.0.0: a host with IPv6 disabled (`net.ipv6.conf.all.disable_ipv6=1`) or not built in still serves
    /// over IPv4. A host without IPv4 addresses still binds "::", which needs none.
    private static func bind(_ bootstrap: ServerBootstrap, host: String, port: Int) async throws -> any Channel {
        func once(_ host: String) async throws -> any Channel {
            if let literal = try? SocketAddress(ipAddress: host, port: port) { return try await bootstrap.bind(to: literal).get() }
            return try await bootstrap.bind(host: host, port: port).get()
        }
        do {
            return try await once(host)
        } catch  where host == "::" && BindProblem(error) != .inUse && BindProblem(error) != .privileged {
            return try await once("0.0.0.0")
        }
    }

    /// A bind failure in words (no errno, no `bind(descriptor:…)`), with what to do.
    static func bindError(_ error: any Error, port: Int) -> NodeError {
        let words: Phrase
        switch BindProblem(error) {
        case .inUse?: words = Phrase("port %1$@ is in use — another nearcard listen? Use --port to choose another (--port 0 picks a free one)", String(port))
        case .privileged?:
            words = Phrase(
                "port %1$@ needs privileges this account does not have; use a port from 1024 up (the default is %2$@)", String(port), String(defaultPort))
        case .noSuchAddress?: words = Phrase("this machine has no such address to listen on; leave the address out to listen on all of them")
        case nil: words = Phrase("cannot listen on port %1$@: %2$@", String(port), connectProblem(error))
        }
        return NodeError(.environment, words, causes: ["\(error)"])
    }

    private init(context: NodeContext, port: Int, channel: any Channel, admission: Admission) {
        self.context = context
        self.port = port
        self.channel = channel
        self.admission = admission
    }

    /// Stops accepting; open sessions end on their own timeouts or when the process exits.
    package func close() async {
        try? await channel.close()
    }

    /// Returns when the listening socket has closed.
    package func closed() async {
        try? await channel.closeFuture.get()
    }
}

/// The usual reasons a listening socket cannot be bound (any server's: the node's, the web app's).
public enum BindProblem: Sendable {
    case inUse, privileged, noSuchAddress

    /// The problem behind `error`, nil when it is not one of these.
    public init?(_ error: any Error) {
        switch (error as? IOError)?.errnoCode {
        case EADDRINUSE?: self = .inUse
        case EACCES?: self = .privileged
        case EADDRNOTAVAIL?: self = .noSuchAddress
        default: return nil
        }
    }
}

/// "192.0.2.1:5000" or "[2001:db8::1]:5000" (IPv4-mapped IPv6 shown as IPv4).
func displayAddress(_ address: SocketAddress) -> String {
    guard let ip = plainIP(address) else { return "\(address)" }
    let port = address.port ?? 0
    return ip.contains(":") ? "[\(ip)]:\(port)" : "\(ip):\(port)"
}

/// The address's IP, an IPv4-mapped IPv6 one ("::ffff:192.0.2.1", what a "::" socket sees of an IPv4
/// peer) as IPv4; nil for an address without one.
func plainIP(_ address: SocketAddress) -> String? {
    guard var ip = address.ipAddress else { return nil }
    if ip.hasPrefix("::ffff:") && ip.contains(".") { ip.removeFirst(7) }
    return ip
}
