import Foundation
import NearcardProcess

#if canImport(Glibc)
    import Glibc
#endif

/// Throw-away network namespaces for a simulation, each with its own D-Bus system bus and
/// avahi-daemon (the design's test infrastructure, made available to users). Avahi in a namespace is
/// restricted (`allow-interfaces`) to that namespace's own interfaces, so nothing a simulation does
/// reaches the machine's real network. Everything is named after `tag` and removed by `tearDown()`.
public final class NetLab: @unchecked Sendable {
    /// One namespace with its daemons.
    public struct Space: Sendable {
        public let name: String
        public let directory: String
        public let interface: String
        public let ipv4: String?
        /// Its IPv6 address on the veth (an IPv6-only pair's), nil otherwise (link-local ones aside).
        public var ipv6: String? = nil
        /// Which IP families the namespace has.
        public var family: Family = .both
        /// Whether its avahi-daemon publishes the namespace's own host name with its addresses (a stock
        /// configuration does; `publish-addresses=no` is the doctor's privacy fix).
        public var publishesAddresses = true
        /// The environment a program in the namespace needs to reach its avahi-daemon.
        public var environment: [String: String] { ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=\(directory)/system_bus_socket"] }
        /// The command prefix that runs a program inside it.
        public var prefix: [String] { [NetLab.tool("ip"), "netns", "exec", name] }
        /// The prefix that runs a program inside it with its avahi-daemon reachable.
        public var execPrefix: [String] { prefix + ["/usr/bin/env"] + environment.map { "\($0)=\($1)" } }
    }

    /// The IP families a namespace has: both (the usual laptop), IPv4 only (IPv6 disabled by sysctl, as
    /// on many servers), or IPv6 only (no IPv4 address on its link; loopback keeps 127.0.0.1, as Linux's does).
    public enum Family: String, Sendable, CaseIterable {
        case both, ipv4Only, ipv6Only
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    let tag: String
    let root: String
    private var spaces: [Space] = []
    private var hub: String?
    private var daemons: [ChildProcess] = []
    private let lock = NSLock()

    /// Whether the daemons' configuration and logs stay after the tear-down (`simulate --keep`).
    let keepFiles: Bool

    /// `root`: where configuration, sockets and logs go; `keepFiles`: left there after the tear-down.
    public init(tag: String, root: String, keepFiles: Bool = false) {
        self.tag = tag
        self.root = root
        self.keepFiles = keepFiles
    }

    /// What a simulation with namespaces needs, or why it cannot run here.
    public static func checkPrerequisites() -> String? {
        if geteuid() != 0 { return "network namespaces need root (run as root, or use --no-discovery to simulate on loopback without them)" }
        for name in ["ip", "dbus-daemon", "avahi-daemon", "unshare", "mount"] where tool(name) == name {
            return "\(name) is not installed (apt-get install iproute2 dbus avahi-daemon util-linux mount)"
        }
        return nil
    }

    /// The absolute path of a system tool (posix_spawn needs one), or the bare name when not found.
    public static func tool(_ name: String) -> String {
        for dir in ["/usr/sbin", "/usr/bin", "/sbin", "/bin"] where access("\(dir)/\(name)", X_OK) == 0 { return "\(dir)/\(name)" }
        return name
    }

    func run(_ argv: [String]) throws {
        let (code, output) = try ChildProcess.run([Self.tool(argv[0])] + argv.dropFirst())
        guard code == 0 else { throw Failure(description: "\(argv.joined(separator: " ")) failed: \(output.trimmingCharacters(in: .whitespacesAndNewlines))") }
    }

    /// One namespace whose avahi uses its loopback (all nodes of a simulation on one "machine").
    public func loopbackSpace(publishesAddresses: Bool = true) throws -> Space {
        let name = "\(tag)l"
        try run(["ip", "netns", "add", name])
        var space = Space(name: name, directory: "\(root)/\(name)", interface: "lo", ipv4: "127.0.0.1")
        space.publishesAddresses = publishesAddresses
        record(space)
        try run(["ip", "-n", name, "link", "set", "lo", "up"])
        try startDaemons([space])
        return space
    }

    /// Two namespaces joined by a veth pair, as two laptops on one cable: interfaces `nc-NAME`, addresses
    /// 10.77.0.1 and 10.77.0.2/24 (and IPv6 link-local ones, once duplicate-address detection is done),
    /// each namespace with its own avahi-daemon on its end of the pair. Names stay under 12 characters
    /// (an interface name holds 15).
    /// With `family` `.ipv4Only` IPv6 is disabled in both (`disable_ipv6`, loopback included) and avahi
    /// uses IPv4 alone; with `.ipv6Only` the link has no IPv4 addresses (fd77::1 and fd77::2/64 instead)
    /// and avahi uses IPv6 alone.
    public func pairedSpaces(family: Family = .both) throws -> (Space, Space) {
        let names = ["\(tag)a", "\(tag)b"]
        var made: [Space] = []
        for (i, name) in names.enumerated() {
            try run(["ip", "netns", "add", name])
            var space = Space(
                name: name, directory: "\(root)/\(name)", interface: "nc-\(name)",
                ipv4: family == .ipv6Only ? nil : "10.77.0.\(i + 1)")
            space.ipv6 = family == .ipv6Only ? "fd77::\(i + 1)" : nil
            space.family = family
            record(space)
            if family == .ipv4Only {
                // Before the veth exists, so that it is made without IPv6 too ("default").
                try run([
                    "ip", "netns", "exec", name, "sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=1",
                    "net.ipv6.conf.default.disable_ipv6=1", "net.ipv6.conf.lo.disable_ipv6=1",
                ])
            }
            try run(["ip", "-n", name, "link", "set", "lo", "up"])
            made.append(space)
        }
        try run(["ip", "link", "add", made[0].interface, "netns", made[0].name, "type", "veth", "peer", "name", made[1].interface, "netns", made[1].name])
        for space in made {
            if let ipv4 = space.ipv4 { try run(["ip", "-n", space.name, "addr", "add", "\(ipv4)/24", "dev", space.interface]) }
            if let ipv6 = space.ipv6 { try run(["ip", "-n", space.name, "-6", "addr", "add", "\(ipv6)/64", "dev", space.interface, "nodad"]) }
            try run(["ip", "-n", space.name, "link", "set", space.interface, "up"])
        }
        // Two laptops on a cable have their IPv6 link-local addresses before anyone starts a node:
        // wait for duplicate-address detection to finish on both ends (about 1–2 s), so the daemons
        // and the nodes start on a link whose addresses are settled.
        let deadline = Date().addingTimeInterval(10)
        for space in made where family != .ipv4Only {
            while Date() < deadline {
                let (_, out) = try ChildProcess.run([Self.tool("ip"), "-n", space.name, "-6", "addr", "show", "dev", space.interface])
                if out.contains("fe80:") && !out.contains("tentative") { break }
                usleep(50_000)
            }
        }
        try startDaemons(made)
        return (made[0], made[1])
    }

    /// `count` namespaces joined by a bridge (in a hub namespace of its own), each with an address
    /// 10.99.x.y/16 on its interface `sim0` and its own avahi-daemon on that interface.
    public func bridgedSpaces(_ count: Int, progress: (Int) -> Void = { _ in }) throws -> [Space] {
        let hubName = "\(tag)h"
        try run(["ip", "netns", "add", hubName])
        lock.withLock { hub = hubName }
        try run(["ip", "-n", hubName, "link", "add", "br0", "type", "bridge"])
        try run(["ip", "-n", hubName, "link", "set", "br0", "up"])
        var made: [Space] = []
        for i in 0..<count {
            let name = "\(tag)n\(i)"
            try run(["ip", "netns", "add", name])
            let ip = "10.99.\(i / 250).\(i % 250 + 1)"
            let space = Space(name: name, directory: "\(root)/\(name)", interface: "sim0", ipv4: ip)
            record(space)
            try run(["ip", "-n", name, "link", "set", "lo", "up"])
            try run(["ip", "link", "add", "sim0", "netns", name, "type", "veth", "peer", "name", "p\(i)", "netns", hubName])
            try run(["ip", "-n", hubName, "link", "set", "p\(i)", "master", "br0", "up"])
            try run(["ip", "-n", name, "addr", "add", "\(ip)/16", "dev", "sim0"])
            try run(["ip", "-n", name, "link", "set", "sim0", "up"])
            made.append(space)
        }
        // The daemons start in parallel (avahi takes about a second to announce itself).
        for start in stride(from: 0, to: made.count, by: 32) {
            try startDaemons(Array(made[start..<min(start + 32, made.count)]))
            progress(min(start + 32, made.count))
        }
        return made
    }

    private func record(_ space: Space) {
        lock.withLock { spaces.append(space) }
    }

    private func startDaemons(_ group: [Space]) throws {
        for space in group {
            let dir = space.directory
            try FileManager.default.createDirectory(atPath: dir + "/run-avahi", withIntermediateDirectories: true)
            try """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>system</type>
              <listen>unix:path=\(dir)/system_bus_socket</listen>
              <auth>EXTERNAL</auth>
              <!-- Every node of a simulation is one user's connection: the bus's default of 256 per user would leave the rest without avahi-daemon. -->
              <limit name="max_connections_per_user">4096</limit>
              <limit name="max_completed_connections">4096</limit>
              <limit name="max_match_rules_per_connection">4096</limit>
              <policy context="default">
                <allow user="*"/>
                <allow own="*"/>
                <allow send_destination="*"/>
                <allow receive_sender="*"/>
              </policy>
            </busconfig>
            """.write(toFile: dir + "/dbus.conf", atomically: true, encoding: .utf8)
            try """
            [server]
            host-name=\(space.name)
            use-ipv4=\(space.family == .ipv6Only ? "no" : "yes")
            use-ipv6=\(space.family == .ipv4Only ? "no" : "yes")
            allow-interfaces=\(space.interface)
            enable-dbus=yes
            ratelimit-interval-usec=1000000
            ratelimit-burst=1000
            cache-entries-max=32768
            [wide-area]
            enable-wide-area=no
            [publish]
            publish-addresses=\(space.publishesAddresses ? "yes" : "no")
            publish-hinfo=no
            publish-workstation=no
            [reflector]
            enable-reflector=no
            """.write(toFile: dir + "/avahi-daemon.conf", atomically: true, encoding: .utf8)
            let dbus = try ChildProcess(
                space.prefix + [Self.tool("dbus-daemon"), "--config-file=\(dir)/dbus.conf", "--nofork", "--nopidfile"],
                log: dir + "/dbus.log", pipes: false)
            lock.withLock { daemons.append(dbus) }
        }
        for space in group {
            let dir = space.directory
            try waitFor("the D-Bus socket of \(space.name)", log: dir + "/dbus.log") { access(dir + "/system_bus_socket", F_OK) == 0 }
        }
        // avahi-daemon keeps its pid file and socket in /run/avahi-daemon: give each a private one.
        try FileManager.default.createDirectory(atPath: "/run/avahi-daemon", withIntermediateDirectories: true)
        for space in group {
            let dir = space.directory
            let script =
                "mount --bind '\(dir)/run-avahi' /run/avahi-daemon && exec \(Self.tool("avahi-daemon")) --no-drop-root --no-chroot --no-rlimits -f '\(dir)/avahi-daemon.conf'"
            let avahi = try ChildProcess(
                space.prefix + [Self.tool("unshare"), "-m", "/bin/sh", "-c", script],
                environment: ProcessInfo.processInfo.environment.merging(space.environment) { $1 },
                log: dir + "/avahi.log", pipes: false)
            lock.withLock { daemons.append(avahi) }
        }
        for space in group {
            let dir = space.directory
            try waitFor("avahi-daemon in \(space.name)", log: dir + "/avahi.log") {
                ((try? String(contentsOfFile: dir + "/avahi.log", encoding: .utf8)) ?? "").contains("Server startup complete")
            }
        }
    }

    private func waitFor(_ what: String, log: String, timeout: TimeInterval = 10, _ ready: () -> Bool) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if ready() { return }
            usleep(20_000)
        }
        let tail = ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").suffix(3).joined(separator: " | ")
        throw Failure(description: "\(what) did not start within \(Int(timeout)) s: \(tail)")
    }

    /// Stops every daemon and process left in the namespaces and deletes them, by name. Safe to call twice.
    public func tearDown() {
        let (all, hubName, running) = lock.withLock { () -> ([Space], String?, [ChildProcess]) in
            defer {
                spaces = []
                hub = nil
                daemons = []
            }
            return (spaces, hub, daemons)
        }
        for d in running { d.signal(SIGTERM) }
        for d in running { d.stop(after: 2, signal: nil) }
        for name in all.map(\.name) + (hubName.map { [$0] } ?? []) {
            // Anything still inside (nodes, stray children), then the namespace itself.
            if let (code, pids) = try? ChildProcess.run([Self.tool("ip"), "netns", "pids", name]), code == 0 {
                for pid in pids.split(whereSeparator: \.isWhitespace).compactMap({ pid_t($0) }) { kill(pid, SIGKILL) }
            }
            _ = try? ChildProcess.run([Self.tool("ip"), "netns", "del", name])
        }
        if !keepFiles { for space in all { try? FileManager.default.removeItem(atPath: space.directory) } }
    }

    deinit { tearDown() }
}
