public import Foundation
internal import NIOConcurrencyHelpers
public import NearcardCrypto
public import NearcardNode
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
    /// Open until `finish` has written `stopped`: no line follows that one.
    private let open = NIOLockedValueBox(true)
    private let state = Mutex<(controller: Controller?, reader: Task<Void, Never>?)>((nil, nil))

    /// Writes the node's events from now on, so the first ones (`started`, `published`) are not missed.
    /// Each line is written as its event is emitted, on the thread that emits it (often an event
    /// loop): no task is woken per event, which on a busy bot costs more than the line. `output` must
    /// therefore return promptly; a reader that stops reading holds the node up, as a blocked log
    /// would, rather than the node queueing lines without bound.
    public init(configuration context: NodeConfiguration, output: @escaping @Sendable (JSONValue) -> Void) {
        self.output = output
        let identity = context.identity
        let open = self.open
        // The ordering rule (an answer that comes the moment the program reads a request's line finds
        // it) is kept by the node: a request is registered (ConsentProvider.expect) before its event.
        // One session's events are emitted one after another on its loop, so they are written in order.
        context.events.observe { event in
            guard let line = JSONLines.encode(event, identity: identity) else { return }
            open.withLockedValue { if $0 { output(line) } }
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

    /// Stops reading commands, lets running ones answer (up to `timeout` seconds), then writes
    /// `stopped`, the last line. Call after the node has stopped.
    public func finish(timeout: TimeInterval = 1) async {
        let (controller, reader) = state.withLock { $0 }
        reader?.cancel()
        await controller?.drain(timeout: timeout)
        open.withLockedValue { isOpen in
            guard isOpen else { return }
            isOpen = false
            output(JSONLines.line("stopped"))
        }
    }
}
