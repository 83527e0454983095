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
        discussion: t(
            """
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
            """
        ))

    /// (Accepted like everywhere, README; the run makes homes of its own: --home is not used.)
    @OptionGroup var global: GlobalOptions

    @Option(parsing: .unconditional, help: ArgumentHelp(t("How many nodes (2…500).")))
    var peers: Int

    @Option(parsing: .unconditional, help: ArgumentHelp(t("How many times to run the topology.")))
    var rounds: Int = 1

    @Option(help: ArgumentHelp(t("Who exchanges with whom: all (every pair; the default), ring, or star (node 0 with everyone).")))
    var topology: Simulation.Topology?

    @Option(parsing: .unconditional, help: ArgumentHelp(t("A conference: this many bots (1…16) sharing one book; every peer exchanges with one of them.")))
    var bots: Int = 0

    @Option(help: ArgumentHelp(t("The bots' shared book (a postgres:// URL); default: a throw-away PostgreSQL server for the run."), valueName: "URL"))
    var botsStore: String?

    @Flag(help: ArgumentHelp(t("Each node in its own network namespace, with its own avahi-daemon, on one bridge.")))
    var netns = false

    @Flag(help: ArgumentHelp(t("No namespaces and no DNS-SD: nodes dial each other at 127.0.0.1:PORT (no root needed).")))
    var noDiscovery = false

    @Option(parsing: .unconditional, help: ArgumentHelp(t("Exchanges in flight at once.")))
    var concurrency: Int = 8

    @Option(parsing: .unconditional, help: ArgumentHelp(t("Seconds the whole run may take; exchanges not done by then fail as \"deadline\".")))
    var timeout: Double = 300

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            t(
                "After the exchanges, keep every node running SECONDS more and measure what an idle crowd costs: CPU per node per minute, and TCP connections each node received a minute (at most 60 s is counted)."
            ),
            valueName: "SECONDS"))
    var idle: Double = 0

    @Flag(help: ArgumentHelp(t("Keep the nodes' homes and logs (the path is printed).")))
    var keep = false

    @Flag(help: ArgumentHelp(t("Print the summary as JSON.")))
    var json = false

    func validate() throws {
        if !(2...500).contains(peers) { throw ValidationError(t("--peers must be between 2 and 500")) }
        if !(1...1000).contains(rounds) { throw ValidationError(t("--rounds must be between 1 and 1000")) }
        if !(1...1024).contains(concurrency) { throw ValidationError(t("--concurrency must be between 1 and 1024")) }
        if !(timeout > 0 && timeout <= 86400) { throw ValidationError(t("--timeout must be more than 0 and at most 86400 seconds")) }
        if netns && noDiscovery { throw ValidationError(t("--netns and --no-discovery exclude each other")) }
        if !(idle >= 0 && idle <= 3600) { throw ValidationError(t("--idle must be between 0 and 3600 seconds")) }
        if !(0...16).contains(bots) { throw ValidationError(t("--bots must be between 0 and 16")) }
        if bots > 0, topology != nil { throw ValidationError(t("--bots sets who exchanges with whom (every peer with one bot): leave out --topology")) }
        if bots == 0, botsStore != nil { throw ValidationError(t("--bots-store is the bots' book: give --bots N too")) }
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
                    Console.err("\n" + t("Interrupted: stopping the nodes and removing what the simulation made…"))
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
            throw CLIError(.interrupted, t("interrupted; the nodes, daemons and namespaces the simulation made are gone"))
        }
        if json {
            Console.json(report.json)
        } else {
            Self.print(report)
        }
        if report.successes < report.attempts {
            throw CLIError(.checkFailed, t("%1$@ of %2$@ exchanges failed", String(report.attempts - report.successes), String(report.attempts)))
        }
        if report.options.bots > 0, report.fleetContacts != report.fleetContactsExpected {
            throw CLIError(
                .checkFailed,
                t(
                    "the bots' book holds %1$@ contacts, not one per visitor (%2$@)", String(report.fleetContacts), String(report.fleetContactsExpected)))
        }
    }

    static func ownExecutable() -> String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }

    static func print(_ r: Simulation.Report) {
        func ms(_ v: Double?) -> String { v.map { String(format: "%.1f ms", $0) } ?? "-" }
        var rows: [(String, String)] = [
            (
                t("Peers"),
                t.plural(
                    "%1$@ (%2$@, %3$@, %4$@ round)", "%1$@ (%2$@, %3$@, %4$@ rounds)", count: r.options.rounds, String(r.options.peers),
                    r.options.mode.rawValue,
                    r.options.bots > 0
                        ? t.plural("a conference with %1$@ bot", "a conference with %1$@ bots", count: r.options.bots, String(r.options.bots))
                        : r.options.topology.rawValue, String(r.options.rounds))
            ),
            (t("Exchanges"), t("%1$@ of %2$@ succeeded", String(r.successes), String(r.attempts))),
        ]
        for (code, n) in r.failures.sorted(by: { $0.key < $1.key }) { rows.append(("  " + t("failed"), "\(n) × \(code)")) }
        rows += [
            (t("Latency"), "p50 \(ms(r.percentile(50)))  p95 \(ms(r.percentile(95)))  p99 \(ms(r.percentile(99)))"),
            (
                t("Discovery"),
                r.options.mode == .direct
                    ? t("not used (--no-discovery)")
                    : ms(r.discoveryMs) + (r.undiscovered > 0 ? " " + t("(%1$@ sightings missing)", String(r.undiscovered)) : "")
            ),
            (t("Contacts"), t("%1$@ verified contacts stored (expected %2$@)", String(r.contactsStored), String(r.contactsExpected))),
        ]
        if r.options.bots > 0 {
            rows.append((t("Fleet's book"), t("%1$@ contacts, one per visitor (expected %2$@)", String(r.fleetContacts), String(r.fleetContactsExpected))))
        }
        rows += [
            (
                t("Probes"),
                t(
                    "%1$@ probe summaries, %2$@ refusals between the nodes; %3$@ addresses", String(r.probeSummaries), String(r.refusals),
                    String(r.addresses))
            ),
            (
                t("Wall time"),
                t(
                    "%1$@ s (set-up %2$@ s, exchanges %3$@ s, %4$@ exchanges/s)", String(format: "%.2f", r.wallSeconds),
                    String(format: "%.2f", r.setupSeconds), String(format: "%.2f", r.exchangeSeconds),
                    String(format: "%.0f", r.exchangeSeconds > 0 ? Double(r.successes) / r.exchangeSeconds : 0))
            ),
        ]
        if let idle = r.idle {
            rows.append(
                (
                    t("Idle"),
                    t(
                        "%1$@ s: CPU per node %2$@ ms a minute (median; max %3$@); connections received per node per minute: max %4$@, total %5$@",
                        String(format: "%.0f", idle.seconds), String(format: "%.1f", idle.cpuMsPerNodePerMinute.median),
                        String(format: "%.1f", idle.cpuMsPerNodePerMinute.max), String(idle.connectionsPerNodePerMinute.max),
                        String(idle.connectionsPerNodePerMinute.total))
                ))
        }
        if let dir = r.workDirectory { rows.append((t("Kept"), dir)) }
        Console.table(rows)
    }
}

extension Simulation.Topology: @retroactive ExpressibleByArgument {}
