import Foundation
internal import NIOConcurrencyHelpers
import NearcardCrypto
import NearcardModel
import NearcardProtocol
import NearcardStore

/// Consent given by a program over the JSON-lines interface: each request waits for an `accept ID`
/// or `decline ID` command (the node's consent timeout still applies).
public final class PendingDecisions: ConsentProvider, Sendable {
    enum Slot {
        /// Announced to the program (exchange.requested) but the session has not asked yet.
        case announced
        /// Answered before the session asked: the answer waits for it.
        case answered(ConsentAnswer)
        case waiting(CheckedContinuation<ConsentAnswer, Never>)
        case withdrawn
    }

    private let slots = NIOLockedValueBox<[String: Slot]>([:])

    public init() {}

    public var waitsForCommand: Bool { true }
    public func expect(_ exchangeID: String) { announce(exchangeID) }

    /// Marks a request as shown to the program. Call it before the `exchange.requested` line is
    /// written, so that an answer arriving before the session asks is kept rather than refused.
    package func announce(_ id: String) {
        slots.withLockedValue { s in if s[id] == nil { s[id] = .announced } }
    }

    public func decide(_ request: ConsentRequest) async -> ConsentAnswer {
        let id = request.exchangeID
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<ConsentAnswer, Never>) in
                let ready = slots.withLockedValue { s -> ConsentAnswer? in
                    switch s[id] {
                    case .withdrawn?:
                        s[id] = nil
                        return .decline("the request was withdrawn")
                    case .answered(let a)?:
                        s[id] = nil
                        return a
                    default:
                        s[id] = .waiting(c)
                        return nil
                    }
                }
                if let ready { c.resume(returning: ready) }
            }
        } onCancel: {
            // The session ended (or timed out) first: release the waiter.
            let c = slots.withLockedValue { s -> CheckedContinuation<ConsentAnswer, Never>? in
                if case .waiting(let c) = s[id] {
                    s[id] = nil
                    return c
                }
                s[id] = .withdrawn
                return nil
            }
            c?.resume(returning: .decline("the request was withdrawn"))
        }
    }

    /// Answers a request; false when none with this id is open (answered, timed out, or unknown).
    public func resolve(_ id: String, _ answer: ConsentAnswer) -> Bool {
        let (found, c) = slots.withLockedValue { s -> (Bool, CheckedContinuation<ConsentAnswer, Never>?) in
            switch s[id] {
            case .waiting(let c)?:
                s[id] = nil
                return (true, c)
            case .announced?:
                s[id] = .answered(answer)
                return (true, nil)
            default: return (false, nil)
            }
        }
        c?.resume(returning: answer)
        return found
    }

    /// The ids waiting for a decision.
    package var pending: [String] {
        slots.withLockedValue { s in
            s.compactMap {
                switch $0.value {
                case .waiting, .announced: $0.key
                default: nil
                }
            }.sorted()
        }
    }
}
