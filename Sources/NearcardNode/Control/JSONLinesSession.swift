import Foundation
import NearcardCrypto
import Synchronization

/// A node driven by a program over JSON lines (docs/JSONL.md): every event as one line, in the order it
/// happened; commands in, one per line, each answered by a `reply`; `stopped` last. The face only moves
/// lines (stdin, stdout, a socket) and says when to stop.
///
///     let session = JSONLinesSession(context: context, output: write)   // before the node starts
///     let runtime = try await NodeRuntime.start(context: context, options: options)
///     session.serve(runtime, commands: lines, quit: stop)
///     …
///     await runtime.stop(); await session.finish()
public final class JSONLinesSession: Sendable {
    private let output: @Sendable (JSONValue) -> Void
    private let events: EventBus
    private let printer: Task<Void, Never>
    private let state = Mutex<(controller: Controller?, reader: Task<Void, Never>?)>((nil, nil))

    /// Starts writing the node's events at once, so the first ones (`started`, `published`) are not missed.
    public init(context: NodeContext, output: @escaping @Sendable (JSONValue) -> Void) {
        self.output = output
        self.events = context.events
        let stream = context.events.subscribe()
        let identity = context.identity
        printer = Task {
            // The ordering rule (an answer that comes the moment the program reads a request's line finds
            // it) is kept by the node: a request is registered (ConsentProvider.expect) before its event.
            for await event in stream {
                if let line = JSONLines.encode(event, identity: identity) { output(line) }
            }
        }
    }

    /// A `warning` line (something the operator should know that stops nothing).
    public func warn(_ message: String) {
        output(JSONLines.line("warning", ["message": .string(message)]))
    }

    /// Answers `commands` against the running node until they end (the end of input stops reading, not
    /// the node: a service's stdin is /dev/null); `quit` is called for a `quit` command.
    public func serve(_ runtime: NodeRuntime, commands: AsyncStream<String>, quit: @escaping @Sendable () -> Void) {
        let controller = Controller(runtime: runtime, output: output, quit: quit)
        let reader = Task.detached {
            for await line in commands { controller.handle(line: line) }
        }
        state.withLock { $0 = (controller, reader) }
    }

    /// Stops reading commands, lets running ones answer (up to `timeout` seconds), writes what the node
    /// reported until now, then `stopped`. Call after the node has stopped.
    public func finish(timeout: TimeInterval = 1) async {
        let (controller, reader) = state.withLock { $0 }
        reader?.cancel()
        await controller?.drain(timeout: timeout)
        // Let the printer write what is already queued, then say goodbye.
        try? await Task.sleep(nanoseconds: 50_000_000)
        events.finish()
        await printer.value
        output(JSONLines.line("stopped"))
    }
}
