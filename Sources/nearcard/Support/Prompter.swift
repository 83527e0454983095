import Foundation
import NearcardCrypto
import NearcardModel
import NearcardNode

#if canImport(Glibc)
    import Glibc
    import NearcardProtocol
#endif

/// Lines from standard input, read on their own thread; a reader waits with a timeout without
/// disturbing the stream. The thread starts with the first question, not before: until then the
/// terminal belongs to whoever else reads it (the passphrase prompt that unlocks the keys at start,
/// which a reader already waiting on standard input would have robbed of its line).
final class LineQueue: @unchecked Sendable {
    private let condition = NSCondition()
    private var lines: [String] = []
    private var ended = false
    private var started = false

    /// Starts the reading thread once; called with `condition` held.
    private func startReading() {
        guard !started else { return }
        started = true
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
    func discardPending() {
        condition.withLock {
            startReading()
            lines.removeAll()
        }
    }

    /// One wait for a line, which can be called off.
    final class Wait: @unchecked Sendable {
        var cancelled = false
    }

    /// The next line, or nil at the timeout, at end of input, or when `wait` is cancelled.
    func next(timeout: TimeInterval, wait: Wait) -> String? {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        startReading()
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

/// Serialises conversations with the person at the terminal: one at a time (a request's details, its
/// question and its follow-up question stay together on screen), each question with a timeout.
actor Prompter {
    private let input = LineQueue()
    private var busy = false
    private var waiting: [(id: UUID, turn: CheckedContinuation<Bool, Never>)] = []

    /// Runs `body` with the terminal to itself: the next conversation starts when this one ends. nil
    /// when the calling task is cancelled before its turn comes (the request it was for has gone, and
    /// nothing of it is printed).
    func conversation<T: Sendable>(_ body: @Sendable (Prompter) async -> T) async -> T? {
        guard await take() else { return nil }
        defer { give() }
        return await body(self)
    }

    /// One question as a conversation of its own.
    func ask(_ question: String, timeout: TimeInterval) async -> String? {
        await conversation { await $0.read(question, timeout: timeout) } ?? nil
    }

    private func take() async -> Bool {
        if Task.isCancelled { return false }
        if !busy {
            busy = true
            return true
        }
        let id = UUID()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (turn: CheckedContinuation<Bool, Never>) in waiting.append((id, turn)) }
        } onCancel: {
            Task { await self.withdraw(id) }
        }
    }

    private func withdraw(_ id: UUID) {
        guard let i = waiting.firstIndex(where: { $0.id == id }) else { return }
        waiting.remove(at: i).turn.resume(returning: false)
    }

    private func give() {
        if waiting.isEmpty { busy = false } else { waiting.removeFirst().turn.resume(returning: true) }
    }

    /// Asks within a conversation and waits for a line; nil on timeout, end of input, or when the
    /// calling task is cancelled (the request it was for has gone).
    func read(_ question: String, timeout: TimeInterval) async -> String? {
        if Task.isCancelled || timeout <= 0 { return nil }
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

/// Consent from the person at the terminal: who, the SAS, "accept? [y/N]", then an optional message —
/// one request at a time: a request that arrives while another is on screen waits, unseen, until that one
/// is answered or has timed out, and is then shown with the time it has left.
struct TerminalConsent: ConsentProvider {
    let prompter: Prompter
    let message: String?
    let timeout: TimeInterval

    func decide(_ request: ConsentRequest) async -> ConsentAnswer {
        let deadline = Date().addingTimeInterval(timeout)
        let message = self.message
        let answer = await prompter.conversation { terminal -> ConsentAnswer in
            let left = deadline.timeIntervalSinceNow
            guard left >= 1 else { return .decline("no answer within \(Int(timeout)) s") }
            let p = request.peer
            Console.out("")
            Console.out("Exchange request from \(p.name ?? "(no name)") at \(request.remoteAddress)")
            Console.out("  DID          \(p.did)")
            Console.out("  Fingerprint  \(p.fingerprint)")
            Console.out("  Check code   \(request.sas)   ← must match the code on the other screen")
            guard let answer = await terminal.read("Accept and exchange cards? (\(Int(left)) s to answer) [y/N] ", timeout: left),
                ["y", "yes"].contains(answer.trimmingCharacters(in: .whitespaces).lowercased())
            else {
                return .decline("declined at the terminal")
            }
            if let message { return ConsentAnswer(accept: true, message: message) }
            if Task.isCancelled { return .decline("withdrawn") }
            return await Self.askMessage(terminal, timeout: deadline.timeIntervalSinceNow)
        }
        return answer ?? .decline("withdrawn")
    }

    static func askMessage(_ terminal: Prompter, timeout: TimeInterval) async -> ConsentAnswer {
        let typed = await terminal.read("Message for them (optional, up to 140 characters, Enter for none): ", timeout: timeout)
        let text = typed?.trimmingCharacters(in: .whitespaces) ?? ""
        if let problem = text.isEmpty ? nil : ProximityPayload.messageProblem(text) {
            Console.out("(\(problem); sending no message)")
            return ConsentAnswer(accept: true)
        }
        return ConsentAnswer(accept: true, message: text.isEmpty ? nil : text)
    }
}
