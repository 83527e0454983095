import Foundation
import NearcardCrypto
import NearcardProcess
import NearcardSimulation
import NearcardTestSupport
import Testing

/// `nearcard ui` with no page open: a request is a desktop notification (a real notification daemon,
/// Debian's dunst under Xvfb, on a private session bus), and its Accept action completes the exchange.
@Suite struct NotificationTests {
    func log(_ name: String) -> URL { FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-\(UUID().uuidString)-\(name).log") }

    @Test func aRequestIsANotificationWhoseAcceptAnswersIt() throws {
        for tool in ["/usr/bin/dunst", "/usr/bin/dunstctl", "/usr/bin/Xvfb", "/usr/bin/notify-send"] where !FileManager.default.isExecutableFile(atPath: tool) {
            Issue.record("\(tool) is missing: scripts/install-deps.sh installs it")
            return
        }
        let lab = try Lab("nt")
        let ada = try TestPerson(name: "Ada Lovelace")
        let grace = try TestPerson(name: "Grace Hopper")
        defer {
            ada.cli.cleanUp()
            grace.cli.cleanUp()
        }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-desktop-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // A session bus anyone in this test may use (the node runs as the test account, the desktop as root).
        let bus = "unix:path=\(dir)/session_bus"
        try """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN" "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig><type>session</type><listen>\(bus)</listen><auth>EXTERNAL</auth>
        <policy context="default"><allow user="*"/><allow own="*"/><allow send_destination="*"/><allow receive_sender="*"/></policy></busconfig>
        """.write(toFile: "\(dir)/session.conf", atomically: true, encoding: .utf8)
        _ = try lab.spawn(["dbus-daemon", "--config-file=\(dir)/session.conf", "--nofork", "--nopidfile"], log: log("bus"))
        let display = ":\(100 + Int.random(in: 0..<800))"
        let xvfb = try lab.spawn(["Xvfb", display, "-nolisten", "tcp", "-screen", "0", "1024x768x24"], log: log("xvfb"))
        // Stopped with SIGTERM, Xvfb removes its lock and socket files (shared /tmp).
        defer { xvfb.stop(after: 5) }
        // dunst: shown notifications are written down by a rule's script; its context menu (where
        // actions are chosen) is answered by a "dmenu" that picks Accept, as a person would.
        try "#!/bin/sh\nprintf '%s|%s|%s\\n' \"$1\" \"$2\" \"$3\" >> \(dir)/shown.log\n".write(toFile: "\(dir)/shown.sh", atomically: true, encoding: .utf8)
        try "#!/bin/sh\ngrep -m1 Accept\n".write(toFile: "\(dir)/pick.sh", atomically: true, encoding: .utf8)
        chmod("\(dir)/shown.sh", 0o755)
        chmod("\(dir)/pick.sh", 0o755)
        try """
        [global]
            dmenu = \(dir)/pick.sh
        [nearcard]
            appname = Nearcard
            script = \(dir)/shown.sh
        """.write(toFile: "\(dir)/dunstrc", atomically: true, encoding: .utf8)
        let desktop = ["/usr/bin/env", "DISPLAY=\(display)", "DBUS_SESSION_BUS_ADDRESS=\(bus)"]
        var ready = false
        for _ in 0..<100 where !ready {
            usleep(100_000)
            ready = FileManager.default.fileExists(atPath: "\(dir)/session_bus")
        }
        let dunst = try lab.spawn(desktop + ["dunst", "-config", "\(dir)/dunstrc"], log: log("dunst"))
        ready = false
        for _ in 0..<100 where !ready {
            usleep(100_000)
            ready = try lab.run(desktop + ["dunstctl", "is-paused"]).code == 0
        }
        #expect(ready && dunst.isRunning, "dunst did not start: \((try? String(contentsOfFile: dunst.log, encoding: .utf8)) ?? "")")

        // Ada's node with its web app, no page open, on that desktop.
        let uiLog = log("ui")
        _ = try lab.spawn(
            [
                "/usr/bin/env", "DBUS_SESSION_BUS_ADDRESS=\(bus)", CLI.executable.path, "ui", "--home", ada.home.path, "--no-browser",
                "--port", "0", "--no-discovery", "--ui-port", "7450",
            ], log: uiLog)
        var port: Int?
        for _ in 0..<300 where port == nil {
            let text = (try? String(contentsOf: uiLog, encoding: .utf8)) ?? ""
            if text.contains("Nearcard's page: "), let r = text.range(of: "on port ") { port = Int(text[r.upperBound...].prefix { $0.isNumber }) }
            if port == nil { usleep(100_000) }
        }
        let nodePort = try #require(port)
        let asking = try lab.spawn(
            [CLI.executable.path, "exchange", "127.0.0.1:\(nodePort)", "--yes", "--message", "Hi Ada", "--home", grace.home.path],
            log: log("grace"))
        var shown = ""
        for _ in 0..<200 where !shown.contains("Exchange request") {
            usleep(100_000)
            shown = (try? String(contentsOfFile: "\(dir)/shown.log", encoding: .utf8)) ?? ""
        }
        #expect(shown.contains("Nearcard|Exchange request from Grace Hopper|Check code "), "the notification names who and shows the code: \(shown)")
        // Accept, from the notification's actions.
        #expect(try lab.run(desktop + ["dunstctl", "context"]).code == 0)
        #expect(asking.stop(after: 30, signal: nil) == 0, "Grace's exchange: \((try? String(contentsOfFile: asking.log, encoding: .utf8)) ?? "")")
        #expect(try ada.contacts().first?["name"] == "Grace Hopper")
    }
}
