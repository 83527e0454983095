import ArgumentParser
import Foundation
import NearcardControl
import NearcardCrypto
import NearcardModel
import NearcardNode
import NearcardProcess
import NearcardWeb
import ServiceLifecycle
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// `nearcard ui`: the node, as `listen` runs it, with a web app on loopback to drive it.
struct UICommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ui",
        abstract: t("Run the node with a web app on this machine (http://127.0.0.1:7448/)."),
        discussion: t(
            """
            Starts the node as `listen` does (same options) and serves its pages on loopback: who is nearby, \
            requests with their check codes, contacts, messages, your card and what each exchange shares, \
            and scanning a code from a photo. With no page open, a request is a desktop \
            notification whose Accept and Decline answer it. The address printed carries a token, new each time ui starts \
            (kept 0600 in your home as ui-token); the page trades it for a cookie. Only this machine's \
            browser, on the printed address, can drive the node. A second `nearcard ui` while one runs opens \
            the running one's page. Ctrl-C stops both; SIGTERM (a service's stop) first lets sessions in flight \
            finish within --grace seconds, the page still up to answer them.
            """
        ))

    @OptionGroup var global: GlobalOptions
    @OptionGroup var node: NodeOptions

    @Option(parsing: .unconditional, help: ArgumentHelp(t("The web app's port.")))
    var uiPort: Int = WebUI.defaultPort

    @Option(help: ArgumentHelp(t("The web app's address: 127.0.0.1, ::1 or localhost.")))
    var uiAddress: String = "127.0.0.1"

    @Flag(help: ArgumentHelp(t("Print the address instead of opening it with xdg-open.")))
    var noBrowser = false

    func validate() throws {
        if !(1...65535).contains(uiPort) { throw ValidationError(t("--ui-port must be 1…65535")) }
        if !["127.0.0.1", "::1", "localhost"].contains(uiAddress) {
            throw ValidationError(t("--ui-address must be a loopback address (127.0.0.1, ::1 or localhost): the app is for this machine only"))
        }
    }

    var tokenPath: String { global.resolvedHome.path + "/ui-token" }

    func run() async throws {
        // The node holds the secret keys as long as it serves: no core dump, no same-user ptrace.
        KeysOutOfReach.apply()
        let address = uiAddress == "localhost" ? "127.0.0.1" : uiAddress
        // One node per home: a `ui` already running for it (on whatever port) is opened, not started
        // twice; a `listen` or `bot` serving it is named.
        let home = global.resolvedHome.path
        let lock: NodeLock
        switch NodeLock.acquire(home: home, command: "ui") {
        case .success(let held): lock = held
        case .failure(let holder):
            if let page = holder.page, let token = try? String(contentsOfFile: tokenPath, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines),
                !token.isEmpty
            {
                let running = page + "/?token=" + token
                Console.out(t("Nearcard is already open at %1$@", running))
                if !noBrowser { Self.open(running) }
                return
            }
            throw CLIError(.environment, NodeLock.refusal(holder, home: home))
        }
        defer { withExtendedLifetime(lock) {} }
        if let running = await runningInstance(address: address) {
            Console.out(t("Nearcard is already open at %1$@", running))
            if !noBrowser { Self.open(running) }
            return
        }
        NodeSetup.raiseOpenFileLimit()
        // --metrics, --log-level, --node-name and --grace as `listen` takes them.
        NodeCommand.sayMissingInterfaces(node)
        let metricsServer = try await NodeCommand.startMetrics(node)
        defer { metricsServer?.cancel() }
        let events = EventBus()
        NodeCommand.startLogging(node, events: events, defaultLevel: nil)
        let context = try NodeSetup.context(
            global, consent: DecidedByCommand(decisions: PendingDecisions(), message: nil), events: events,
            limits: node.limits(), nodeName: node.nodeName, serving: true)
        let runtime: NodeRuntime
        do { runtime = try await NodeRuntime.start(context, options: node.runtime) } catch {
            if error is NodeError { throw error }
            throw CLIError(.environment, t("cannot listen on port %1$@: %2$@", String(node.port), "\(error)"))
        }
        let token = WebUI.newToken()
        try PrivateFiles.write(SecureBytes(Array(token.utf8)), to: tokenPath, mode: 0o600, replace: true)
        let web = WebUI(runtime: runtime, options: WebUI.Options(address: address, port: uiPort, token: token, secretsDirectory: global.resolvedHome.path))

        let control = NodeCommand.startControl(home: home, runtime: runtime) { Console.err("nearcard: \($0)") }
        // Once the page serves: a second `ui` of this home finds it (its token is in ui-token), the
        // browser opens it, systemd hears READY.
        let (ready, readyNow) = AsyncStream.makeStream(of: Void.self)
        let (page, pageUp) = AsyncStream.makeStream(of: Void.self)
        final class Served: Sendable { let value = Mutex(false) }
        let served = Served()
        let base = "http://\(address == "::1" ? "[::1]" : address):\(uiPort)"
        let greeter = Task { [noBrowser] in
            for await _ in page {}
            guard !Task.isCancelled else { return }
            lock.record(NodeLock.Holder(command: "ui", pid: Int(getpid()), port: runtime.port, page: base))
            // Said as it is: opened in a browser, or only served (--no-browser, no xdg-open).
            if !noBrowser && Self.open(web.address) {
                Console.out(t("Opened Nearcard in your browser: %1$@", web.address))
            } else {
                Console.out(t("Nearcard's page: %1$@", web.address))
                Console.out("  " + t("(open that address in a browser on this computer; nothing was opened)"))
            }
            Console.out(
                t(
                    "Listening for exchanges on port %1$@ as %2$@, fingerprint %3$@. Ctrl-C to stop.", String(runtime.port ?? node.port),
                    context.identity.name ?? t("(no name)"), context.identity.fingerprint))
            if !DesktopNotification.available {
                Console.err(
                    "nearcard: "
                        + t(
                            "desktop notifications are not available here (no session bus): a request that arrives while no page is open waits unseen until it times out; keep the page open"
                        ))
            }
        }
        defer { greeter.cancel() }
        // The terminal tells the story too: requests as they arrive, and how each exchange ended.
        let teller = Task { [events = events.subscribe()] in
            for await event in events {
                switch event {
                case .exchangeRequested(_, let peer, let sas, .responder, _, _):
                    Console.out(
                        t("→ Exchange request from %1$@ (check code %2$@): answer it on the page", peer.name.map(Console.isolated) ?? t("(no name)"), sas))
                case .exchangeCompleted(_, let contact, _, _, _):
                    Console.out(
                        t(
                            "✔ Exchanged cards with %1$@ — contact %2$@ (%3$@)", Console.isolated(contact.name), String(contact.id.prefix(8)),
                            contact.verificationStatus.rawValue))
                default:
                    if let (text, stream) = SessionStory.line(for: event) { stream == .out ? Console.out(text) : Console.err(text) }
                }
            }
        }
        defer { teller.cancel() }

        // With no page open, a request is a desktop notification whose actions answer it.
        let notifier = Task { [events = events.subscribe()] in
            guard DesktopNotification.available else { return }
            for await event in events {
                // An exchange settled while the page is closed: said on the desktop too.
                if case .exchangeSettled(_, let name, let kept) = event, web.openPages == 0 {
                    Task {
                        _ = await DesktopNotification.ask(
                            summary: kept ? t("Exchange with %1$@ confirmed", name) : t("Exchange with %1$@ withdrawn", name),
                            body: SessionStory.settled(name: name, kept: kept), actions: [("default", t("Open Nearcard"))], seconds: 10)
                    }
                    continue
                }
                guard case .exchangeRequested(let id, let peer, let sas, .responder, true, _) = event, web.openPages == 0 else { continue }
                Task {
                    let who = peer.name ?? t("someone without a name")
                    let answer = await DesktopNotification.ask(
                        summary: t("Exchange request from %1$@", who),
                        body: t("Check code %1$@: compare it with their screen.", sas) + "\n" + t("Fingerprint %1$@", peer.fingerprint),
                        actions: [("accept", t("Accept")), ("decline", t("Decline")), ("default", t("Open Nearcard"))],
                        seconds: context.limits.consentTimeout)
                    switch answer {
                    case "accept": try? runtime.answer(request: id, accept: true)
                    case "decline": try? runtime.answer(request: id, accept: false)
                    case "default": Self.open(web.address)
                    default: break
                    }
                }
            }
        }
        defer { notifier.cancel() }

        // One service group until a stop (NodeLifecycle): Ctrl-C at once; SIGTERM (a service's stop) drains,
        // the page still up to answer the requests of the sessions in flight.
        do {
            _ = try await NodeLifecycle.run(
                runtime: runtime, grace: node.grace, metrics: metricsServer,
                web: WebService(
                    web: web,
                    running: {
                        served.value.withLock { $0 = true }
                        pageUp.finish()
                        readyNow.finish()
                    }),
                control: control, notifier: ServiceNotifier(environment: global.environment), events: events, ready: ready,
                // A page that never served (its port taken) is said as the one error below, no "Stopping…".
                stopping: { how, open in if served.value.withLock({ $0 }) { NodeCommand.sayStopping(how, open: open, grace: node.grace) } },
                leftOpen: { left in NodeCommand.sayLeftOpen(left, grace: node.grace) })
        } catch {
            throw CLIError(
                .environment, t("cannot serve the web app on %1$@:%2$@: %3$@; choose another port with --ui-port", address, String(uiPort), Self.reason(error)))
        }
        try? FileManager.default.removeItem(atPath: tokenPath)
        context.book.compact() // a clean stop leaves no WAL behind
    }

    /// The web app in the node's service group: it serves until the group stops, after the node and
    /// the control socket; its event streams are closed first, so no open page holds the stop up.
    struct WebService: Service {
        let web: WebUI
        let running: @Sendable () -> Void
        func run() async throws {
            try await withGracefulShutdownHandler {
                try await web.run(onRunning: running)
            } onGracefulShutdown: {
                Task { [web] in await web.closeStreams() }
            }
        }
    }

    /// A bind failure as a person reads it ("the port is in use"), not the socket call's description.
    static func reason(_ failure: any Error) -> String {
        switch BindProblem(failure) {
        case .inUse?: t("the port is in use by another program")
        case .privileged?: t("this user may not use that port")
        case .noSuchAddress?: t("this machine has no such address")
        case nil: "\(failure)"
        }
    }

    /// The address of a web app already serving this home on the port, if one answers to its token.
    func runningInstance(address: String) async -> String? {
        guard let token = try? String(contentsOfFile: tokenPath, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines), !token.isEmpty,
            await WebUI.answers(address: address, port: uiPort, token: token)
        else { return nil }
        return "http://\(address == "::1" ? "[::1]" : address):\(uiPort)/?token=\(token)"
    }

    /// Opens the address in the desktop's browser; says so when there is none.
    /// Whether it was handed to a browser.
    @discardableResult
    static func open(_ address: String) -> Bool {
        guard let opener = ["/usr/bin/xdg-open", "/bin/xdg-open"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            Console.err("nearcard: " + t("no xdg-open to open the page with: open the address in a browser"))
            return false
        }
        return (try? ChildProcess([opener, address], log: "/dev/null", pipes: false)) != nil
    }
}
