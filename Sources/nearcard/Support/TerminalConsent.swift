import Foundation
import NearcardCrypto
import NearcardModel
import NearcardNode

#if canImport(Glibc)
    import Glibc
#endif

/// Consent from the person at the terminal: who, the SAS, "accept? [y/N]", then an optional message —
/// one request at a time: a request that arrives while another is on screen waits, unseen, until that one
/// is answered or has timed out, and is then shown with the time it has left.
struct TerminalConsent: ConsentProvider {
    let prompter: Prompter
    let message: String?
    let timeout: TimeInterval
    /// Told the person's answer (yes or no), as soon as it is given.
    var answered: @Sendable (Bool) -> Void = { _ in }

    func decide(_ request: ConsentRequest) async -> ConsentAnswer {
        await ask(SessionStory.Asked(request))
    }

    /// The question itself, for a request this process's node or the home's running node asks.
    func ask(_ request: SessionStory.Asked) async -> ConsentAnswer {
        let deadline = Date().addingTimeInterval(timeout)
        let message = self.message
        let answer = await prompter.conversation { terminal -> ConsentAnswer in
            let left = deadline.timeIntervalSinceNow
            guard left >= 1 else { return .decline("no answer within \(Int(timeout)) s") }
            for line in SessionStory.request(request) { Console.out(line) }
            guard let answer = await terminal.read(SessionStory.question(request, secondsLeft: Int(left)), timeout: left),
                Self.isYes(answer)
            else {
                return .decline()
            }
            if let message { return ConsentAnswer(accept: true, message: message) }
            if Task.isCancelled { return .decline("withdrawn") }
            return await Self.askMessage(terminal, timeout: deadline.timeIntervalSinceNow)
        }
        let given = answer ?? .decline("withdrawn")
        answered(given.accept)
        return given
    }

    /// "y" or "yes", or the person's language's short and long yes (what its `[y/N]` names).
    static func isYes(_ answer: String) -> Bool {
        let a = answer.trimmingCharacters(in: .whitespaces).lowercased()
        return ["y", "yes", t("y", context: "answer"), t("yes", context: "answer")].contains(a)
    }

    static func askMessage(_ terminal: Prompter, timeout: TimeInterval) async -> ConsentAnswer {
        let typed = await terminal.read(t("Message for them (optional, up to 140 characters, Enter for none): "), timeout: timeout)
        let text = typed?.trimmingCharacters(in: .whitespaces) ?? ""
        if let problem = text.isEmpty ? nil : ProximityPayload.messageProblemPhrase(text).map(t.say) {
            Console.out(t("(%1$@; sending no message)", problem))
            return ConsentAnswer(accept: true)
        }
        return ConsentAnswer(accept: true, message: text.isEmpty ? nil : text)
    }
}
