import ArgumentParser
import Foundation
import Logging
import NearcardCrypto
import NearcardDiscovery
import NearcardMetrics
import NearcardModel
import NearcardNode

/// The options of a serving node (listen, bot).
struct NodeOptions: ParsableArguments {
    @Option(parsing: .unconditional, help: ArgumentHelp(t("TCP port (0 picks a free one).")))
    var port: Int = NearcardNode.defaultPort

    @Option(name: .customLong("interface"), help: ArgumentHelp(t("Publish and browse only on this interface; repeatable."), valueName: "IF"))
    var interfaces: [String] = []

    @Option(
        name: .customLong("exclude-interface"),
        help: ArgumentHelp(t("Never use this interface (in addition to VPN and container bridges); repeatable."), valueName: "IF"))
    var excluded: [String] = []

    @Flag(
        help: ArgumentHelp(
            t(
                "Announce no name: a random instance name and a tag only your contacts recognise. Without it, your display name is announced to everyone on the LAN (as the instance name and in TXT)."
            )
        ))
    var `private` = false

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            t(
                "Seconds between two announcements of this node: its presence tag, SRV host name and (--private) instance name are renewed at start and then every SECONDS (at least 1, at most 900: 15 minutes, PROTOCOL.md §3)."
            ),
            valueName: "SECONDS"))
    var presenceRotation: Double = NodeRuntime.Options.defaultPresenceRotation

    @Option(
        help: ArgumentHelp(
            t(
                "Use only this one address of this machine: listen on it, connect from it, announce only it (default: every address; a simulation gives each node its own, docs/PERFORMANCE.md)."
            ),
            valueName: "IP"))
    var address: String?

    @Flag(help: ArgumentHelp(t("Do not publish over DNS-SD; peers reach you by host:port only.")))
    var noDiscovery = false

    @Option(parsing: .unconditional, help: ArgumentHelp(t("Seconds a person (or program) has to decide on a request.")))
    var consentTimeout: Double = 60

    @Option(
        help: ArgumentHelp(
            t("This node's name in the exchange log of a store several bots share (default: $NEARCARD_NODE_NAME, else the host name)."), valueName: "NAME"))
    var nodeName: String?

    @Option(
        help: ArgumentHelp(
            t(
                "Log each event to stderr as one key=value line at or above this level: trace, debug, info, notice, warning, error, critical (bot: info; listen: no log)."
            ),
            valueName: "LEVEL"))
    var logLevel: Logger.Level?

    @Option(
        help: ArgumentHelp(
            t("Serve Prometheus metrics at http://HOST:PORT/metrics (e.g. 127.0.0.1:9464; docs/OPERATIONS.md lists them)."), valueName: "HOST:PORT")
    )
    var metrics: String?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(t("On SIGTERM (systemd's stop): seconds the sessions in flight get to finish before the node exits."), valueName: "SECONDS"))
    var grace: Double = 10

    @Option(parsing: .unconditional, help: ArgumentHelp(t("Sessions open at once (default 256).")))
    var maxSessions: Int?

    @Option(parsing: .unconditional, help: ArgumentHelp(t("Sessions open at once from one address (default 8).")))
    var maxSessionsPerAddress: Int?

    @Option(parsing: .unconditional, help: ArgumentHelp(t("New connections per address per minute (default 120).")))
    var connectionsPerMinute: Int?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            t(
                "Connections that end before starting an exchange (port scans, probes, idle sockets) are summed up in one line every SECONDS, not shown one by one."
            ),
            valueName: "SECONDS"))
    var probeSummary: Double = 30

    func validate() throws {
        if !(0...65535).contains(port) { throw ValidationError(t("--port must be 0…65535")) }
        if let address, NodeRuntime.Options.addressProblem(address) != nil {
            throw ValidationError("--address \(address): \(NodeRuntime.Options.addressProblem(address)!)")
        }
        if let metrics {
            do { _ = try MetricsEndpoint.parse(metrics) } catch { throw ValidationError(t("--metrics %1$@ is not HOST:PORT (e.g. 127.0.0.1:9464)", metrics)) }
        }
        if !(grace >= 0 && grace <= 600) { throw ValidationError(t("--grace must be between 0 and 600 seconds")) }
        if !(consentTimeout > 0 && consentTimeout <= 3600) { throw ValidationError(t("--consent-timeout must be more than 0 and at most 3600 seconds")) }
        if !(probeSummary >= 1 && probeSummary <= 3600) { throw ValidationError(t("--probe-summary must be between 1 and 3600 seconds")) }
        // §3: a period SHOULD NOT exceed 900 s (a longer one keeps a tag, so a person, linkable for longer).
        if !(presenceRotation >= 1 && presenceRotation <= 900) {
            throw ValidationError(t("--presence-rotation must be between 1 and 900 seconds (a longer period keeps this node linkable longer)"))
        }
        for (name, v, top) in [
            ("--max-sessions", maxSessions, 100_000), ("--max-sessions-per-address", maxSessionsPerAddress, 100_000),
            ("--connections-per-minute", connectionsPerMinute, 1_000_000),
        ] {
            if let v, !(1...top).contains(v) { throw ValidationError(t("%1$@ must be between 1 and %2$@", name, String(top))) }
        }
    }

    func limits() -> NodeLimits {
        var l = NodeLimits()
        l.consentTimeout = consentTimeout
        if let maxSessions { l.maximumSessions = maxSessions }
        if let maxSessionsPerAddress { l.maximumSessionsPerAddress = maxSessionsPerAddress }
        if let connectionsPerMinute { l.connectionsPerAddressPerMinute = connectionsPerMinute }
        l.probeSummaryInterval = probeSummary
        return l
    }

    var runtime: NodeRuntime.Options {
        var o = NodeRuntime.Options()
        o.port = port
        o.discovery = !noDiscovery
        o.isPrivate = `private`
        o.presenceRotation = presenceRotation
        o.metrics = metrics != nil
        o.interfaces = interfaces
        o.excludedInterfaces = excluded
        o.address = address
        return o
    }
}
