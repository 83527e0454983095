import Foundation
internal import NIOConcurrencyHelpers

/// Admission control for a listening node: a cap on sessions, per-address concurrency, and a
/// per-address rate (a token bucket refilled over a minute). A refused address is reported once
/// per minute, not per connection.
public final class Admission: Sendable {
    struct AddressState {
        var open = 0
        var tokens: Double
        var lastRefill: TimeInterval
        var lastReported: TimeInterval = -.infinity
    }

    struct State {
        var open = 0
        var addresses: [String: AddressState] = [:]
    }

    private let state = NIOLockedValueBox(State())
    let limits: NodeLimits

    public init(limits: NodeLimits) { self.limits = limits }

    public enum Decision: Equatable {
        case admit
        /// Refused; `report` is true the first time in a minute for this address.
        case refuse(reason: String, report: Bool)
    }

    public func admit(address: String, now: TimeInterval = Date().timeIntervalSince1970) -> Decision {
        state.withLockedValue { s in
            let rate = Double(limits.connectionsPerAddressPerMinute)
            var a = s.addresses[address] ?? AddressState(tokens: rate, lastRefill: now)
            a.tokens = min(rate, a.tokens + (now - a.lastRefill) * rate / 60)
            a.lastRefill = now
            var refusal: String?
            if s.open >= limits.maximumSessions {
                refusal = "node at its limit of \(limits.maximumSessions) sessions"
            } else if a.open >= limits.maximumSessionsPerAddress {
                refusal = "more than \(limits.maximumSessionsPerAddress) sessions at once from one address"
            } else if a.tokens < 1 {
                refusal = "more than \(limits.connectionsPerAddressPerMinute) connections a minute from one address"
            }
            if let refusal {
                let report = now - a.lastReported >= 60
                if report { a.lastReported = now }
                s.addresses[address] = a
                return .refuse(reason: refusal, report: report)
            }
            a.tokens -= 1
            a.open += 1
            s.open += 1
            s.addresses[address] = a
            if s.addresses.count > 10_000 { Self.prune(&s, now: now) }
            return .admit
        }
    }

    public func release(address: String) {
        state.withLockedValue { s in
            s.open = max(0, s.open - 1)
            if var a = s.addresses[address] {
                a.open = max(0, a.open - 1)
                s.addresses[address] = a
            }
        }
    }

    public var openSessions: Int { state.withLockedValue { $0.open } }

    /// Forget idle addresses whose buckets are full again (bounds memory under a flood of sources).
    static func prune(_ s: inout State, now: TimeInterval) {
        s.addresses = s.addresses.filter { $0.value.open > 0 || now - $0.value.lastRefill < 60 }
    }
}
