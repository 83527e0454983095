import Foundation
import Synchronization

/// Faults a debug (test) build can be told to have, so that `scripts/soak.py --fault NAME` shows it
/// fails a broken node (issue 49.2): `NEARCARD_TEST_FAULT=NAME` in the node's environment. A release
/// build (`make install`, the .deb, `make bench`) compiles none of this in: `active` is always nil there.
package enum TestFault: String, Sendable, CaseIterable {
    /// The listener declines one exchange in ten: exit 7 for its dialler, a "network outcome" the old
    /// soak let pass (the honest success rate catches it).
    case decline
    /// The listener keeps the previous exchange's graph edge on a contact it exchanged with again: both
    /// books hold each other, from different exchanges (pairs compared by edge catch it; by DID do not).
    case staleEdge = "stale-edge"
    /// The listener answers every message "busy": they stay queued in their senders' outboxes (every
    /// queued message delivered by the end catches it).
    case holdMessages = "hold-messages"
    /// The listener leaks a file descriptor per connection it admits (the fd bound catches it).
    case leak
    /// A full listener refuses newcomers instead of closing a connection of the source holding the most
    /// (a flood that reaches the cap, with honest exchanges during it at ≥ 95 %, catches it).
    case noEviction = "no-eviction"

    /// The fault this process has: nil unless a debug build was given one.
    package static let active: TestFault? = {
        #if DEBUG
            guard let name = ProcessInfo.processInfo.environment["NEARCARD_TEST_FAULT"], !name.isEmpty else { return nil }
            guard let fault = TestFault(rawValue: name) else {
                FileHandle.standardError.write(Data("nearcard: NEARCARD_TEST_FAULT=\(name) is no fault this build knows\n".utf8))
                return nil
            }
            FileHandle.standardError.write(Data("nearcard: running with the test fault \(name) (debug build)\n".utf8))
            return fault
        #else
            return nil
        #endif
    }()

    /// Whether this process has `fault`.
    package static func has(_ fault: TestFault) -> Bool { active == fault }

    private static let leaked = Mutex<[Int32]>([])

    /// `leak`: one more descriptor that is never closed.
    package static func leakOne() {
        let fd = open("/dev/null", O_RDONLY)
        if fd >= 0 { leaked.withLock { $0.append(fd) } }
    }
}

/// `decline`: the given consent, except that one request in ten is declined.
final class DecliningSome: ConsentProvider {
    let base: any ConsentProvider
    init(base: any ConsentProvider) { self.base = base }
    let count = Mutex(0)

    func turn() -> Bool {
        count.withLock { n in
            n += 1
            return n % 10 == 0
        }
    }

    func decide(_ request: ConsentRequest) async -> ConsentAnswer {
        turn() ? .decline("the test fault declines one request in ten") : await base.decide(request)
    }
    func immediateAnswer(_ request: ConsentRequest) -> ConsentAnswer? {
        if turn() { return .decline("the test fault declines one request in ten") }
        return base.immediateAnswer(request) ?? nil
    }
    func acceptanceMessage(_ request: ConsentRequest) -> String? { base.acceptanceMessage(request) }
    var waitsForCommand: Bool { base.waitsForCommand }
    func expect(_ exchangeID: String) { base.expect(exchangeID) }
}
