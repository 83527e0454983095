internal import CLibC
import Foundation
import NearcardAddressBook
import NearcardCrypto
public import NearcardDiscovery
import NearcardModel
package import NearcardStore
import NearcardText

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
            ? (DoctorCheck("identity", .skipped, Phrase("no home to look in")), nil) : checkIdentity(o.home)
        add(identity.0)
        if let store = o.store, store.isPostgres {
            add(checkSharedStore(store))
        } else {
            add(
                home.status == .problem && !FileManager.default.fileExists(atPath: o.home.path)
                    ? DoctorCheck("database", .skipped, Phrase("no home to look in")) : checkDatabase(o.home, store: o.store))
        }
        add(checkClock())
        for c in await checkAddressBooks(o) { add(c) }
        let bus = checkBus(o.environment)
        add(bus)
        var discovery: AvahiDiscovery?
        if bus.status == .problem {
            add(DoctorCheck("avahi", .skipped, Phrase("needs the D-Bus system bus")))
        } else {
            do throws(DiscoveryError) {
                discovery = try AvahiDiscovery()
                add(DoctorCheck("avahi", .ok, Phrase("avahi-daemon answers")))
                add(AvahiPrivacy.check(hostName: discovery?.hostName))
            } catch {
                add(
                    DoctorCheck(
                        "avahi", .problem, error.phrase,
                        fix: Phrase("sudo systemctl start avahi-daemon   (not installed: sudo apt install avahi-daemon)")))
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
            add(DoctorCheck("port", .ok, Phrase("TCP port %1$@ is free for nearcard listen", String(o.port))))
        case .inUse where ownNodeOnPort:
            add(
                DoctorCheck(
                    "port", .ok,
                    holder.map { Phrase("your node (pid %1$@) is listening on TCP port %2$@", String($0.pid), String(o.port)) }
                        ?? Phrase("your node is listening on TCP port %1$@", String(o.port))))
        case .inUse:
            add(
                DoctorCheck(
                    "port", .problem,
                    holder.map { Phrase("TCP port %1$@ is in use by %2$@ (pid %3$@)", String(o.port), $0.command, String($0.pid)) }
                        ?? Phrase("TCP port %1$@ is in use by another program", String(o.port)),
                    fix: Phrase(
                        "see which: %1$@; or listen on another port: %2$@", "ss -ltnp 'sport = :\(o.port)'",
                        "nearcard listen --port \(Self.freePort(besides: o.port))")))
        case .refused(let why):
            add(
                DoctorCheck(
                    "port", .problem, Phrase("TCP port %1$@ cannot be used: %2$@", String(o.port), why),
                    fix: Phrase("listen on a port above 1023: nearcard listen --port 7447")))
        }
        guard let discovery else {
            for name in ["announce", "tcp", "mdns"] { add(DoctorCheck(name, .skipped, Phrase("needs avahi-daemon"))) }
            return all
        }
        guard interfaces.status != .problem else {
            for name in ["announce", "tcp", "mdns"] { add(DoctorCheck(name, .skipped, Phrase("needs an interface discovery can use"))) }
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
                return DoctorCheck(
                    "home", .problem, Phrase("no Nearcard home at %1$@ yet", home.path), fix: Phrase(verbatim: "nearcard init --name \"Your Name\""))
            }
            return DoctorCheck(
                "home", .problem, Phrase("%1$@ cannot be read: %2$@", home.path, String(cString: strerror(errno))),
                fix: Phrase(verbatim: "ls -ld \(home.path)"))
        }
        let mode = st.st_mode & 0o7777
        let shown = String(mode, radix: 8)
        guard st.st_mode & S_IFMT == S_IFDIR else {
            return DoctorCheck("home", .problem, Phrase("%1$@ is not a directory", home.path), fix: Phrase(verbatim: "mv \(home.path) \(home.path).old"))
        }
        if st.st_uid != geteuid() {
            return DoctorCheck(
                "home", .problem, Phrase("%1$@ belongs to another user (uid %2$@)", home.path, String(st.st_uid)),
                fix: Phrase("%1$@   (or use a home of your own: --home DIR)", "sudo chown -R \"$(id -un)\": \(home.path)"))
        }
        if mode & 0o022 != 0 {
            return DoctorCheck(
                "home", .problem, Phrase("%1$@ can be changed by other users (mode 0%2$@): they could replace your keys or contacts", home.path, shown),
                fix: Phrase(verbatim: "chmod 700 \(home.path)"))
        }
        if mode & 0o055 != 0 {
            return DoctorCheck(
                "home", .warning, Phrase("%1$@ can be read by other users (mode 0%2$@)", home.path, shown), fix: Phrase(verbatim: "chmod 700 \(home.path)"))
        }
        // Nothing could be stored there: no exchange, no contact, no message (root writes anything).
        if access(home.path, W_OK) != 0 {
            return DoctorCheck(
                "home", .problem, Phrase("%1$@ cannot be written by you (mode 0%2$@): nothing can be stored there", home.path, shown),
                fix: Phrase(verbatim: "chmod 700 \(home.path)"))
        }
        return DoctorCheck("home", .ok, Phrase("%1$@ (mode 0%2$@)", home.path, shown))
    }

    /// The identity check, and the fingerprint when the identity reads.
    static func checkIdentity(_ home: NearcardHome) -> (DoctorCheck, String?) {
        guard FileManager.default.fileExists(atPath: home.identityPath) else {
            return (
                DoctorCheck("identity", .problem, Phrase("no identity in %1$@", home.path), fix: Phrase(verbatim: "nearcard init --name \"Your Name\"")), nil
            )
        }
        if let mode = FileIO.mode(home.secretKeysPath), mode & 0o077 != 0 {
            return (
                DoctorCheck(
                    "identity", .problem, Phrase("%1$@ can be read by other users (mode 0%2$@)", home.secretKeysPath, String(mode, radix: 8)),
                    fix: Phrase(verbatim: "chmod 600 \(home.secretKeysPath)")), nil
            )
        }
        do {
            let store = IdentityStore(home: home)
            let identity = try store.loadPublic()
            // The secret keys are what an exchange signs with: a damaged or foreign file stops every one.
            let sealed = try store.checkSecrets()
            let name = identity.name.map { Phrase(verbatim: $0) } ?? Phrase("(no name)")
            return (
                DoctorCheck(
                    "identity", .ok,
                    sealed
                        ? Phrase("%1$@, fingerprint %2$@, secret keys sealed", name, identity.fingerprint)
                        : Phrase("%1$@, fingerprint %2$@, secret keys readable", name, identity.fingerprint)),
                identity.fingerprint
            )
        } catch {
            return (
                DoctorCheck(
                    "identity", .problem, error.phrase,
                    fix: Phrase("restore %1$@ from a backup, or start again elsewhere: nearcard init --home NEWDIR --name \"Your Name\"", home.path)), nil
            )
        }
    }

    /// A fleet's PostgreSQL book: reachable, the schema this Nearcard knows, writable.
    static func checkSharedStore(_ store: StoreLocation) -> DoctorCheck {
        do {
            let db = try NearcardDatabase(location: store, busyTimeout: 2, retryWindow: 3)
            defer { db.close() }
            let integrity = try db.integrityCheck()
            guard integrity == "ok" else {
                return DoctorCheck("database", .problem, Phrase(verbatim: integrity), fix: Phrase("check that --store names the fleet's database"))
            }
            try db.checkWritable()
            let count = try db.contacts().count
            return DoctorCheck("database", .ok, Phrase("%1$@: %2$@ contacts, schema current, writable", "\(store)", String(count)))
        } catch {
            return DoctorCheck(
                "database", .problem, error.phrase,
                fix: Phrase("start the server or fix --store / $NEARCARD_STORE (password in $PGPASSWORD)"))
        }
    }

    static func checkDatabase(_ home: NearcardHome, store: StoreLocation? = nil) -> DoctorCheck {
        var path = home.databasePath
        if case .sqlite(let other)? = store { path = other }
        guard FileManager.default.fileExists(atPath: path) else {
            return DoctorCheck("database", .ok, Phrase("no contact database yet (made on first use)"))
        }
        let aside = Phrase("%1$@   (keep that copy: your contacts are in it)", "mv \(path) \(path).damaged")
        do {
            let db = try NearcardDatabase(path: path, busyTimeout: 2)
            let integrity = try db.integrityCheck()
            guard integrity == "ok" else { return DoctorCheck("database", .problem, Phrase("%1$@ is damaged: %2$@", path, integrity), fix: aside) }
            try db.checkWritable()
            let count = try db.contacts().count
            return DoctorCheck("database", .ok, Phrase("%1$@: %2$@ contacts, integrity ok, writable", path, String(count)))
        } catch {
            if error.kind == .io {
                return DoctorCheck(
                    "database", .problem, error.phrase,
                    fix: Phrase("free some space, or make it writable: %1$@", "ls -l \(FileIO.directoryName(path))"))
            }
            return DoctorCheck("database", .problem, Phrase("%1$@ cannot be used: %2$@", path, error.phrase), fix: aside)
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
                let found: Phrase
                switch (account.url.lowercased().hasPrefix("http://"), waiting > 0) {
                case (true, false):
                    found = Phrase("%1$@: reached over plain http (this machine only), user %2$@ accepted, writable", account.url, account.username)
                case (false, false):
                    found = Phrase("%1$@: certificate trusted, user %2$@ accepted, writable", account.url, account.username)
                case (true, true):
                    found = Phrase(
                        "%1$@: reached over plain http (this machine only), user %2$@ accepted, writable; %3$@ change(s) waiting for the next sync",
                        account.url, account.username, String(waiting))
                case (false, true):
                    found = Phrase(
                        "%1$@: certificate trusted, user %2$@ accepted, writable; %3$@ change(s) waiting for the next sync", account.url, account.username,
                        String(waiting))
                }
                checks.append(DoctorCheck("addressbook", .ok, found))
            } catch {
                let fix: Phrase
                switch error.kind {
                case .credential, .unauthorized:
                    fix = Phrase(
                        "add it again with the right password: %1$@",
                        "nearcard addressbook add \(account.url) --user \(account.username) --password-file FILE")
                case .certificate: fix = Phrase("renew the server's certificate, or add its CA to the system's trust store (update-ca-certificates)")
                case .readOnly:
                    fix = Phrase("give %1$@ write access on the server, or: %2$@", account.username, "nearcard addressbook remove \(account.url)")
                case .unreachable: fix = Phrase("start the server or check the network; contacts wait and go with the next sync")
                case .serverFull: fix = Phrase("free space on the server (or raise the account's quota); contacts wait and go with the next sync")
                case .serverFailed: fix = Phrase("see the server's log; contacts wait and go with the next sync")
                default: fix = Phrase("%1$@, then add the address book's own URL", "nearcard addressbook remove \(account.url)")
                }
                checks.append(DoctorCheck("addressbook", .warning, error.phrase, fix: fix))
            }
        }
        return checks
    }

    // MARK: system

    /// The kernel's view of the clock: unsynchronized means no NTP has set it, and two laptops' clocks
    /// may be minutes apart (a payload over 300 s off is refused).
    static func checkClock() -> DoctorCheck {
        let state = nearcard_clock_state(nil)
        if state < 0 { return DoctorCheck("clock", .skipped, Phrase("the kernel does not say whether the clock is synchronized")) }
        if state == nearcard_time_error() {
            return DoctorCheck(
                "clock", .warning, Phrase("the system clock is not synchronized (no NTP): exchanges fail when two clocks differ by more than 300 s"),
                fix: clockFix)
        }
        return DoctorCheck("clock", .ok, Phrase("synchronized"))
    }

    /// What sets the clock on this machine: systemd's timedatectl where systemd runs, else an NTP client
    /// from Debian's archive (chrony starts its own service when installed).
    static var clockFix: Phrase {
        let systemd = FileManager.default.fileExists(atPath: "/run/systemd/system")
        let timedatectl = ["/usr/bin/timedatectl", "/bin/timedatectl"].contains { FileManager.default.isExecutableFile(atPath: $0) }
        return systemd && timedatectl
            ? Phrase(verbatim: Firewall.asRoot("timedatectl set-ntp true"))
            : Phrase("%1$@   (an NTP client: this machine does not run systemd's)", Firewall.asRoot("apt-get install chrony"))
    }

    static func checkBus(_ environment: [String: String]) -> DoctorCheck {
        let address = environment["DBUS_SYSTEM_BUS_ADDRESS"] ?? "unix:path=/run/dbus/system_bus_socket"
        let first = address.split(separator: ";").first.map(String.init) ?? address
        guard first.hasPrefix("unix:"),
            let path = first.dropFirst(5).split(separator: ",")
                .first(where: { $0.hasPrefix("path=") }).map({ String($0.dropFirst(5)) })
        else {
            return DoctorCheck("dbus", .ok, Phrase("system bus at %1$@ (not a socket path: not checked)", first))
        }
        if let problem = NetworkProbe.unixSocketProblem(path) {
            return DoctorCheck(
                "dbus", .problem, Phrase("the D-Bus system bus does not answer at %1$@ (%2$@)", path, problem),
                fix: Phrase(verbatim: "sudo systemctl start dbus"))
        }
        return DoctorCheck("dbus", .ok, Phrase("system bus at %1$@", path))
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
                    ? Phrase("no interface named by --interface (%1$@) is up with an address", names)
                    : Phrase("no such network interface: %1$@", missing.joined(separator: ", "))
                return (DoctorCheck("interfaces", .problem, what, fix: Phrase("name an interface that is up: ip -brief address lists them")), [])
            }
            return (
                DoctorCheck(
                    "interfaces", .problem, Phrase("no network interface is up"), fix: Phrase("connect to the network (ip -brief link shows the interfaces)")),
                []
            )
        }
        // Avahi uses an interface with the MULTICAST flag, or loopback (looped back either way).
        let withMulticast = candidates.filter { $0.multicast || $0.loopback }
        let noMulticast = candidates.filter { !$0.multicast && !$0.loopback }.map(\.name)
        let fixes = Phrase(verbatim: noMulticast.map { "sudo ip link set \($0) multicast on" }.joined(separator: "; "))
        let usable = withMulticast.flatMap { i in i.ipv4.map { (name: i.name, ip: $0) } }
        if withMulticast.isEmpty {
            return (
                DoctorCheck(
                    "interfaces", .problem,
                    noMulticast.count == 1
                        ? Phrase("%1$@ has no MULTICAST flag: discovery cannot use it", noMulticast.joined(separator: ", "))
                        : Phrase("%1$@ have no MULTICAST flag: discovery cannot use them", noMulticast.joined(separator: ", ")),
                    fix: fixes), usable
            )
        }
        let listed = withMulticast.map { "\($0.name) (\(($0.ipv4 + $0.ipv6).joined(separator: ", ")))" }.joined(separator: "; ")
        let leftOut = excluded.joined(separator: ", ")
        if !noMulticast.isEmpty {
            let without = noMulticast.joined(separator: ", ")
            return (
                DoctorCheck(
                    "interfaces", .warning,
                    excluded.isEmpty
                        ? Phrase("discovery can use %1$@; not %2$@ (no MULTICAST flag)", listed, without)
                        : Phrase(
                            "discovery can use %1$@; not %2$@ (no MULTICAST flag); left out by default: %3$@ (--interface to use one)", listed, without, leftOut
                        ),
                    fix: fixes),
                usable
            )
        }
        return (
            DoctorCheck(
                "interfaces", .ok,
                excluded.isEmpty
                    ? Phrase("discovery can use %1$@", listed)
                    : Phrase("discovery can use %1$@; left out by default: %2$@ (--interface to use one)", listed, leftOut)),
            usable
        )
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
                    DoctorCheck("announce", .problem, Phrase("cannot open a TCP port to test with: %1$@", String(cString: strerror(errno)))),
                    DoctorCheck("tcp", .skipped, Phrase("needs the test port")), DoctorCheck("mdns", .skipped, Phrase("needs the announcement")),
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
                    "announce", .problem, Phrase("avahi-daemon does not take an announcement: %1$@", error.phrase),
                    fix: Phrase("see avahi-daemon's log: journalctl -u avahi-daemon")),
                DoctorCheck("tcp", .skipped, Phrase("needs the announcement")), DoctorCheck("mdns", .skipped, Phrase("needs the announcement")),
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
            Firewall.verdict($0, proto: "tcp", port: port, elsewhere: Phrase("%1$@   (is something listening there?)", "ss -ltn 'sport = :\(port)'"))
        }
        let tcp: DoctorCheck
        if addresses.isEmpty {
            tcp = DoctorCheck("tcp", .skipped, Phrase("no address to connect to"))
        } else if failures.count == addresses.count, let tcpVerdict {
            tcp = DoctorCheck(
                "tcp", .problem,
                Phrase("cannot connect to this machine on TCP port %1$@ at %2$@: %3$@", String(port), failures.joined(separator: ", "), tcpVerdict.cause),
                fix: tcpVerdict.fix)
        } else if !failures.isEmpty, let tcpVerdict {
            tcp = DoctorCheck(
                "tcp", .warning, Phrase("TCP port %1$@ answers, but not at %2$@: %3$@", String(port), failures.joined(separator: ", "), tcpVerdict.cause),
                fix: tcpVerdict.fix)
        } else {
            tcp = DoctorCheck("tcp", .ok, Phrase("TCP port %1$@ answers at %2$@", String(port), addresses.map(\.description).joined(separator: ", ")))
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
                elsewhere: Phrase(
                    "%1$@   (does avahi-daemon serve that interface?)", "grep -E '^(allow|deny)-interfaces' /etc/avahi/avahi-daemon.conf"))
        let mdns: DoctorCheck
        if usable.isEmpty {
            mdns = DoctorCheck("mdns", .skipped, Phrase("no interface with an IPv4 address and multicast to ask on"))
        } else if answered.isEmpty, let mdnsVerdict {
            mdns = DoctorCheck(
                "mdns", .problem, Phrase("mDNS queries on %1$@ go unanswered: %2$@", silent.joined(separator: ", "), mdnsVerdict.cause), fix: mdnsVerdict.fix)
        } else if !silent.isEmpty, let mdnsVerdict {
            mdns = DoctorCheck(
                "mdns", .warning,
                Phrase("mDNS answers on %1$@ but not on %2$@: %3$@", answered.joined(separator: ", "), silent.joined(separator: ", "), mdnsVerdict.cause),
                fix: mdnsVerdict.fix)
        } else {
            mdns = DoctorCheck("mdns", .ok, Phrase("mDNS answers on %1$@", answered.joined(separator: ", ")))
        }

        let announce: DoctorCheck
        if let seen {
            announce = DoctorCheck("announce", .ok, Phrase("announced and seen back at %1$@", seen.dialOrder.map(\.description).joined(separator: ", ")))
        } else if mdns.status == .problem {
            announce = DoctorCheck("announce", .skipped, Phrase("a test announcement was not seen back: mDNS does not get through (the mdns check)"))
        } else {
            announce = DoctorCheck(
                "announce", .problem, Phrase("a test announcement was not seen back within %1$@ s", String(Int(o.seconds))),
                fix: Phrase(
                    "see avahi-daemon's log: journalctl -u avahi-daemon; its allow-interfaces (/etc/avahi/avahi-daemon.conf) may leave out your network"))
        }
        return [announce, tcp, mdns]
    }

}
