import Foundation
import Logging
import NearcardControl
import NearcardNode
import ServiceLifecycle
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// How `listen`, `ui` and `bot` serve, once the node is bound: one `ServiceGroup` (swift-service-lifecycle)
/// of the metrics endpoint, the web app (`ui`), the control socket, the node and its systemd supervision.
///
/// Every stop is the group's graceful shutdown, service by service in the reverse of that order: systemd
/// hears STOPPING first; the node stops (SIGTERM drains: no new sessions, those in flight get --grace
/// seconds; Ctrl-C and `quit` stop at once); then the control socket, so a command beside the node hears
/// how its exchange ended; then the page, kept up while sessions drain so a request can still be
/// answered; then metrics. The signals are read through `NodeSetup.interrupts()`, the process's one
/// signal pipe, and turned into that shutdown.
enum NodeLifecycle {
    /// How the node stops when the group shuts down.
    enum Stop: Sendable, Equatable {
        /// SIGTERM (systemd's stop, `kill`): sessions in flight get --grace seconds.
        case drain
        /// Ctrl-C, `quit`: at once.
        case atOnce
    }

    /// The stop asked for first, shared by the group's trigger and the node's service.
    final class StopRequest: Sendable {
        private let stop = Mutex<Stop?>(nil)
        var value: Stop { stop.withLock { $0 } ?? .atOnce }
        /// Records the first stop asked for; later ones change nothing.
        func ask(_ s: Stop) { stop.withLock { $0 = $0 ?? s } }
    }

    /// Runs the group until a signal, `quit` (the `quit` stream ends) or a service failing (the web app
    /// that cannot bind). `web`: the page's service, between metrics and the control socket. `ready`:
    /// ends when everything serves (the page bound), so systemd hears READY only then. `stopping` is
    /// told as the node starts to stop, `leftOpen` how many sessions a drain had to close. Returns how
    /// it stopped; rethrows a service's failure.
    static func run(
        runtime: NodeRuntime, grace: TimeInterval, metrics: Task<Void, Never>?, web: (any Service)?, control: ControlServer?,
        notifier: ServiceNotifier, events: EventBus, quit: AsyncStream<Void>? = nil, ready: AsyncStream<Void>? = nil,
        stopping: @escaping @Sendable (Stop, _ openSessions: Int) -> Void = { _, _ in }, leftOpen: @escaping @Sendable (Int) -> Void = { _ in }
    ) async throws -> Stop {
        let request = StopRequest()
        var services: [any Service] = []
        if let metrics { services.append(TaskService(task: metrics)) }
        if let web { services.append(web) }
        if let control { services.append(ControlService(server: control)) }
        services.append(NodeService(runtime: runtime, grace: grace, request: request, stopping: stopping, leftOpen: leftOpen))
        services.append(SupervisionService(runtime: runtime, notifier: notifier, events: events, ready: ready, request: request))
        var logger = Logger(label: "nearcard.lifecycle")
        logger.logLevel = .critical
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: services.map {
                    // A service that ends on its own (the web app that cannot bind) stops the rest in order.
                    ServiceGroupConfiguration.ServiceConfiguration(
                        service: $0, successTerminationBehavior: .gracefullyShutdownGroup, failureTerminationBehavior: .gracefullyShutdownGroup)
                }, logger: logger))
        let signals = Task {
            for await signal in NodeSetup.interrupts() {
                request.ask(signal == SIGTERM ? .drain : .atOnce)
                await group.triggerGracefulShutdown()
            }
        }
        defer { signals.cancel() }
        let quitting = quit.map { stream in
            Task {
                for await _ in stream {}
                request.ask(.atOnce)
                await group.triggerGracefulShutdown()
            }
        }
        defer { quitting?.cancel() }
        try await group.run()
        return request.value
    }

    /// A task that runs until the group stops (the metrics endpoint's server), then is cancelled.
    struct TaskService: Service {
        let task: Task<Void, Never>
        func run() async throws {
            try? await gracefulShutdown()
            task.cancel()
        }
    }

    /// The control socket: open until the group stops, closed after the node (so a command beside the
    /// node hears how its exchange ended).
    struct ControlService: Service {
        let server: ControlServer
        func run() async throws {
            try? await gracefulShutdown()
            server.stop()
        }
    }

    /// The node, bound and serving before the group starts: stopped (drained or at once) when the group stops.
    struct NodeService: Service {
        let runtime: NodeRuntime
        let grace: TimeInterval
        let request: StopRequest
        /// Said as the node starts to stop: how, and how many sessions are open.
        let stopping: @Sendable (Stop, Int) -> Void
        let leftOpen: @Sendable (Int) -> Void

        func run() async throws {
            try? await gracefulShutdown()
            // Not in this (possibly cancelled) task: the stop waits on timers a cancelled task would skip.
            let (runtime, grace, stop) = (self.runtime, self.grace, request.value)
            let (stopping, leftOpen) = (self.stopping, self.leftOpen)
            await Task {
                stopping(stop, runtime.openSessions)
                if stop == .drain {
                    let left = await runtime.drain(grace: grace)
                    if left > 0 { leftOpen(left) }
                } else {
                    await runtime.stop()
                }
            }.value
        }
    }

    /// Under systemd (`Type=notify`): READY once everything serves, a STATUS kept current as sessions
    /// start and end, WATCHDOG at half its interval while the node's event loops answer, and STOPPING
    /// first when the group stops. Without systemd it only waits.
    struct SupervisionService: Service {
        let runtime: NodeRuntime
        let notifier: ServiceNotifier
        let events: EventBus
        let ready: AsyncStream<Void>?
        let request: StopRequest

        func run() async throws {
            guard notifier.isActive else {
                try? await gracefulShutdown()
                return
            }
            if let ready { await cancelWhenGracefulShutdown { for await _ in ready {} } }
            let supervision = NodeCommand.supervise(runtime, service: notifier, events: events)
            try? await gracefulShutdown()
            supervision.cancel()
            let open = runtime.openSessions
            notifier.stopping(
                status: request.value == .drain && open > 0 ? "stopping, \(open) session\(open == 1 ? "" : "s") finishing" : "stopping")
        }
    }
}
