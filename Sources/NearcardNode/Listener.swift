import Foundation
import NearcardDiscovery
import NearcardModel
import NearcardProtocol
import NIOCore
import NIOPosix

/// A listening node: accepts exchanges on TCP, under admission control.
public final class Listener: Sendable {
    public let service: ExchangeService
    public let port: Int
    private let channel: Channel
    public let admission: Admission

    /// Binds `host:port` (port 0 picks a free one). "::" accepts IPv4 too; if IPv6 is unavailable
    /// it falls back to 0.0.0.0.
    public static func start(service: ExchangeService, host: String = "::", port: Int = defaultPort,
                             group: EventLoopGroup = MultiThreadedEventLoopGroup.singleton) async throws -> Listener {
        let admission = Admission(limits: service.limits)
        let serviceBox = ServiceBox(service)
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 1024)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                var address = channel.remoteAddress?.ipAddress ?? "unknown"
                if address.hasPrefix("::ffff:") && address.contains(".") { address.removeFirst(7) }
                switch admission.admit(address: address) {
                case .refuse(let reason, let report):
                    if report { serviceBox.service.events.emit(.rateLimited(address: address, reason: reason)) }
                    return channel.close()
                case .admit:
                    channel.closeFuture.whenComplete { _ in admission.release(address: address) }
                    let current = serviceBox.service
                    let remote = channel.remoteAddress.map(displayAddress) ?? address
                    return channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(
                            SessionHandler(responderFor: current, mailbox: serviceBox.mailbox, remote: remote))
                    }
                }
            }
        let channel: Channel
        do {
            channel = try await bootstrap.bind(host: host, port: port).get()
        } catch where host == "::" {
            channel = try await bootstrap.bind(host: "0.0.0.0", port: port).get()
        }
        let bound = channel.localAddress?.port ?? port
        let listener = Listener(service: service, port: bound, channel: channel, admission: admission, serviceBox: serviceBox)
        serviceBox.service = service.with(routeHints: LocalAddresses.current(filter: InterfaceFilter()).map { RouteRecord.Hint(host: $0, port: bound) })
        return listener
    }

    private let serviceBox: ServiceBox

    private init(service: ExchangeService, port: Int, channel: Channel, admission: Admission, serviceBox: ServiceBox) {
        self.serviceBox = serviceBox
        self.service = service
        self.port = port
        self.channel = channel
        self.admission = admission
    }

    /// The service sessions run with: the one given, with route hints for the bound port.
    public var currentService: ExchangeService { serviceBox.service }

    /// Stops accepting; open sessions end on their own timeouts or when the process exits.
    public func close() async {
        try? await channel.close()
    }

    /// Completes when the listening socket closes.
    public var closeFuture: EventLoopFuture<Void> { channel.closeFuture }
}

/// Holds the service the child-channel initializer uses; replaced once the port (for route hints) is known.
final class ServiceBox: @unchecked Sendable {
    private let lock = NSLock()
    private var value: ExchangeService
    let mailbox: MailboxAuthority
    init(_ service: ExchangeService) {
        value = service
        mailbox = MailboxAuthority(service: service)
    }
    var service: ExchangeService {
        get { lock.withLock { value } }
        set { lock.withLock { value = newValue } }
    }
}

/// "192.0.2.1:5000" or "[2001:db8::1]:5000" (IPv4-mapped IPv6 shown as IPv4).
func displayAddress(_ address: SocketAddress) -> String {
    guard var ip = address.ipAddress else { return "\(address)" }
    let port = address.port ?? 0
    if ip.hasPrefix("::ffff:") && ip.contains(".") { ip.removeFirst(7) }
    return ip.contains(":") ? "[\(ip)]:\(port)" : "\(ip):\(port)"
}

/// This machine's addresses, for route hints.
public enum LocalAddresses {
    public static func current(filter: InterfaceFilter) -> [String] {
        guard let interfaces = try? System.enumerateDevices() else { return [] }
        var out: [String] = []
        for device in interfaces where filter.permits(device.name) {
            guard let ip = device.address?.ipAddress, ip != "127.0.0.1", ip != "::1", !ip.lowercased().hasPrefix("fe80") else { continue }
            if !out.contains(ip) { out.append(ip) }
        }
        return out
    }
}
