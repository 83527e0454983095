import Foundation
import NearcardCrypto
import NearcardModel
import NearcardNode
#if canImport(Glibc)
import Glibc
#endif

/// Lines from standard input, read on their own thread; a reader waits with a timeout without
/// disturbing the stream.
final class LineQueue: @unchecked Sendable {
    private let condition = NSCondition()
    private var lines: [String] = []
    private var ended = false

    init() {
        let reader = Thread { [self] in
            while let line = readLine(strippingNewline: true) {
                condition.withLock {
                    lines.append(line)
                    condition.signal()
                }
            }
            condition.withLock {
                ended = true
                condition.broadcast()
            }
        }
        reader.start()
    }

    /// Drops lines typed while nobody was asking.
    func discardPending() { condition.withLock { lines.removeAll() } }

    /// One wait for a line, which can be called off.
    final class Wait: @unchecked Sendable {
        var cancelled = false
    }

    /// The next line, or nil at the timeout, at end of input, or when `wait` is cancelled.
    func next(timeout: TimeInterval, wait: Wait) -> String? {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while lines.isEmpty && !ended && !wait.cancelled {
            if !condition.wait(until: deadline) { break }
        }
        return lines.isEmpty || wait.cancelled ? nil : lines.removeFirst()
    }

    func cancel(_ wait: Wait) {
        condition.withLock {
            wait.cancelled = true
            condition.broadcast()
        }
    }
}

/// Serialises questions to the person at the terminal: one prompt at a time, each with a timeout.
actor Prompter {
    private let input = LineQueue()
    private var busy = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    /// Asks and waits for a line; nil on timeout, end of input, or when the calling task is cancelled
    /// (the request it was for has gone).
    func ask(_ question: String, timeout: TimeInterval) async -> String? {
        if busy { await withCheckedContinuation { waiting.append($0) } }
        busy = true
        defer {
            if waiting.isEmpty { busy = false } else { waiting.removeFirst().resume() }
        }
        if Task.isCancelled { return nil }
        input.discardPending()
        Console.write(STDOUT_FILENO, question)
        let queue = input
        let wait = LineQueue.Wait()
        let line: String? = await withTaskCancellationHandler {
            await withCheckedContinuation { c in
                Thread { c.resume(returning: queue.next(timeout: timeout, wait: wait)) }.start()
            }
        } onCancel: {
            queue.cancel(wait)
        }
        if line == nil { Console.out(wait.cancelled ? "\n(request withdrawn)" : "\n(no answer within \(Int(timeout)) s)") }
        return line
    }
}

/// Consent from the person at the terminal: who, the SAS, "accept? [y/N]", then an optional message.
struct TerminalConsent: ConsentProvider {
    let prompter: Prompter
    let message: String?
    let timeout: TimeInterval

    func decide(_ request: ConsentRequest) async -> ConsentAnswer {
        let p = request.peer
        Console.out("")
        Console.out("Exchange request from \(p.name ?? "(no name)") at \(request.remoteAddress)")
        Console.out("  DID          \(p.did)")
        Console.out("  Fingerprint  \(p.fingerprint)")
        Console.out("  Check code   \(request.sas)   ← must match the code on the other screen")
        guard let answer = await prompter.ask("Accept and exchange cards? [y/N] ", timeout: timeout),
              ["y", "yes"].contains(answer.trimmingCharacters(in: .whitespaces).lowercased()) else {
            return .decline("declined at the terminal")
        }
        if let message { return ConsentAnswer(accept: true, message: message) }
        if Task.isCancelled { return .decline("withdrawn") }
        let typed = await prompter.ask("Message for them (optional, up to 140 characters, Enter for none): ", timeout: timeout)
        let text = typed?.trimmingCharacters(in: .whitespaces) ?? ""
        if let problem = text.isEmpty ? nil : ProximityPayload.messageProblem(text) {
            Console.out("(\(problem); sending no message)")
            return ConsentAnswer(accept: true)
        }
        return ConsentAnswer(accept: true, message: text.isEmpty ? nil : text)
    }
}
