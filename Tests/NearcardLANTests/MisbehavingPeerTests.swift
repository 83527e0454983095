import Foundation
import NearcardCrypto
import NearcardProcess
import NearcardSimulation
import NearcardTestSupport
import Testing

/// A peer that sends garbage, stalls, or disconnects loses its session; the node keeps serving.
@Suite struct MisbehavingPeerTests {
    @Test func garbageAndStallingPeersDoNotStopHonestExchanges() throws {
        let lab = try Lab("mb")
        let ada = try TestPerson(name: "Ada")
        let grace = try TestPerson(name: "Grace")
        defer {
            ada.cli.cleanUp()
            grace.cli.cleanUp()
        }
        let logURL = FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-\(UUID().uuidString).log")
        let (listener, port) = try lab.listen(home: ada.home, ["--accept", "all", "--no-discovery", "--probe-summary", "1"], log: logURL)
        // Garbage, a huge length prefix that never completes, and a silent stall — all held open.
        let rogue = """
            import socket, time
            socks = []
            for payload in [b"\\x00\\x05hello-not-noise", b"\\xff\\xff" + b"A" * 100, b""]:
                s = socket.create_connection(("127.0.0.1", \(port)))
                if payload: s.sendall(payload)
                socks.append(s)
            time.sleep(8)
            """
        _ = try lab.spawn(["python3", "-c", rogue], log: logURL.appendingPathExtension("rogue"))
        usleep(300_000)
        let r = try lab.nearcard(["exchange", "127.0.0.1:\(port)", "--yes"], home: grace.home)
        #expect(r.code == 0, "\(r.stderr)")
        #expect(listener.isRunning)
        // The garbage connection was ended and counted — in one summary line, not as a failed exchange.
        var text = ""
        for _ in 0..<40 where !text.contains("ended before starting an exchange") {
            usleep(100_000)
            text = try String(contentsOf: logURL, encoding: .utf8)
        }
        #expect(text.contains("ended before starting an exchange"), "\(text)")
        #expect(!text.contains("✘"), "a probe was reported as a failed exchange: \(text)")
    }
}
