import Foundation
import NearcardCrypto
import NearcardModel
import NearcardNode

#if canImport(Glibc)
    import Glibc
#endif

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
        if line == nil { Console.out("\n" + (wait.cancelled ? t("(request withdrawn)") : t("(no answer within %1$@ s)", String(Int(timeout))))) }
        return line
    }
}
