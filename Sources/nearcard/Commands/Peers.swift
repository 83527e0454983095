import ArgumentParser
import Foundation
import NearcardControl
import NearcardCrypto
import NearcardDiscovery
import NearcardNode

/// `nearcard peers`: the Nearcard nodes on the LAN.
struct Peers: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "peers",
        abstract: t("List the Nearcard nodes on the LAN (DNS-SD through avahi-daemon)."),
        discussion: t(
            """
            Answers as soon as avahi-daemon has told what it holds (its cache: nodes announced on the LAN \
            while it ran), at most %1$@ s; --wait SECONDS browses that long instead (to \
            catch a node that has not announced itself yet), --watch goes on, a line per node that comes \
            or goes, until Ctrl-C. Then checks that each node answers on TCP: nodes that said \
            goodbye or do not answer are left out (--all lists them, marked); CONFIRMED says when each \
            last answered. A contact is recognised by the presence tag its node announces ("Ada \
            Lovelace (contact)"), even in private mode; a stranger shows the name it announces, or \
            "someone nearby (private)". Nothing here is proven: `nearcard exchange` proves who answers \
            (a recognised contact must prove their DID; a stranger, the check code). ID names a peer for \
            `nearcard exchange` until it announces itself again (every 15 minutes).
            """, String(Int(Peers.longestWait))))

    @OptionGroup var global: GlobalOptions

    /// The longest wait for the daemon's cache (one that never says it is done).
    static let longestWait: Double = 3

    @Option(parsing: .unconditional, help: ArgumentHelp(t("Browse this many seconds, instead of answering once the daemon's cache is told.")))
    var wait: Double?

    @Option(parsing: .unconditional, help: ArgumentHelp(t("The same as --wait (its older name)."), visibility: .hidden))
    var timeout: Double?

    @Flag(help: ArgumentHelp(t("Go on listing: a line per node that comes or goes (one JSON object per line with --json), until Ctrl-C.")))
    var watch = false

    @Flag(help: ArgumentHelp(t("Print the peers as JSON.")))
    var json = false

    @Flag(help: ArgumentHelp(t("Also list nodes that do not answer on TCP.")))
    var all = false

    @Option(name: .customLong("interface"), help: ArgumentHelp(t("Browse only on this interface; repeatable."), valueName: "IF"))
    var interfaces: [String] = []

    @Option(name: .customLong("exclude-interface"), help: ArgumentHelp(t("Never browse on this interface; repeatable."), valueName: "IF"))
    var excluded: [String] = []

    func validate() throws {
        if let w = wait ?? timeout, !(w > 0 && w <= 600) { throw ValidationError(t("--wait must be more than 0 and at most 600 seconds")) }
        if watch && (wait ?? timeout) != nil { throw ValidationError(t("--watch goes on until Ctrl-C: give it no --wait")) }
    }

    func run() async throws {
        var options = NodeRuntime.Options()
        options.interfaces = interfaces
        options.excludedInterfaces = excluded
        if watch { return try await watchPeers(options) }
        let seconds = wait ?? timeout
        let found = try await NodeRuntime.browse(
            seconds: seconds ?? Self.longestWait, options: options, resolver: try resolver(), untilSettled: seconds == nil
        )
        .sorted { $0.instanceName.localizedCaseInsensitiveCompare($1.instanceName) == .orderedAscending }
        var rows: [(peer: DiscoveredPeer, reachable: Bool)] = []
        await withTaskGroup(of: (DiscoveredPeer, Bool).self) { group in
            for p in found { group.addTask { (p, await PeerLiveness.answers(p)) } }
            for await r in group {
                var peer = r.0
                if r.1 { peer.confirmedAt = Date() } // it answered just now
                rows.append((peer, r.1))
            }
        }
        rows.sort { $0.peer.instanceName.localizedCaseInsensitiveCompare($1.peer.instanceName) == .orderedAscending }
        if !all { rows = rows.filter(\.reachable) }
        if json {
            Console.json(.array(rows.map { Self.json($0.peer, reachable: $0.reachable) }))
            return
        }
        if rows.isEmpty {
            Console.out(
                seconds.map { t("No Nearcard nodes found on the LAN in %1$@ s.", String(Int($0))) }
                    ?? t("No Nearcard nodes on the LAN that avahi-daemon knows of (nearcard peers --wait 10 listens longer)."))
            return
        }
        ContactDisplay.columns(
            [t("ID"), t("PEER"), t("INSTANCE"), t("PORT"), t("ADDRESSES"), t("CONFIRMED")] + (all ? [t("ANSWERS")] : []),
            rows.map { r in
                [
                    r.peer.id ?? "-", r.peer.displayName, r.peer.instanceName, String(r.peer.port),
                    r.peer.dialOrder.map { "\($0.ip) (\($0.interfaceName))" }.joined(separator: ", "), Self.age(r.peer.confirmedAt),
                ]
                    + (all ? [r.reachable ? t("yes") : t("no")] : [])
            })
    }

    /// `--watch`: each node as it comes (once it answers on TCP) and goes, until Ctrl-C.
    func watchPeers(_ options: NodeRuntime.Options) async throws {
        let events = try NodeRuntime.watch(options: options, resolver: try resolver())
        let interrupts = NodeSetup.interrupts()
        let json = self.json
        let all = self.all
        let watcher = Task {
            var shown: Set<String> = []
            for await event in events {
                switch event {
                case .found(let p), .updated(let p):
                    guard !shown.contains(p.instanceName) else { continue }
                    let answers = await PeerLiveness.answers(p)
                    guard answers || all else { continue }
                    shown.insert(p.instanceName)
                    var peer = p
                    if answers { peer.confirmedAt = Date() }
                    if json {
                        var o = Self.json(peer, reachable: answers).objectValue ?? [:]
                        o["event"] = "peer.found"
                        Console.out(JSONValue.object(o).compactText)
                    } else {
                        Console.out(
                            t(
                                "+ %1$@  %2$@  %3$@  port %4$@", peer.displayName, peer.instanceName, peer.dialOrder.map(\.ip).joined(separator: ", "),
                                String(peer.port)))
                    }
                case .lost(let name):
                    guard shown.remove(name) != nil else { continue }
                    if json { Console.out(JSONValue.object(["event": "peer.lost", "instance": .string(name)]).compactText) } else { Console.out("- \(name)") }
                case .failed(let e):
                    Console.err("nearcard: " + t("discovery: %1$@", t.say(e.phrase)))
                case .settled:
                    continue
                }
            }
        }
        for await _ in interrupts { break }
        watcher.cancel()
    }

    /// Recognises the home's contacts by their presence keys; a home without a book recognises nobody
    /// (`peers` needs no identity).
    func resolver() throws -> PresenceResolver {
        guard let db = try? global.readingDatabase() else { return .none }
        defer { db.close() }
        return try PresenceResolver(reading: db)
    }

    /// "just now", "40 s ago", "3 min ago", or "never" (its records were never resolved).
    static func age(_ date: Date?) -> String {
        guard let date else { return t("never") }
        let s = Int(Date().timeIntervalSince(date))
        return s < 5 ? t("just now") : s < 120 ? t("%1$@ s ago", String(s)) : t("%1$@ min ago", String(s / 60))
    }

    static func json(_ p: DiscoveredPeer, reachable: Bool) -> JSONValue {
        var o = p.json.objectValue ?? [:]
        o["reachable"] = .bool(reachable)
        return .object(o)
    }
}
