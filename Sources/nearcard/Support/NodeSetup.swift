import Foundation
import NearcardCrypto
import NearcardDiscovery
import NearcardModel
import NearcardNode

#if canImport(Glibc)
    import Glibc
#endif

/// Shared set-up of the LAN commands: identity, database, and how outcomes are shown.
enum NodeSetup {
    /// The node, built once per command: identity, database, how incoming requests are decided.
    static func context(
        _ global: GlobalOptions, consent: any ConsentProvider, events: EventBus = EventBus(), limits: NodeLimits = NodeLimits(),
        requiredFields: Set<CardField> = [], nodeName: String? = nil, webhook: Webhook? = nil, serving: Bool = false
    ) throws -> NodeConfiguration {
        let identity = try global.identity()
        let keys = KeysOutOfReach.hold(try global.unlockIdentity())
        let storeName = (try? global.resolvedHome.storeName()) ?? nil
        let book = try global.database(serving: serving) { event in
            events.emit(.storeConnection(lost: event == .connectionLost, store: storeName ?? "the store"))
        }
        let name = nodeName ?? global.environment["NEARCARD_NODE_NAME"] ?? ProcessInfo.processInfo.hostName
        return NodeConfiguration(
            keys: keys, identity: identity, book: book, consent: consent, events: events, limits: limits,
            requiredFields: requiredFields, nodeName: name, webhook: webhook)
    }

    /// Reads an allowlist: one DID per line; blank lines and # comments ignored.
    static func allowlist(_ path: String) throws -> Set<String> {
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else {
            throw CLIError(.malformedInput, t("cannot read the allowlist %1$@", path))
        }
        var dids = Set<String>()
        for (n, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)[0].trimmingCharacters(in: .whitespaces)
            if line.isEmpty { continue }
            do { _ = try DIDKey(parsing: line) } catch {
                throw CLIError(.malformedInput, t("%1$@ line %2$@: %3$@", path, String(n + 1), error.message))
            }
            dids.insert(line)
        }
        return dids
    }

    /// A serving node holds a socket per session: raise the open-file limit to the hard limit, so
    /// `--max-sessions` above the usual soft limit of 1024 works without `ulimit -n`.
    static func raiseOpenFileLimit() {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        limit.rlim_cur = limit.rlim_max
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }

    /// SIGINT and SIGTERM (Ctrl-C, `kill`, systemd's stop) as a stream, instead of killing the process.
    /// A plain handler writes the signal number to a pipe and a thread turns that into stream elements:
    /// signals may arrive on any thread (SwiftNIO's, the cooperative pool's), so masking them is no option.
    static func interrupts() -> AsyncStream<Int32> {
        let (stream, continuation) = AsyncStream.makeStream(of: Int32.self)
        Interrupts.shared.add(continuation)
        return stream
    }

}
