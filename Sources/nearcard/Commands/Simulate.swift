public import ArgumentParser
import Foundation
import NearcardCrypto
import NearcardSimulation

#if canImport(Glibc)
    import Glibc
#endif

/// `nearcard simulate --peers N`: many real nodes on this machine exchanging cards.
struct Simulate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "simulate",
        abstract: t("Start N nodes on this machine, let them discover each other and exchange cards, and summarise."),
        discussion: """
            Each node is a `nearcard listen --jsonl` process with its own home and port, driven through its \
            JSON-lines interface. By default all nodes share one private network namespace whose own \
            avahi-daemon works on its loopback; --netns gives each node its own namespace and avahi-daemon \
            on a bridge (like laptops on one LAN); --no-discovery needs no root: nodes dial 127.0.0.1:PORT. \
            --bots N makes it a conference: N `nearcard bot` processes share one book (PostgreSQL: \
            --bots-store URL, or a throw-away server the run starts when PostgreSQL is installed) and show \
            one card, "Nearcard Booth"; every peer exchanges with one bot (round robin), naming it by the \
            instance name it announces, and the summary counts the contacts in the shared book (one per visitor). \
            Nothing reaches the machine's real network. Everything the run made (processes, daemons, \
            namespaces, homes) is removed at the end, also on Ctrl-C. Exit 0 when every exchange succeeded, \
            1 when some failed (or a fleet's book does not hold one contact per visitor), 4 when the environment is missing (root, avahi-daemon).
            """)

    /// (Accepted like everywhere, README; the run makes homes of its own: --home is not used.)
    @OptionGroup var global: GlobalOptions

    @Option(parsing: .unconditional, help: "How many nodes (2…500).")
    var peers: Int

    @Option(parsing: .unconditional, help: "How many times to run the topology.")
    var rounds: Int = 1

    @Option(help: "Who exchanges with whom: all (every pair; the default), ring, or star (node 0 with everyone).")
    var topology: Simulation.Topology?

    @Option(parsing: .unconditional, help: "A conference: this many bots (1…16) sharing one book; every peer exchanges with one of them.")
    var bots: Int = 0

    @Option(help: ArgumentHelp("The bots' shared book (a postgres:// URL); default: a throw-away PostgreSQL server for the run.", valueName: "URL"))
    var botsStore: String?

    @Flag(help: "Each node in its own network namespace, with its own avahi-daemon, on one bridge.")
    var netns = false

    @Flag(help: "No namespaces and no DNS-SD: nodes dial each other at 127.0.0.1:PORT (no root needed).")
    var noDiscovery = false

    @Option(parsing: .unconditional, help: "Exchanges in flight at once.")
    var concurrency: Int = 8

    @Option(parsing: .unconditional, help: "Seconds the whole run may take; exchanges not done by then fail as \"deadline\".")
    var timeout: Double = 300

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "After the exchanges, keep every node running SECONDS more and measure what an idle crowd costs: CPU per node per minute, and TCP connections each node received a minute (at most 60 s is counted).",
            valueName: "SECONDS"))
    var idle: Double = 0

    @Flag(help: "Keep the nodes' homes and logs (the path is printed).")
    var keep = false

    @Flag(help: "Print the summary as JSON.")
    var json = false

    func validate() throws {
        if !(2...500).contains(peers) { throw ValidationError("--peers must be between 2 and 500") }
        if !(1...1000).contains(rounds) { throw ValidationError("--rounds must be between 1 and 1000") }
        if !(1...1024).contains(concurrency) { throw ValidationError("--concurrency must be between 1 and 1024") }
        if !(timeout > 0 && timeout <= 86400) { throw ValidationError("--timeout must be more than 0 and at most 86400 seconds") }
        if netns && noDiscovery { throw ValidationError("--netns and --no-discovery exclude each other") }
        if !(idle >= 0 && idle <= 3600) { throw ValidationError("--idle must be between 0 and 3600 seconds") }
        if !(0...16).contains(bots) { throw ValidationError("--bots must be between 0 and 16") }
        if bots > 0, topology != nil { throw ValidationError("--bots sets who exchanges with whom (every peer with one bot): leave out --topology") }
        if bots == 0, botsStore != nil { throw ValidationError("--bots-store is the bots' book: give --bots N too") }
    }

    func run() async throws {
        var options = Simulation.Options(peers: peers, executable: Self.ownExecutable())
        options.rounds = rounds
        options.topology = topology ?? .all
        options.bots = bots
        options.botStore = botsStore
        options.mode = netns ? .netns : (noDiscovery ? .direct : .loopback)
        options.concurrency = concurrency
        options.deadline = timeout
        options.keep = keep
        options.idle = idle
        let simulation = Simulation(options: options) { Console.err($0) }
        let task = Task { try await simulation.run() }
        // Ctrl-C (or SIGTERM): stop, remove everything the run made, exit 130. A second one does not wait.
        let interrupts = NodeSetup.interrupts()
        let watcher = Task {
            var count = 0
            for await _ in interrupts {
                count += 1
                if count == 1 {
                    Console.err("\nInterrupted: stopping the nodes and removing what the simulation made…")
                    task.cancel()
                } else {
                    simulation.cleanUp()
                    Glibc.exit(Exit.interrupted.rawValue)
                }
            }
        }
        defer { watcher.cancel() }
        let report: Simulation.Report
        do { report = try await task.value } catch let e as Simulation.Failure {
            throw CLIError(.environment, e.description)
        } catch let e as NetLab.Failure {
            throw CLIError(.environment, e.description)
        } catch is CancellationError {
            throw CLIError(.interrupted, "interrupted; the nodes, daemons and namespaces the simulation made are gone")
        }
        if json {
            Console.json(report.json)
        } else {
            Self.print(report)
        }
        if report.successes < report.attempts {
            throw CLIError(.checkFailed, "\(report.attempts - report.successes) of \(report.attempts) exchanges failed")
        }
        if report.options.bots > 0, report.fleetContacts != report.fleetContactsExpected {
            throw CLIError(.checkFailed, "the bots' book holds \(report.fleetContacts) contacts, not one per visitor (\(report.fleetContactsExpected))")
        }
    }

    static func ownExecutable() -> String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }

    static func print(_ r: Simulation.Report) {
        func ms(_ v: Double?) -> String { v.map { String(format: "%.1f ms", $0) } ?? "-" }
        var rows: [(String, String)] = [
            (
                "Peers",
                "\(r.options.peers) (\(r.options.mode.rawValue), "
                    + (r.options.bots > 0 ? "a conference with \(r.options.bots) bot\(r.options.bots == 1 ? "" : "s")" : r.options.topology.rawValue)
                    + ", \(r.options.rounds) round\(r.options.rounds == 1 ? "" : "s"))"
            ),
            ("Exchanges", "\(r.successes) of \(r.attempts) succeeded"),
        ]
        for (code, n) in r.failures.sorted(by: { $0.key < $1.key }) { rows.append(("  failed", "\(n) × \(code)")) }
        rows += [
            ("Latency", "p50 \(ms(r.percentile(50)))  p95 \(ms(r.percentile(95)))  p99 \(ms(r.percentile(99)))"),
            (
                "Discovery",
                r.options.mode == .direct
                    ? "not used (--no-discovery)" : ms(r.discoveryMs) + (r.undiscovered > 0 ? " (\(r.undiscovered) sightings missing)" : "")
            ),
            ("Contacts", "\(r.contactsStored) verified contacts stored (expected \(r.contactsExpected))"),
        ]
        if r.options.bots > 0 {
            rows.append(("Fleet's book", "\(r.fleetContacts) contacts, one per visitor (expected \(r.fleetContactsExpected))"))
        }
        rows += [
            ("Probes", "\(r.probeSummaries) probe summaries, \(r.refusals) refusals between the nodes; \(r.addresses) addresses"),
            (
                "Wall time",
                String(
                    format: "%.2f s (set-up %.2f s, exchanges %.2f s, %.0f exchanges/s)", r.wallSeconds, r.setupSeconds, r.exchangeSeconds,
                    r.exchangeSeconds > 0 ? Double(r.successes) / r.exchangeSeconds : 0)
            ),
        ]
        if let idle = r.idle {
            rows.append(
                (
                    "Idle",
                    String(
                        format: "%.0f s: CPU per node %.1f ms a minute (median; max %.1f); connections received per node per minute: max %d, total %d",
                        idle.seconds, idle.cpuMsPerNodePerMinute.median, idle.cpuMsPerNodePerMinute.max, idle.connectionsPerNodePerMinute.max,
                        idle.connectionsPerNodePerMinute.total)
                ))
        }
        if let dir = r.workDirectory { rows.append(("Kept", dir)) }
        Console.table(rows)
    }
}

extension Simulation.Topology: @retroactive ExpressibleByArgument {}
