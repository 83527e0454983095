import ArgumentParser
import Foundation
import Logging
import NearcardControl
import NearcardCrypto
import NearcardDiscovery
import NearcardMetrics
import NearcardModel
import NearcardNode
import Synchronization

/// Serving a node until Ctrl-C or quit, for people (lines of text) or programs (JSON lines).
enum NodeCommand {
    static func serve(
        global: GlobalOptions, node: NodeOptions, consent: any ConsentProvider, limits: NodeLimits, requiredFields: Set<CardField>,
        jsonl: Bool, defaultLogLevel: Logger.Level? = nil, webhook: Webhook? = nil, command: String = "listen"
    ) async throws {
        // One node per home: a second one says which is running instead of serving the same identity twice.
        let home = global.resolvedHome.path
        let lock: NodeLock
        switch NodeLock.acquire(home: home, command: command) {
        case .success(let held): lock = held
        case .failure(let holder): throw CLIError(.environment, NodeLock.refusal(holder, home: home))
        }
        defer { withExtendedLifetime(lock) {} }
        NodeSetup.raiseOpenFileLimit()
        // The node holds the secret keys as long as it serves: no core dump, no same-user ptrace.
        KeysOutOfReach.apply()
        sayMissingInterfaces(node)
        let metricsServer = try await startMetrics(node)
        defer { metricsServer?.cancel() }
        let events = EventBus()
        startLogging(node, events: events, defaultLevel: defaultLogLevel)
        let context = try NodeSetup.context(
            global, consent: consent, events: events, limits: limits, requiredFields: requiredFields,
            nodeName: node.nodeName, webhook: webhook, serving: true)
        let identity = context.identity
        // JSON lines: the session in Node writes every event from now on (so none is missed) and, once the
        // node runs, answers commands; this face only moves the lines.
        let session = jsonl ? JSONLinesSession(configuration: context, output: { Console.line($0) }) : nil
        if try context.book.myCard() == nil {
            if let session {
                session.warn("you have no card yet; peers will get only your name (set one with: nearcard card set …)")
            } else {
                Console.err("nearcard: " + t("you have no card yet; peers will get only your name (set one with: nearcard card set …)"))
            }
        }
        let printer: Task<Void, Never>? =
            jsonl
            ? nil
            : Task { [stream = events.subscribe()] in
                await printEvents(stream, database: context.book)
            }
        let runtime: NodeRuntime
        do { runtime = try await NodeRuntime.start(context, options: node.runtime) } catch {
            printer?.cancel()
            if error is NodeError { throw error }
            throw CLIError(.environment, t("cannot listen on port %1$@: %2$@", String(node.port), "\(error)"))
        }
        lock.record(NodeLock.Holder(command: command, pid: Int(getpid()), port: runtime.port))
        // Commands typed beside the node (exchange, id rotate-presence, card set …) reach it here.
        let control = startControl(home: home, runtime: runtime) { note in
            if let session { session.warn(note) } else { Console.err("nearcard: \(note)") }
        }
        if !jsonl {
            let label = identity.name.map { "“\($0)”" } ?? t("(no name)")
            Console.out(
                t("Listening on port %1$@ as %2$@, fingerprint %3$@. Ctrl-C to stop.", String(runtime.port ?? node.port), label, identity.fingerprint))
        }
        // One service group until a stop (NodeLifecycle): `quit` on stdin or Ctrl-C at once, SIGTERM
        // (systemd's stop, `kill`) drains.
        let (quit, quitter) = AsyncStream.makeStream(of: Void.self)
        session?.serve(runtime, commands: StdinLines.stream(), quit: { quitter.finish() })
        _ = try await NodeLifecycle.run(
            runtime: runtime, grace: node.grace, metrics: metricsServer, web: nil, control: control,
            notifier: ServiceNotifier(environment: global.environment), events: events, quit: quit,
            stopping: { how, open in if !jsonl { sayStopping(how, open: open, grace: node.grace) } },
            leftOpen: { left in sayLeftOpen(left, grace: node.grace) })
        defer { context.book.compact() } // a clean stop leaves no WAL behind
        if let session {
            await session.finish()
        } else {
            // Let the printer write what is already queued.
            try? await Task.sleep(nanoseconds: 50_000_000)
            events.finish()
            await printer?.value
        }
    }

    /// The control socket in the home (docs/JSONL.md): the commands run beside this node are carried out
    /// or applied by it. Without it (a home whose path is too long for a Unix socket) they work alone,
    /// as with no node running, and that is said.
    static func startControl(home: String, runtime: NodeRuntime, warn: (String) -> Void) -> ControlServer? {
        do { return try ControlServer.start(home: home, runtime: runtime) } catch {
            warn("commands run beside this node cannot reach it (\(error)): they will work on their own")
            return nil
        }
    }

    /// --metrics: the Prometheus endpoint, started before the node (which makes its metrics as it starts).
    /// --interface names this machine has no interface of, now: said, not refused (Avahi follows an
    /// interface that appears: a service may start before its Wi-Fi). An excluded one may well be
    /// missing: a configuration shared by machines.
    static func sayMissingInterfaces(_ node: NodeOptions) {
        for name in InterfaceFilter(allow: node.interfaces).unknownAllowed {
            Console.err("nearcard: " + t("--interface %1$@: this machine has no such interface now (see: ip link); the node will use it if it appears", name))
        }
    }

    static func startMetrics(_ node: NodeOptions) async throws -> Task<Void, Never>? {
        guard let metrics = node.metrics else { return nil }
        let host: String
        let port: Int
        do { (host, port) = try MetricsEndpoint.parse(metrics) } catch {
            throw ValidationError(t("--metrics %1$@ is not HOST:PORT (e.g. 127.0.0.1:9464)", metrics))
        }
        MetricsEndpoint.bootstrap()
        do { return try await MetricsEndpoint.start(host: host, port: port) } catch {
            throw CLIError(.environment, t("cannot serve metrics on %1$@: %2$@", metrics, UICommand.reason(error)))
        }
    }

    /// --log-level (else the face's default): one key=value line per event on stderr (swift-log), from
    /// the first event on.
    static func startLogging(_ node: NodeOptions, events: EventBus, defaultLevel: Logger.Level?) {
        guard let level = node.logLevel ?? defaultLevel else { return }
        KeyValueLogHandler.bootstrap(level: level)
        NodeLog.attach(to: events, logger: Logger(label: "nearcard"))
    }

    /// What a terminal sees as the node stops: SIGTERM's drain (no new sessions; those in flight get
    /// --grace seconds to finish), or a stop at once.
    static func sayStopping(_ how: NodeLifecycle.Stop, open: Int, grace: TimeInterval) {
        switch how {
        case .drain:
            Console.out("\n" + t("Stopping: no new sessions; %1$@ in flight get up to %2$@ s…", String(open), String(Int(grace))))
        case .atOnce: Console.out("\n" + t("Stopping…"))
        }
    }

    static func sayLeftOpen(_ left: Int, grace: TimeInterval) {
        Console.err("nearcard: " + t("%1$@ session(s) did not finish within %2$@ s and were closed", String(left), String(Int(grace))))
    }

    /// Tells systemd the node is ready, keeps its STATUS= current as sessions start and end, and feeds
    /// the watchdog (at half its interval) while the event loops answer.
    static func supervise(_ runtime: NodeRuntime, service: ServiceNotifier, events: EventBus) -> Task<Void, Never> {
        service.ready(status: ServiceNotifier.servingStatus(sessions: 0, exchanges: 0))
        let stream = events.subscribe()
        final class Count: Sendable { let value = Mutex(0) }
        let completed = Count()
        @Sendable func update() { service.status(ServiceNotifier.servingStatus(sessions: runtime.openSessions, exchanges: completed.value.withLock { $0 })) }
        return Task {
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await event in stream {
                        switch event {
                        case .exchangeCompleted: completed.value.withLock { $0 += 1 }
                        case .exchangeStarted, .exchangeFailed, .exchangeAbandoned: break
                        default: continue
                        }
                        update()
                    }
                }
                // Updates come at most once a second: a last change inside that second shows on the next tick.
                group.addTask {
                    while !Task.isCancelled {
                        try? await Task.sleep(nanoseconds: 2_000_000_000)
                        update()
                    }
                }
                if let interval = service.watchdogInterval {
                    group.addTask {
                        while !Task.isCancelled {
                            if await runtime.eventLoopsAnswer() { service.watchdog() }
                            try? await Task.sleep(nanoseconds: UInt64(interval / 2 * 1e9))
                        }
                    }
                }
                await group.next()
                group.cancelAll()
            }
        }
    }

    static func printEvents(_ stream: AsyncStream<NodeEvent>, database: Book) async {
        for await event in stream {
            if case .exchangeCompleted(_, let contact, _, _, _) = event {
                Console.out("")
                SessionStory.completed(contact, database: database)
            } else if let (text, stream) = SessionStory.line(for: event) {
                if stream == .out { Console.out(text) } else { Console.err(text) }
            }
        }
    }
}
