import Foundation
import NearcardNode
import NearcardProcess

/// A question as a desktop notification (org.freedesktop.Notifications on the session bus, through
/// libnotify's `notify-send`): a summary, a body, and actions; the answer is the action chosen, or nil
/// when it was closed, expired, or notifications are not available here.
enum DesktopNotification {
    static var notifySend: String? {
        ["/usr/bin/notify-send", "/bin/notify-send"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Whether a desktop (a session bus) is there to show notifications on.
    static var available: Bool {
        notifySend != nil && ProcessInfo.processInfo.environment["DBUS_SESSION_BUS_ADDRESS"].map { !$0.isEmpty } == true
    }

    /// Shows the notification and waits for an action (`actions`: key → label; "default" is a click on
    /// the notification itself) for at most `seconds`.
    static func ask(summary: String, body: String, actions: [(String, String)], seconds: Double) async -> String? {
        guard let tool = notifySend else { return nil }
        let argv =
            [tool, "--app-name=Nearcard", "--urgency=critical", "--expire-time=\(Int(seconds * 1000))"]
            + actions.map { "--action=\($0.0)=\($0.1)" } + ["--", summary, body]
        guard let child = try? ChildProcess(argv, log: "/dev/null", pipes: true) else { return nil }
        let (lines, line) = AsyncStream.makeStream(of: String?.self)
        child.readLines(
            { line.yield($0) },
            atEnd: {
                line.yield(nil)
                line.finish()
            })
        let timer = Task {
            try? await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
            line.yield(nil)
        }
        defer {
            timer.cancel()
            child.stop(after: 0)
        }
        for await l in lines {
            guard let l else { return nil }
            let key = l.trimmingCharacters(in: .whitespaces)
            if actions.contains(where: { $0.0 == key }) { return key }
        }
        return nil
    }
}
