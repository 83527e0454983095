public import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The systemd notify protocol (sd_notify(3)), spoken by hand: datagrams of `KEY=value` lines to the
/// AF_UNIX socket named by `$NOTIFY_SOCKET` (a path, or `@name` for the abstract namespace). Without
/// that variable (not started by systemd with `Type=notify`) every call is a no-op.
///
/// A serving node says READY=1 once it listens, keeps STATUS= current ("serving, 3 sessions, 1,204
/// exchanges"), pings WATCHDOG=1 at half of `$WATCHDOG_USEC` while its event loops answer, and says
/// STOPPING=1 when it starts draining.
public final class ServiceNotifier: Sendable {
    private let address: [UInt8]?
    private let fd: Int32
    /// How often systemd expects WATCHDOG=1, when it asked (`WatchdogSec=`).
    public let watchdogInterval: TimeInterval?
    private let lastStatus = Mutex<(text: String, at: TimeInterval)>(("", 0))

    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        var address: [UInt8]? = nil
        if let path = environment["NOTIFY_SOCKET"], !path.isEmpty, path.hasPrefix("/") || path.hasPrefix("@") {
            var bytes = Array(path.utf8)
            if bytes[0] == UInt8(ascii: "@") { bytes[0] = 0 }
            address = bytes
        }
        self.address = address
        fd = address == nil ? -1 : socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var interval: TimeInterval? = nil
        if let usec = environment["WATCHDOG_USEC"].flatMap(UInt64.init), usec > 0 {
            let pid = environment["WATCHDOG_PID"].flatMap(Int32.init)
            if pid == nil || pid == getpid() { interval = TimeInterval(usec) / 1e6 }
        }
        watchdogInterval = address == nil ? nil : interval
    }

    deinit {
        if fd >= 0 { close(fd) }
    }

    /// Whether systemd is listening (started with `Type=notify`).
    public var isActive: Bool { address != nil && fd >= 0 }

    /// Sends `KEY=value` lines; returns whether the datagram went out.
    @discardableResult
    package func notify(_ fields: [String: String]) -> Bool {
        guard let address, fd >= 0 else { return false }
        let text = fields.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "\n")
        var sun = sockaddr_un()
        sun.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: sun.sun_path)
        guard address.count < capacity else { return false }
        withUnsafeMutableBytes(of: &sun.sun_path) { raw in
            for (i, b) in address.enumerated() { raw[i] = b }
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + address.count)
        let sent = Array(text.utf8).withUnsafeBytes { body in
            withUnsafePointer(to: &sun) { sp in
                sp.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(fd, body.baseAddress, body.count, Int32(MSG_NOSIGNAL), $0, length) }
            }
        }
        return sent == text.utf8.count
    }

    public func ready(status: String) { notify(["READY": "1", "STATUS": status]) }

    /// Updates STATUS=, at most once a second unless `force` (the same text is not sent again).
    public func status(_ text: String, force: Bool = false) {
        let now = Date().timeIntervalSince1970
        let send = lastStatus.withLock { last -> Bool in
            guard last.text != text, force || now - last.at >= 1 else { return false }
            last = (text, now)
            return true
        }
        if send { notify(["STATUS": text]) }
    }

    public func stopping(status: String) { notify(["STOPPING": "1", "STATUS": status]) }

    public func watchdog() { notify(["WATCHDOG": "1"]) }

    /// "serving, 3 sessions, 1,204 exchanges"
    public static func servingStatus(sessions: Int, exchanges: Int) -> String {
        let f = NumberFormatter()
        f.numberStyle = .decimal
        f.locale = Locale(identifier: "en_US_POSIX")
        f.usesGroupingSeparator = true
        f.groupingSeparator = ","
        let n = f.string(from: NSNumber(value: exchanges)) ?? "\(exchanges)"
        return "serving, \(sessions) session\(sessions == 1 ? "" : "s"), \(n) exchange\(exchanges == 1 ? "" : "s")"
    }
}
