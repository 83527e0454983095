import ArgumentParser
import Foundation
import NearcardControl
import NearcardCrypto
import NearcardDiscovery
import NearcardNode
import NearcardStore

/// `nearcard peers`: the Nearcard nodes on the LAN.
struct Peers: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the Nearcard nodes on the LAN (DNS-SD through avahi-daemon).",
        discussion: """
            Browses for --timeout seconds, then checks that each node answers on TCP: nodes that said \
            goodbye or do not answer are left out (--all lists them, marked); CONFIRMED says when each \
            last answered. A contact is recognised by the presence tag its node announces ("Ada \
            Lovelace (contact)"), even in private mode; a stranger shows the name it announces, or \
            "someone nearby (private)". Nothing here is proven: `nearcard exchange` proves who answers \
            (a recognised contact must prove their DID; a stranger, the check code). ID names a peer for \
            `nearcard exchange` until it announces itself again (every 15 minutes).
            """)

    @OptionGroup var global: GlobalOptions

    @Option(parsing: .unconditional, help: "Seconds to browse.")
    var timeout: Double = 3

    @Flag(help: "Print the peers as JSON.")
    var json = false

    @Flag(help: "Also list nodes that do not answer on TCP.")
    var all = false

    @Option(name: .customLong("interface"), help: ArgumentHelp("Browse only on this interface; repeatable.", valueName: "IF"))
    var interfaces: [String] = []

    @Option(name: .customLong("exclude-interface"), help: ArgumentHelp("Never browse on this interface; repeatable.", valueName: "IF"))
    var excluded: [String] = []

    func validate() throws {
        if timeout <= 0 || timeout > 600 { throw ValidationError("--timeout must be more than 0 and at most 600 seconds") }
    }

    func run() async throws {
        var options = NodeRuntime.Options()
        options.interfaces = interfaces
        options.excludedInterfaces = excluded
        let found = try await NodeRuntime.browse(seconds: timeout, options: options, resolver: try resolver())
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
            Console.out("No Nearcard nodes found on the LAN in \(Int(timeout)) s.")
            return
        }
        ContactDisplay.columns(
            ["ID", "PEER", "INSTANCE", "PORT", "ADDRESSES", "CONFIRMED"] + (all ? ["ANSWERS"] : []),
            rows.map { r in
                [
                    r.peer.id ?? "-", r.peer.displayName, r.peer.instanceName, String(r.peer.port),
                    r.peer.dialOrder.map { "\($0.ip) (\($0.interfaceName))" }.joined(separator: ", "), Self.age(r.peer.confirmedAt),
                ]
                    + (all ? [r.reachable ? "yes" : "no"] : [])
            })
    }

    /// Recognises the home's contacts by their presence keys; a home without a book recognises nobody
    /// (`peers` needs no identity).
    func resolver() throws -> PresenceResolver {
        guard let db = try? global.existingDatabase() else { return .none }
        defer { db.close() }
        return PresenceResolver(contacts: try db.contactPresenceKeys(), ownKey: PresenceResolver.ownKey(db))
    }

    /// "just now", "40 s ago", "3 min ago", or "never" (its records were never resolved).
    static func age(_ date: Date?) -> String {
        guard let date else { return "never" }
        let s = Int(Date().timeIntervalSince(date))
        return s < 5 ? "just now" : s < 120 ? "\(s) s ago" : "\(s / 60) min ago"
    }

    static func json(_ p: DiscoveredPeer, reachable: Bool) -> JSONValue {
        var o = p.json.objectValue ?? [:]
        o["reachable"] = .bool(reachable)
        return .object(o)
    }
}
