import Foundation
import NearcardCrypto
import NearcardDiscovery
import NearcardModel
import NearcardProtocol
internal import NIOCore
internal import NIOPosix
#if canImport(Glibc)
import Glibc
#endif

/// Dials a peer and runs one exchange as the initiator.
public enum Dialer {
    static let connectTimeout: TimeAmount = .seconds(5)

    /// `consent`: how this side decides once the code is known (the person dialling asked for the exchange).
    public static func exchange(with target: DialTarget, context: NodeContext, consent: ConsentProvider) async throws(NodeError) -> SessionResult {
        try await exchange(with: target, context: context, consent: consent, group: MultiThreadedEventLoopGroup.singleton)
    }

    static func exchange(with target: DialTarget, context: NodeContext, consent: ConsentProvider,
                         group: EventLoopGroup) async throws(NodeError) -> SessionResult {
        var failures: [String] = []
        for address in target.addresses {
            let socketAddress: SocketAddress
            do { socketAddress = try address.socketAddress() } catch {
                failures.append("\(address): \(error)")
                continue
            }
            let promise = group.next().makePromise(of: SessionResult.self)
            let bootstrap = ClientBootstrap(group: group)
                .connectTimeout(connectTimeout)
                .channelOption(.tcpOption(.tcp_nodelay), value: 1)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try SessionPipeline.configureExchange(channel, context: context, consent: consent, expected: target.expected, invitation: target.invitation,
                                                              remote: address.description, result: promise)
                    }
                }
            do {
                _ = try await bootstrap.connect(to: socketAddress).get()
            } catch {
                promise.fail(error)
                failures.append("\(address): \(describeConnectError(error))")
                continue
            }
            // The handler always reports: completed, failed, or lost when the connection closes early.
            do { return try await promise.futureResult.get() } catch {
                throw NodeError(.internalError, "the exchange ended without a result: \(error)")
            }
        }
        var error = NodeError(.unreachable, "cannot connect to \(target.label): " + (failures.isEmpty ? "no addresses" : failures.joined(separator: "; ")),
                              causes: failures)
        error.neverConnected = true
        throw error
    }
}

extension Dialer {
    /// Delivers one follow-up message to `address`, pinning the recipient's key. `.success(true)` means
    /// the recipient already had it.
    public static func deliver(_ envelope: MessageEnvelope, token: [UInt8], pinned: X25519.PublicKey, at address: PeerAddress,
                               context: NodeContext) async -> Result<Bool, ProtocolError> {
        await deliver(envelope, token: token, pinned: pinned, at: address, context: context, group: MultiThreadedEventLoopGroup.singleton)
    }

    static func deliver(_ envelope: MessageEnvelope, token: [UInt8], pinned: X25519.PublicKey, at address: PeerAddress,
                        context: NodeContext, group: EventLoopGroup) async -> Result<Bool, ProtocolError> {
        let socketAddress: SocketAddress
        do { socketAddress = try address.socketAddress() } catch {
            return .failure(ProtocolError(.connectionLost, "\(address): \(error)"))
        }
        let promise = group.next().makePromise(of: Result<Bool, ProtocolError>.self)
        let machine = MailboxStateMachine(sending: envelope, token: token, to: pinned, staticKey: context.keys.x25519, ephemeralKey: X25519.PrivateKey())
        let bootstrap = ClientBootstrap(group: group)
            .connectTimeout(connectTimeout)
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try SessionPipeline.configureMail(channel, context: context, machine: machine, remote: address.description, result: promise)
                }
            }
        do {
            _ = try await bootstrap.connect(to: socketAddress).get()
        } catch {
            promise.succeed(.failure(ProtocolError(.connectionLost, "\(address): \(describeConnectError(error))")))
        }
        return (try? await promise.futureResult.get()) ?? .failure(ProtocolError(.internalError, "the delivery ended without a result"))
    }
}

/// A short reason for a failed connect ("connection refused", "no answer within 5 s").
/// An errno as a person reads it (never the library's `read(descriptor:…)` text).
func describeErrno(_ code: Int32) -> String {
    switch code {
    case ECONNRESET: "the other side reset the connection"
    case EPIPE: "the other side closed the connection"
    case ECONNREFUSED: "nothing accepts connections there (connection refused)"
    case ETIMEDOUT: "the network stopped answering (timed out)"
    case EHOSTUNREACH: "no route to that host"
    case ENETUNREACH: "no route to that network"
    case ENETDOWN: "the network is down"
    default: String(cString: strerror(code)).lowercased()
    }
}

/// Any error met on a connection, in words.
func describeConnectionError(_ error: Error) -> String {
    if let e = error as? IOError { return describeErrno(e.errnoCode) }
    return describeConnectError(error)
}

func describeConnectError(_ error: Error) -> String {
    if let e = error as? NIOConnectionError {
        if let first = e.connectionErrors.first { return describeConnectError(first.error) }
        if let dns = e.dnsAAAAError ?? e.dnsAError { return describeConnectError(dns) }
        return "cannot connect"
    }
    if let e = error as? IOError { return describeErrno(e.errnoCode) }
    if case ChannelError.connectTimeout(let t) = error as? ChannelError ?? .ioOnClosedChannel { return "no answer within \(t.nanoseconds / 1_000_000_000) s" }
    return "\(error)"
}

extension PeerAddress {
    /// A socket address, with the scope id for IPv6 link-local addresses.
    func socketAddress() throws -> SocketAddress {
        if isIPv6 {
            var sin6 = sockaddr_in6()
            sin6.sin6_family = sa_family_t(AF_INET6)
            sin6.sin6_port = in_port_t(UInt16(port).bigEndian)
            guard inet_pton(AF_INET6, ip, &sin6.sin6_addr) == 1 else { throw NodeError(.invalidInput, "\(ip) is not an IPv6 address") }
            if isLinkLocal { sin6.sin6_scope_id = UInt32(interfaceIndex) }
            return SocketAddress(sin6, host: ip)
        }
        return try SocketAddress(ipAddress: ip, port: port)
    }
}
