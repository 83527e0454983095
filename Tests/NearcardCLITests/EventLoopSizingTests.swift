import Foundation
import NearcardProcess
import NearcardSimulation
import NearcardTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A node started under `taskset` (or systemd's CPUAffinity=) runs one event loop per CPU it may use,
/// not one per CPU of the machine; NIO_SINGLETON_GROUP_LOOP_COUNT still decides when it is set.
@Suite struct EventLoopSizingTests {
    /// Starts `listen --jsonl --no-discovery` through `taskset -c cpus` and counts its event-loop threads.
    func eventLoops(cpus: String, env: [String] = [], cli: CLI) throws -> Int {
        let log = cli.home.appendingPathComponent("listen-\(cpus)-\(env.count).log")
        let node = try ChildProcess(
            "/usr/bin/env",
            env + [
                "/usr/bin/taskset", "-c", cpus, CLI.executable.path, "listen", "--jsonl", "--no-discovery",
                "--port", "0", "--home", cli.home.path,
            ], log: log)
        defer {
            node.kill(SIGINT)
            _ = node.wait()
        }
        let deadline = Date().addingTimeInterval(15)
        while Date() < deadline, !((try? String(contentsOf: log, encoding: .utf8)) ?? "").contains("\"event\":\"started\"") {
            #expect(node.isRunning, "listen exited: \((try? String(contentsOf: log, encoding: .utf8)) ?? "")")
            usleep(50_000)
        }
        // `env` and `taskset` exec the node, so the spawned pid is the node's.
        let tasks = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(node.pid)/task")
        return tasks.filter { tid in
            let name = (try? String(contentsOfFile: "/proc/\(node.pid)/task/\(tid)/comm", encoding: .utf8)) ?? ""
            return name.hasPrefix("NIO-SGLTN-") && !name.hasPrefix("NIO-SGLTN-0-")
        }.count
    }

    @Test func oneEventLoopPerAllowedCPU() throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        #expect(try cli.run(["init", "--name", "Loop Counter"]).code == 0)
        #expect(try eventLoops(cpus: "0", cli: cli) == 1)
        #expect(try eventLoops(cpus: "0", env: ["NIO_SINGLETON_GROUP_LOOP_COUNT=3"], cli: cli) == 3)
        if sysconf(Int32(_SC_NPROCESSORS_ONLN)) >= 2 {
            #expect(try eventLoops(cpus: "0,1", cli: cli) == 2)
        }
    }
}
