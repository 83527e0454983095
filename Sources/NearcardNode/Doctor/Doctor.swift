internal import CLibC
import Foundation
import NearcardAddressBook
import NearcardCrypto
public import NearcardDiscovery
import NearcardModel
package import NearcardStore

#if canImport(Glibc)
    import Glibc
#endif

/// `nearcard doctor`: why this machine may not see other laptops, or they it. Each check names what it
/// found and the command that fixes it; the last ones test the node's announcement end to end (publish a
/// probe, browse for it, connect to it at each advertised address, ask for it by mDNS on each interface).
public enum Doctor {
    public struct Options: Sendable {
        package var home: NearcardHome
        /// The book when it is not the home's SQLite file (`--store`).
        package var store: StoreLocation?
        /// The TCP port `nearcard listen` would use.
        package var port: Int
        package var filter: InterfaceFilter
        package var environment: [String: String]
        /// How long to wait for the probe to be announced and seen back.
        package var seconds: Double

        /// Throws when the store the home names cannot be read (`--store`, `$NEARCARD_STORE`).
        public init(home: Home, port: Int = 7447, filter: InterfaceFilter = InterfaceFilter(), seconds: Double = 5) throws(NodeError) {
            self.home = home.directory
            self.store = try home.location()
            self.port = port
            self.filter = filter
            self.environment = home.environment
            self.seconds = seconds
        }
    }

    /// The probe's service type: not `_nearcard._tcp`, so no Nearcard node lists it as a peer.
    package static let probeServiceType = "_nearcard-probe._tcp"

    /// Runs every check, handing each to `report` as it completes; returns them all.
    public static func run(_ o: Options, report: @Sendable (DoctorCheck) -> Void = { _ in }) async -> [DoctorCheck] {
        var all: [DoctorCheck] = []
        func add(_ c: DoctorCheck) {
            all.append(c)
            report(c)
        }
        let home = checkHome(o.home)
        add(home)
        let identity =
            home.status == .problem && !FileManager.default.fileExists(atPath: o.home.path)
            ? (DoctorCheck("identity", .skipped, "no home to look in"), nil) : checkIdentity(o.home)
        add(identity.0)
        if let store = o.store, store.isPostgres {
            add(checkSharedStore(store))
        } else {
            add(
                home.status == .problem && !FileManager.default.fileExists(atPath: o.home.path)
                    ? DoctorCheck("database", .skipped, "no home to look in") : checkDatabase(o.home, store: o.store))
        }
        add(checkClock())
        for c in await checkAddressBooks(o) { add(c) }
        let bus = checkBus(o.environment)
        add(bus)
        var discovery: AvahiDiscovery?
        if bus.status == .problem {
            add(DoctorCheck("avahi", .skipped, "needs the D-Bus system bus"))
        } else {
            do throws(DiscoveryError) {
                discovery = try AvahiDiscovery()
                add(DoctorCheck("avahi", .ok, "avahi-daemon answers"))
                add(AvahiPrivacy.check(hostName: discovery?.hostName))
            } catch {
                add(
                    DoctorCheck(
                        "avahi", .problem, error.message,
                        fix: "sudo systemctl start avahi-daemon   (not installed: sudo apt install avahi-daemon)"))
            }
        }
        let (interfaces, usable) = checkInterfaces(o.filter)
        add(interfaces)
        let port = NetworkProbe.portState(o.port)
        var ownNodeOnPort = false
        let holder = port == .inUse ? NetworkProbe.listener(onPort: o.port) : nil
        if holder?.command == "nearcard" {
            ownNodeOnPort = true
        } else if port == .inUse, holder == nil, let discovery, identity.1 != nil, let key = presenceKey(o) {
            ownNodeOnPort = await ownNode(discovery, presenceKey: key, port: o.port, filter: o.filter, seconds: 3)
        }
        switch port {
        case .free:
            add(DoctorCheck("port", .ok, "TCP port \(o.port) is free for nearcard listen"))
        case .inUse where ownNodeOnPort:
            add(DoctorCheck("port", .ok, "your node\(holder.map { " (pid \($0.pid))" } ?? "") is listening on TCP port \(o.port)"))
        case .inUse:
            let who = holder.map { "\($0.command) (pid \($0.pid))" } ?? "another program"
            add(
                DoctorCheck(
                    "port", .problem, "TCP port \(o.port) is in use by \(who)",
                    fix: "see which: ss -ltnp 'sport = :\(o.port)'; or listen on another port: nearcard listen --port \(Self.freePort(besides: o.port))"))
        case .refused(let why):
            add(DoctorCheck("port", .problem, "TCP port \(o.port) cannot be used: \(why)", fix: "listen on a port above 1023: nearcard listen --port 7447"))
        }
        guard let discovery else {
            for name in ["announce", "tcp", "mdns"] { add(DoctorCheck(name, .skipped, "needs avahi-daemon")) }
            return all
        }
        guard interfaces.status != .problem else {
            for name in ["announce", "tcp", "mdns"] { add(DoctorCheck(name, .skipped, "needs an interface discovery can use")) }
            return all
        }
        for c in await selfTest(discovery, o, port: port == .free || ownNodeOnPort ? o.port : 0, listen: port == .free, usable: usable) { add(c) }
        return all
    }

    // MARK: files

    static func checkHome(_ home: NearcardHome) -> DoctorCheck {
        var st = stat()
        guard stat(home.path, &st) == 0 else {
            if errno == ENOENT {
                return DoctorCheck("home", .problem, "no Nearcard home at \(home.path) yet", fix: "nearcard init --name \"Your Name\"")
            }
            return DoctorCheck("home", .problem, "\(home.path) cannot be read: \(String(cString: strerror(errno)))", fix: "ls -ld \(home.path)")
        }
        let mode = st.st_mode & 0o7777
        let shown = String(mode, radix: 8)
        guard st.st_mode & S_IFMT == S_IFDIR else {
            return DoctorCheck("home", .problem, "\(home.path) is not a directory", fix: "mv \(home.path) \(home.path).old")
        }
        if st.st_uid != geteuid() {
            return DoctorCheck(
                "home", .problem, "\(home.path) belongs to another user (uid \(st.st_uid))",
                fix: "sudo chown -R \"$(id -un)\": \(home.path)   (or use a home of your own: --home DIR)")
        }
        if mode & 0o022 != 0 {
            return DoctorCheck(
                "home", .problem, "\(home.path) can be changed by other users (mode 0\(shown)): they could replace your keys or contacts",
                fix: "chmod 700 \(home.path)")
        }
        if mode & 0o055 != 0 {
            return DoctorCheck("home", .warning, "\(home.path) can be read by other users (mode 0\(shown))", fix: "chmod 700 \(home.path)")
        }
        // Nothing could be stored there: no exchange, no contact, no message (root writes anything).
        if access(home.path, W_OK) != 0 {
            return DoctorCheck(
                "home", .problem, "\(home.path) cannot be written by you (mode 0\(shown)): nothing can be stored there",
                fix: "chmod 700 \(home.path)")
        }
        return DoctorCheck("home", .ok, "\(home.path) (mode 0\(shown))")
    }

    /// The identity check, and the fingerprint when the identity reads.
    static func checkIdentity(_ home: NearcardHome) -> (DoctorCheck, String?) {
        guard FileManager.default.fileExists(atPath: home.identityPath) else {
            return (DoctorCheck("identity", .problem, "no identity in \(home.path)", fix: "nearcard init --name \"Your Name\""), nil)
        }
        if let mode = FileIO.mode(home.secretKeysPath), mode & 0o077 != 0 {
            return (
                DoctorCheck(
                    "identity", .problem, "\(home.secretKeysPath) can be read by other users (mode 0\(String(mode, radix: 8)))",
                    fix: "chmod 600 \(home.secretKeysPath)"), nil
            )
        }
        do {
            let store = IdentityStore(home: home)
            let identity = try store.loadPublic()
            // The secret keys are what an exchange signs with: a damaged or foreign file stops every one.
            let sealed = try store.checkSecrets()
            return (
                DoctorCheck(
                    "identity", .ok, "\(identity.name ?? "(no name)"), fingerprint \(identity.fingerprint), secret keys \(sealed ? "sealed" : "readable")"),
                identity.fingerprint
            )
        } catch {
            return (
                DoctorCheck(
                    "identity", .problem, error.message,
                    fix: "restore \(home.path) from a backup, or start again elsewhere: nearcard init --home NEWDIR --name \"Your Name\""), nil
            )
        }
    }

    /// A fleet's PostgreSQL book: reachable, the schema this Nearcard knows, writable.
    static func checkSharedStore(_ store: StoreLocation) -> DoctorCheck {
        do {
            let db = try NearcardDatabase(location: store, busyTimeout: 2, retryWindow: 3)
            defer { db.close() }
            let integrity = try db.integrityCheck()
            guard integrity == "ok" else { return DoctorCheck("database", .problem, integrity, fix: "check that --store names the fleet's database") }
            try db.checkWritable()
            return DoctorCheck("database", .ok, "\(store): \(try db.contacts().count) contacts, schema current, writable")
        } catch {
            return DoctorCheck(
                "database", .problem, error.message,
                fix: "start the server or fix --store / $NEARCARD_STORE (password in $PGPASSWORD)")
        }
    }

    static func checkDatabase(_ home: NearcardHome, store: StoreLocation? = nil) -> DoctorCheck {
        var path = home.databasePath
        if case .sqlite(let other)? = store { path = other }
        guard FileManager.default.fileExists(atPath: path) else {
            return DoctorCheck("database", .ok, "no contact database yet (made on first use)")
        }
        let aside = "mv \(path) \(path).damaged   (keep that copy: your contacts are in it)"
        do {
            let db = try NearcardDatabase(path: path, busyTimeout: 2)
            let integrity = try db.integrityCheck()
            guard integrity == "ok" else { return DoctorCheck("database", .problem, "\(path) is damaged: \(integrity)", fix: aside) }
            try db.checkWritable()
            return DoctorCheck("database", .ok, "\(path): \(try db.contacts().count) contacts, integrity ok, writable")
        } catch {
            if error.kind == .io {
                return DoctorCheck("database", .problem, error.message, fix: "free some space, or make it writable: ls -l \(FileIO.directoryName(path))")
            }
            return DoctorCheck("database", .problem, "\(path) cannot be used: \(error.message)", fix: aside)
        }
    }

    /// Each CardDAV address book (docs/ADDRESSBOOK.md): the password readable, the server reached with
    /// a certificate this system trusts, the password accepted, the collection writable. A problem is a
    /// warning: exchanges work without the address book (contacts wait for it).
    static func checkAddressBooks(_ o: Options) async -> [DoctorCheck] {
        let db: NearcardDatabase?
        if let store = o.store {
            db = try? NearcardDatabase(location: store)
        } else if FileManager.default.fileExists(atPath: o.home.databasePath) {
            db = try? NearcardDatabase(path: o.home.databasePath, busyTimeout: 2)
        } else {
            db = nil
        }
        guard let db, let accounts = try? db.addressBooks() else { return [] }
        var checks: [DoctorCheck] = []
        for account in accounts {
            do throws(AddressBookError) {
                _ = try await AddressBookSync.connect(serverURL: account.url, username: account.username, credential: account.credential)
                let p = try? AddressBookSync.pending(account, database: db)
                let waiting = (p?.toWrite ?? 0) + (p?.toDelete ?? 0)
                checks.append(
                    DoctorCheck(
                        "addressbook", .ok,
                        "\(account.url): "
                            + (account.url.lowercased().hasPrefix("http://") ? "reached over plain http (this machine only)" : "certificate trusted")
                            + ", user \(account.username) accepted, writable"
                            + (waiting > 0 ? "; \(waiting) change(s) waiting for the next sync" : "")))
            } catch {
                let fix: String
                switch error.kind {
                case .credential, .unauthorized:
                    fix = "add it again with the right password: nearcard addressbook add \(account.url) --user \(account.username) --password-file FILE"
                case .certificate: fix = "renew the server's certificate, or add its CA to the system's trust store (update-ca-certificates)"
                case .readOnly: fix = "give \(account.username) write access on the server, or: nearcard addressbook remove \(account.url)"
                case .unreachable: fix = "start the server or check the network; contacts wait and go with the next sync"
                case .serverFull: fix = "free space on the server (or raise the account's quota); contacts wait and go with the next sync"
                case .serverFailed: fix = "see the server's log; contacts wait and go with the next sync"
                default: fix = "nearcard addressbook remove \(account.url), then add the address book's own URL"
                }
                checks.append(DoctorCheck("addressbook", .warning, error.message, fix: fix))
            }
        }
        return checks
    }

    // MARK: system

    /// The kernel's view of the clock: unsynchronized means no NTP has set it, and two laptops' clocks
    /// may be minutes apart (a payload over 300 s off is refused).
    static func checkClock() -> DoctorCheck {
        let state = nearcard_clock_state(nil)
        if state < 0 { return DoctorCheck("clock", .skipped, "the kernel does not say whether the clock is synchronized") }
        if state == nearcard_time_error() {
            return DoctorCheck(
                "clock", .warning, "the system clock is not synchronized (no NTP): exchanges fail when two clocks differ by more than 300 s",
                fix: clockFix)
        }
        return DoctorCheck("clock", .ok, "synchronized")
    }

    /// What sets the clock on this machine: systemd's timedatectl where systemd runs, else an NTP client
    /// from Debian's archive (chrony starts its own service when installed).
    static var clockFix: String {
        let systemd = FileManager.default.fileExists(atPath: "/run/systemd/system")
        let timedatectl = ["/usr/bin/timedatectl", "/bin/timedatectl"].contains { FileManager.default.isExecutableFile(atPath: $0) }
        return systemd && timedatectl
            ? Firewall.asRoot("timedatectl set-ntp true")
            : Firewall.asRoot("apt-get install chrony") + "   (an NTP client: this machine does not run systemd's)"
    }

    static func checkBus(_ environment: [String: String]) -> DoctorCheck {
        let address = environment["DBUS_SYSTEM_BUS_ADDRESS"] ?? "unix:path=/run/dbus/system_bus_socket"
        let first = address.split(separator: ";").first.map(String.init) ?? address
        guard first.hasPrefix("unix:"),
            let path = first.dropFirst(5).split(separator: ",")
                .first(where: { $0.hasPrefix("path=") }).map({ String($0.dropFirst(5)) })
        else {
            return DoctorCheck("dbus", .ok, "system bus at \(first) (not a socket path: not checked)")
        }
        if let problem = NetworkProbe.unixSocketProblem(path) {
            return DoctorCheck("dbus", .problem, "the D-Bus system bus does not answer at \(path) (\(problem))", fix: "sudo systemctl start dbus")
        }
        return DoctorCheck("dbus", .ok, "system bus at \(path)")
    }

    /// A port to suggest instead of `port`: the default, else the next ones that are free now — never
    /// 7448, the web app's (`nearcard ui`).
    static func freePort(besides port: Int) -> Int {
        ([7447] + Array(7449...7499)).first { $0 != port && NetworkProbe.portState($0) == .free } ?? 7449
    }

    /// The interfaces discovery would use, and the IPv4 addresses of those that can carry multicast.
    static func checkInterfaces(_ filter: InterfaceFilter) -> (DoctorCheck, [(name: String, ip: String)]) {
        let all = NetworkProbe.interfaces()
        var candidates = all.filter { $0.up && !$0.loopback && filter.permits($0.name) && !($0.ipv4.isEmpty && $0.ipv6.isEmpty) }
        // A machine on no network (or a test's namespace) can still exchange over loopback.
        if candidates.isEmpty { candidates = all.filter { $0.up && $0.loopback && filter.permits($0.name) && !$0.ipv4.isEmpty } }
        let excluded = all.filter { $0.up && !$0.loopback && !filter.permits($0.name) }.map(\.name)
        guard !candidates.isEmpty else {
            // Named with --interface: say which of those names is the trouble.
            if !filter.allow.isEmpty {
                let names = filter.allow.joined(separator: ", ")
                let missing = filter.unknownAllowed
                let what =
                    missing.isEmpty
                    ? "no interface named by --interface (\(names)) is up with an address"
                    : "no such network interface: \(missing.joined(separator: ", "))"
                return (DoctorCheck("interfaces", .problem, what, fix: "name an interface that is up: ip -brief address lists them"), [])
            }
            return (DoctorCheck("interfaces", .problem, "no network interface is up", fix: "connect to the network (ip -brief link shows the interfaces)"), [])
        }
        // Avahi uses an interface with the MULTICAST flag, or loopback (looped back either way).
        let withMulticast = candidates.filter { $0.multicast || $0.loopback }
        let noMulticast = candidates.filter { !$0.multicast && !$0.loopback }.map(\.name)
        let fixes = noMulticast.map { "sudo ip link set \($0) multicast on" }.joined(separator: "; ")
        let usable = withMulticast.flatMap { i in i.ipv4.map { (name: i.name, ip: $0) } }
        if withMulticast.isEmpty {
            return (
                DoctorCheck(
                    "interfaces", .problem,
                    "\(noMulticast.joined(separator: ", ")) \(noMulticast.count == 1 ? "has" : "have") no MULTICAST flag: discovery cannot use \(noMulticast.count == 1 ? "it" : "them")",
                    fix: fixes), usable
            )
        }
        let listed = withMulticast.map { "\($0.name) (\(($0.ipv4 + $0.ipv6).joined(separator: ", ")))" }.joined(separator: "; ")
        let leftOut = excluded.isEmpty ? "" : "; left out by default: \(excluded.joined(separator: ", ")) (--interface to use one)"
        if !noMulticast.isEmpty {
            return (
                DoctorCheck(
                    "interfaces", .warning, "discovery can use \(listed); not \(noMulticast.joined(separator: ", ")) (no MULTICAST flag)\(leftOut)", fix: fixes),
                usable
            )
        }
        return (DoctorCheck("interfaces", .ok, "discovery can use \(listed)\(leftOut)"), usable)
    }

    // MARK: end to end

    /// This home's presence key, when its store already holds one (doctor makes none).
    static func presenceKey(_ o: Options) -> [UInt8]? {
        let location = o.store ?? .sqlite(path: o.home.databasePath)
        if case .sqlite(let path) = location, !FileManager.default.fileExists(atPath: path) { return nil }
        guard let db = try? NearcardDatabase(location: location, busyTimeout: 2, retryWindow: 3) else { return nil }
        defer { db.close() }
        return (try? db.presenceKeyCreatedAt()) != nil ? try? db.presenceKey() : nil
    }

    /// Whether this home's node is announced on `port` (then the port is ours, not another program's):
    /// an announcement on that port whose presence tag this home's presence key made.
    static func ownNode(_ discovery: AvahiDiscovery, presenceKey: [UInt8], port: Int, filter: InterfaceFilter, seconds: Double) async -> Bool {
        func isOwn(_ p: DiscoveredPeer) -> Bool { p.port == port && p.txt.tag.map { Presence.matches($0, key: presenceKey) } == true }
        let found = try? await PeerBrowser.collect(discovery, filter: filter, seconds: seconds) { $0.contains(where: isOwn) }
        return found?.contains(where: isOwn) ?? false
    }

    /// Publishes a probe (answering on `port`, or an ephemeral port when 0), browses until it is seen,
    /// connects to it at each address it was resolved at, and asks for it by mDNS on each interface.
    static func selfTest(
        _ discovery: AvahiDiscovery, _ o: Options, port requested: Int, listen: Bool,
        usable: [(name: String, ip: String)]
    ) async -> [DoctorCheck] {
        var listener: Int32 = -1
        var port = requested
        if listen || requested == 0 {
            (listener, port) = NetworkProbe.listen(onPort: listen ? requested : 0)
            guard listener >= 0 else {
                return [
                    DoctorCheck("announce", .problem, "cannot open a TCP port to test with: \(String(cString: strerror(errno)))"),
                    DoctorCheck("tcp", .skipped, "needs the test port"), DoctorCheck("mdns", .skipped, "needs the announcement"),
                ]
            }
        }
        defer { if listener >= 0 { close(listener) } }
        let instance = "nearcard-doctor-\(String(UInt32.random(in: 0...UInt32.max), radix: 16))"
        let publication: any Announcement
        do {
            // As a node announces itself: under a random host name with this machine's addresses of its
            // own, so the probe is seen whatever avahi-daemon publishes for the machine (publish-addresses=no,
            // the privacy check's fix, publishes none).
            let host = PublishedHost(
                name: "nc-\(Hex.encode(Sodium.randomBytes(8))).local", addresses: PresenceAnnouncer.currentAddresses(interfaces: [], filter: o.filter))
            publication = try discovery.publish(
                instanceName: instance, port: port, txt: TXTRecord(tag: nil, name: nil), interfaces: [],
                serviceType: probeServiceType, host: host.addresses.isEmpty ? nil : host)
        } catch {
            return [
                DoctorCheck(
                    "announce", .problem, "avahi-daemon does not take an announcement: \(error.message)",
                    fix: "see avahi-daemon's log: journalctl -u avahi-daemon"),
                DoctorCheck("tcp", .skipped, "needs the announcement"), DoctorCheck("mdns", .skipped, "needs the announcement"),
            ]
        }
        defer { publication.withdraw() }
        let seen = await PeerBrowser.first(in: discovery, serviceType: probeServiceType, instance: instance, filter: o.filter, seconds: o.seconds)

        // TCP: at every address the probe was seen at, or (not seen) at each usable interface's address.
        let addresses = seen?.dialOrder ?? usable.map { PeerAddress(ip: $0.ip, port: port, interfaceName: $0.name, interfaceIndex: 0) }
        var failures: [String] = []
        for address in addresses {
            if let why = await Reachability.connectProblem(address, seconds: 2) { failures.append("\(address) (\(why))") }
        }
        // The verdict and its fix come from the packet filter this machine has (read once, if needed).
        let firewall = failures.isEmpty ? nil : Firewall.read()
        let tcpVerdict = firewall.map {
            Firewall.verdict($0, proto: "tcp", port: port, elsewhere: "ss -ltn 'sport = :\(port)'   (is something listening there?)")
        }
        let tcp: DoctorCheck
        if addresses.isEmpty {
            tcp = DoctorCheck("tcp", .skipped, "no address to connect to")
        } else if failures.count == addresses.count, let tcpVerdict {
            tcp = DoctorCheck(
                "tcp", .problem, "cannot connect to this machine on TCP port \(port) at \(failures.joined(separator: ", ")): \(tcpVerdict.cause)",
                fix: tcpVerdict.fix)
        } else if !failures.isEmpty, let tcpVerdict {
            tcp = DoctorCheck(
                "tcp", .warning, "TCP port \(port) answers, but not at \(failures.joined(separator: ", ")): \(tcpVerdict.cause)", fix: tcpVerdict.fix)
        } else {
            tcp = DoctorCheck("tcp", .ok, "TCP port \(port) answers at \(addresses.map(\.description).joined(separator: ", "))")
        }

        // mDNS: a query out of each interface, answered by this machine's own responder.
        var silent: [String] = []
        var answered: [String] = []
        for (name, ip) in usable {
            if await NetworkProbe.mdnsAnswers(instance: instance, serviceType: probeServiceType, via: ip, seconds: 2) {
                answered.append(name)
            } else {
                silent.append("\(name) (\(ip))")
            }
        }
        let mdnsVerdict =
            silent.isEmpty
            ? nil
            : Firewall.verdict(
                firewall ?? Firewall.read(), proto: "udp", port: 5353,
                elsewhere: "grep -E '^(allow|deny)-interfaces' /etc/avahi/avahi-daemon.conf   (does avahi-daemon serve that interface?)")
        let mdns: DoctorCheck
        if usable.isEmpty {
            mdns = DoctorCheck("mdns", .skipped, "no interface with an IPv4 address and multicast to ask on")
        } else if answered.isEmpty, let mdnsVerdict {
            mdns = DoctorCheck(
                "mdns", .problem, "mDNS queries on \(silent.joined(separator: ", ")) go unanswered: \(mdnsVerdict.cause)", fix: mdnsVerdict.fix)
        } else if !silent.isEmpty, let mdnsVerdict {
            mdns = DoctorCheck(
                "mdns", .warning, "mDNS answers on \(answered.joined(separator: ", ")) but not on \(silent.joined(separator: ", ")): \(mdnsVerdict.cause)",
                fix: mdnsVerdict.fix)
        } else {
            mdns = DoctorCheck("mdns", .ok, "mDNS answers on \(answered.joined(separator: ", "))")
        }

        let announce: DoctorCheck
        if let seen {
            announce = DoctorCheck("announce", .ok, "announced and seen back at \(seen.dialOrder.map(\.description).joined(separator: ", "))")
        } else if mdns.status == .problem {
            announce = DoctorCheck("announce", .skipped, "a test announcement was not seen back: mDNS does not get through (the mdns check)")
        } else {
            announce = DoctorCheck(
                "announce", .problem, "a test announcement was not seen back within \(Int(o.seconds)) s",
                fix: "see avahi-daemon's log: journalctl -u avahi-daemon; its allow-interfaces (/etc/avahi/avahi-daemon.conf) may leave out your network")
        }
        return [announce, tcp, mdns]
    }

}
