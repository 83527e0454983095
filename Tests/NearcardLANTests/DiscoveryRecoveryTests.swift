import Foundation
import NearcardCrypto
import NearcardProcess
import NearcardSimulation
import NearcardTestSupport
import Testing

/// A node whose avahi-daemon does not answer when it starts — not running yet, or (a hundred nodes
/// starting on two cores) too busy to answer D-Bus within its 25 s — serves by address, says so once,
/// and is announced and browsing as soon as the daemon answers. Before, such a node stayed off the
/// LAN until it was restarted (docs/PERFORMANCE.md, "Where 100 in namespaces goes").
@Suite struct DiscoveryRecoveryTests {
    /// On a thread of its own: it waits up to a minute, and a test that blocked a cooperative-pool thread
    /// that long would starve the process's async tests meanwhile.
    @Test(.timeLimit(.minutes(5))) func aNodeWhoseDaemonAnswersLateIsAnnouncedThen() async throws {
        try await withCheckedThrowingContinuation { (done: CheckedContinuation<Void, any Error>) in
            Thread { done.resume(with: Result { try self.lateDaemon() }) }.start()
        }
    }

    func lateDaemon() throws {
        let lab = try Lab("rd")
        let ada = try TestPerson(name: "Ada Lovelace")
        let grace = try TestPerson(name: "Grace Hopper")
        defer { for p in [ada, grace] { p.cli.cleanUp() } }
        // The node is given a bus address with nothing behind it yet: the lab's bus, under another name
        // made later (what a daemon that starts late, or answers late, looks like from the node).
        let prefix = "DBUS_SYSTEM_BUS_ADDRESS=unix:path="
        guard let bus = lab.execPrefix.first(where: { $0.hasPrefix(prefix) }).map({ String($0.dropFirst(prefix.count)) }) else {
            throw LabError("the lab names no bus")
        }
        let later = bus + "-later"
        defer { try? FileManager.default.removeItem(atPath: later) }
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-\(UUID().uuidString)-late.log")
        defer { try? FileManager.default.removeItem(at: out) }
        let node = try lab.spawn(
            [prefix + later, CLI.executable.path, "listen", "--home", ada.home.path, "--port", "0", "--accept", "all"], log: out)
        defer {
            node.kill(SIGTERM)
            node.wait()
        }
        func said() -> String { (try? String(contentsOf: out, encoding: .utf8)) ?? "" }
        func wait(_ what: String, seconds: Double, _ ready: () -> Bool) throws {
            let deadline = Date().addingTimeInterval(seconds)
            while Date() < deadline {
                if ready() { return }
                guard node.isRunning else { throw LabError("listen exited: \(said())") }
                usleep(100_000)
            }
            throw LabError("gave up waiting for \(what): \(said())")
        }
        // Two lines in either order: the listening line and discovery's (they come from two tasks).
        try wait("the node to say discovery is unavailable and that it listens", seconds: 20) {
            said().contains("discovery unavailable") && said().contains("Listening on port")
        }
        // (Checks that throw: this runs on a thread of its own, outside the test's task.)
        guard !said().contains("Published on the LAN") else {
            throw LabError("it should serve by address meanwhile, unannounced: \(said())")
        }
        // The daemon answers now: the node connects again (after 10 s), announces itself and browses.
        try FileManager.default.createSymbolicLink(atPath: later, withDestinationPath: bus)
        try wait("the node to be announced", seconds: 40) { said().contains("Published on the LAN") }
        guard said().components(separatedBy: "discovery unavailable").count == 2 else { throw LabError("said more than once: \(said())") }
        // Seen by another node on the LAN.
        var listed: [String] = []
        try wait("Grace to see Ada", seconds: 20) {
            listed = ((try? lab.nearcard(["peers", "--json", "--timeout", "2"], home: grace.home).list()) ?? []).compactMap { $0["name"]?.stringValue }
            return listed.contains("Ada Lovelace")
        }
    }
}
