import Foundation
internal import NIOCore
internal import NIOPosix
package import NearcardCrypto
package import NearcardDiscovery
package import NearcardModel
import NearcardProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// Dials a peer and runs one exchange as the initiator.
package enum Dialer {
    static let connectTimeout: TimeAmount = .seconds(5)

    /// `consent`: how this side decides once the code is known (the person dialling asked for the exchange).
    package static func exchange(with target: DialTarget, context: NodeContext, consent: any ConsentProvider) async throws(NodeError) -> SessionResult {
        try await exchange(with: target, context: context, consent: consent, group: MultiThreadedEventLoopGroup.singleton)
    }

    /// Connecting on a lossy network: each round tries every address with a longer connect timeout
    /// (3 s, 6 s, 12 s …, so a SYN lost twice, or a round trip of several seconds, still connects) and
    /// waits a little longer between rounds, within `NodeLimits.connectBudget` in all. An address that
    /// refuses (nothing listens, no route) is not tried again; only silence is.
    static func exchange(
        with target: DialTarget, context: NodeContext, consent: any ConsentProvider,
        group: any EventLoopGroup
    ) async throws(NodeError) -> SessionResult {
        SessionTrace.mark("dial")
        let started = Date()
        let budget = context.limits.connectBudget
        var failures: [(address: String, why: Phrase)] = []
        var addresses = target.addresses
        var target = target
        var round = 0
        while true {
            var silent: [PeerAddress] = []
            var lastFailures: [(address: String, why: Phrase)] = []
            for address in addresses {
                let remaining = budget - Date().timeIntervalSince(started)
                guard remaining > 0.05 else { break }
                let timeout = min(remaining, 3 * pow(2, Double(round)))
                var outcome = await attempt(address, timeout: timeout, target: target, context: context, consent: consent, group: group)
                // A version-2 node answers a version-3 hello with `unsupported_version` before anything
                // is shown or decided (§21): dial it again at once, in version 2, and keep to that.
                if case .connected(let result) = outcome, Self.speaksOlderVersion(result), target.version > ExchangeVersions.lowest {
                    target.version = ExchangeVersions.lowest
                    context.events.emit(
                        .stillDialing(target: target.label, attempt: round + 1, reason: "the peer speaks version 2 only; dialling again in version 2"))
                    outcome = await attempt(address, timeout: timeout, target: target, context: context, consent: consent, group: group)
                }
                switch outcome {
                case .connected(let result):
                    // A handshake that ran out before the peer said who it is: no code was shown to
                    // anyone (the code needs both sides' reveals), so nothing can be doubled — tried
                    // again like silence, within the budget (issue 49: a lossy link's lost replies).
                    if let why = Self.unansweredHandshake(result), Date().timeIntervalSince(started) + 1 < budget {
                        silent.append(address)
                        lastFailures.append(("\(address)", why))
                        continue
                    }
                    return result
                case .silent(let why):
                    silent.append(address)
                    lastFailures.append(("\(address)", why))
                case .refused(let why):
                    lastFailures.append(("\(address)", why))
                }
            }
            failures = lastFailures
            round += 1
            let pause = min(4, 0.5 * pow(2, Double(round - 1)))
            let elapsed = Date().timeIntervalSince(started)
            guard !silent.isEmpty, elapsed + pause < budget else {
                // One address that is the label itself (dialled as HOST:PORT) is not named twice.
                let why: Phrase =
                    if failures.isEmpty {
                        Phrase("no addresses")
                    } else if failures.count == 1 && failures[0].address == target.label {
                        failures[0].why
                    } else {
                        failures.map { Phrase("%1$@: %2$@", $0.address, $0.why) }.dropFirst().reduce(Phrase("%1$@: %2$@", failures[0].address, failures[0].why))
                        {
                            Phrase("%1$@; %2$@", $0, $1)
                        }
                    }
                let phrase =
                    round > 1
                    ? Phrase("cannot connect to %1$@ (%2$@ attempts in %3$@ s): %4$@", target.label, String(round), String(Int(elapsed.rounded())), why)
                    : Phrase("cannot connect to %1$@: %2$@", target.label, why)
                var error = NodeError(.unreachable, phrase, causes: failures.map { "\($0.address): \($0.why.english)" })
                error.neverConnected = true
                throw error
            }
            addresses = silent
            context.events.emit(
                .stillDialing(target: target.label, attempt: round + 1, reason: failures.first.map { "\($0.address): \($0.why.english)" } ?? "no answer"))
            try? await Task.sleep(nanoseconds: UInt64(pause * 1e9))
        }
    }

    enum Attempt: Sendable {
        case connected(SessionResult)
        /// No answer in time: worth another try on a lossy network.
        case silent(Phrase)
        /// A definite answer (refused, no route, a malformed address): not worth another try.
        case refused(Phrase)
    }

    /// One connection attempt; once connected, the exchange runs to its end (no retry after that: the
    /// peer may have shown a code or decided).
    private static func attempt(
        _ address: PeerAddress, timeout: TimeInterval, target: DialTarget, context: NodeContext, consent: any ConsentProvider,
        group: any EventLoopGroup
    ) async -> Attempt {
        do {
            let socketAddress: SocketAddress
            do { socketAddress = try address.socketAddress() } catch {
                return .refused((error as? NodeError)?.phrase ?? Phrase(verbatim: "\(error)"))
            }
            let promise = group.next().makePromise(of: SessionResult.self)
            let bootstrap = leavingFrom(context, to: socketAddress, ClientBootstrap(group: group))
                .connectTimeout(.milliseconds(Int64(timeout * 1000)))
                .channelOption(.tcpOption(.tcp_nodelay), value: 1)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try SessionPipeline.configureExchange(
                            channel, context: context, consent: consent, expected: target.expected, invitation: target.invitation,
                            version: target.version, remote: address.description, result: promise)
                    }
                }
            // One wait for the whole attempt: the connect's outcome is handled on the event loop, so the
            // waiting task is woken once, with the result, and not also in the middle of the session
            // (where its thread would compete with the session's for the CPU).
            let outcome = bootstrap.connect(to: socketAddress).flatMap { _ -> EventLoopFuture<Attempt> in
                SessionTrace.mark("connect returned")
                // The handler always reports: completed, failed, or lost when the connection closes early.
                return promise.futureResult.map { .connected($0) }.recover { error in
                    .connected(.failed(ProtocolError(.internalError, "the exchange ended without a result: \(error)"), peer: nil, byPeer: false))
                }
            }.recover { error -> Attempt in
                promise.fail(error)
                return isSilence(error) ? .silent(connectProblem(error)) : .refused(connectProblem(error))
            }
            // (Every path above ends in an attempt: the future cannot fail.)
            let attempt = (try? await outcome.get()) ?? .refused(Phrase("the connection attempt ended without an outcome"))
            SessionTrace.mark("dial result")
            return attempt
        }
    }

    /// Why a session ended before the peer identified itself, when it ran out of time or lost its
    /// connection (not a refusal of the peer's): nil for any other end.
    static func unansweredHandshake(_ result: SessionResult) -> Phrase? {
        guard case .failed(let error, nil, false, nil) = result, [.timeout, .connectionLost].contains(error.code) else { return nil }
        return error.phrase
    }

    /// The peer refused our hello's version (a version-2 node, §21).
    static func speaksOlderVersion(_ result: SessionResult) -> Bool {
        guard case .failed(let error, nil, true, nil) = result else { return false }
        return error.code == .unsupportedVersion
    }

    /// A connect that timed out (or whose network said "try again"), as opposed to a definite refusal.
    static func isSilence(_ error: any Error) -> Bool {
        if let e = error as? NIOConnectionError {
            return e.connectionErrors.isEmpty || e.connectionErrors.contains { isSilence($0.error) }
        }
        if case ChannelError.connectTimeout = error as? ChannelError ?? .ioOnClosedChannel { return true }
        if let e = error as? IOError { return [ETIMEDOUT, EHOSTUNREACH, EAGAIN].contains(e.errnoCode) }
        return false
    }
}

extension Dialer {
    /// Delivers one follow-up message to `address`, pinning the recipient's key. `.success(true)` means
    /// the recipient already had it.
    package static func deliver(
        _ envelope: MessageEnvelope, token: [UInt8], pinned: X25519.PublicKey, at address: PeerAddress,
        context: NodeContext
    ) async -> Result<Bool, ProtocolError> {
        await deliver(envelope, token: token, pinned: pinned, at: address, context: context, group: MultiThreadedEventLoopGroup.singleton)
    }

    static func deliver(
        _ envelope: MessageEnvelope, token: [UInt8], pinned: X25519.PublicKey, at address: PeerAddress,
        context: NodeContext, group: any EventLoopGroup
    ) async -> Result<Bool, ProtocolError> {
        await mail(
            MailboxStateMachine(sending: envelope, token: token, to: pinned, staticKey: context.keys.x25519, ephemeralKey: SessionKeys.take()),
            at: address, context: context, group: group)
    }

    /// Asks a contact's node whether it holds exchange `edge` (a confirmation query, §11); success
    /// carries its answer.
    package static func ask(about edge: String, pinned: X25519.PublicKey, at address: PeerAddress, context: NodeContext) async -> Result<Bool, ProtocolError> {
        await mail(
            MailboxStateMachine(asking: edge, to: pinned, staticKey: context.keys.x25519, ephemeralKey: SessionKeys.take()),
            at: address, context: context, group: MultiThreadedEventLoopGroup.singleton)
    }

    /// A node that uses one address only (`--address`) connects from it, to a peer of the same family.
    static func leavingFrom(_ context: NodeContext, to target: SocketAddress, _ bootstrap: ClientBootstrap) -> ClientBootstrap {
        guard let local = context.localAddress, let from = try? SocketAddress(ipAddress: local, port: 0), from.protocol == target.protocol else {
            return bootstrap
        }
        return bootstrap.bind(to: from)
    }

    /// One mail session (a delivery or a query) to `address`.
    static func mail(_ machine: MailboxStateMachine, at address: PeerAddress, context: NodeContext, group: any EventLoopGroup) async -> Result<
        Bool, ProtocolError
    > {
        let socketAddress: SocketAddress
        do { socketAddress = try address.socketAddress() } catch {
            return .failure(ProtocolError(.connectionLost, "\(address): \(error)"))
        }
        let promise = group.next().makePromise(of: Result<Bool, ProtocolError>.self)
        let bootstrap = leavingFrom(context, to: socketAddress, ClientBootstrap(group: group))
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
        return (try? await promise.futureResult.get()) ?? .failure(ProtocolError(.internalError, "the mail session ended without a result"))
    }
}

/// A short reason for a failed connect ("connection refused", "no answer within 5 s").
/// An errno as a person reads it (never the library's `read(descriptor:…)` text).
func describeErrno(_ code: Int32) -> String { errnoProblem(code).english }

func errnoProblem(_ code: Int32) -> Phrase {
    switch code {
    case ECONNRESET: Phrase("the other side reset the connection")
    case EPIPE: Phrase("the other side closed the connection")
    case ECONNREFUSED: Phrase("nothing accepts connections there (connection refused)")
    case ETIMEDOUT: Phrase("the network stopped answering (timed out)")
    case EHOSTUNREACH: Phrase("no route to that host")
    case ENETUNREACH: Phrase("no route to that network")
    case ENETDOWN: Phrase("the network is down")
    default: Phrase(verbatim: String(cString: strerror(code)).lowercased())
    }
}

func describeConnectError(_ error: any Error) -> String { connectProblem(error).english }

/// Why a connect failed, to be said in a person's language.
func connectProblem(_ error: any Error) -> Phrase {
    if let e = error as? NIOConnectionError {
        if let first = e.connectionErrors.first { return connectProblem(first.error) }
        if let dns = e.dnsAAAAError ?? e.dnsAError { return connectProblem(dns) }
        return Phrase("cannot connect")
    }
    if let e = error as? IOError { return errnoProblem(e.errnoCode) }
    if case ChannelError.connectTimeout(let t) = error as? ChannelError ?? .ioOnClosedChannel {
        return Phrase("no answer within %1$@ s", String(t.nanoseconds / 1_000_000_000))
    }
    return Phrase(verbatim: "\(error)")
}

extension PeerAddress {
    /// A socket address, with the scope id for IPv6 link-local addresses.
    func socketAddress() throws -> SocketAddress {
        if isIPv6 {
            var sin6 = sockaddr_in6()
            sin6.sin6_family = sa_family_t(AF_INET6)
            sin6.sin6_port = in_port_t(UInt16(port).bigEndian)
            guard inet_pton(AF_INET6, ip, &sin6.sin6_addr) == 1 else { throw NodeError(.invalidInput, Phrase("%1$@ is not an IPv6 address", ip)) }
            if isLinkLocal { sin6.sin6_scope_id = UInt32(interfaceIndex) }
            return SocketAddress(sin6, host: ip)
        }
        return try SocketAddress(ipAddress: ip, port: port)
    }
}
