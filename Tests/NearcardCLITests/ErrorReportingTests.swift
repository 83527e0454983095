import Foundation
import NearcardTestSupport
import Testing

/// How a failure reads: one line that names the input and the way out, the exit code README lists,
/// and with --verbose what lay beneath.
@Suite struct ErrorReportingTests {
    @Test func anUnreachablePeerIsOneLineAndVerboseAddsTheCause() throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        try cli.run(["init", "--name", "Ada"])
        // Port 1 on loopback: nothing listens, the connection is refused at once.
        let plain = try cli.run(["exchange", "127.0.0.1:1", "--yes"])
        #expect(plain.code == 4, "unreachable is the environment's exit code: \(plain.stderr)")
        let lines = plain.stderr.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].hasPrefix("nearcard: cannot connect to 127.0.0.1:1"), "\(plain.stderr)")

        let verbose = try cli.run(["exchange", "127.0.0.1:1", "--yes", "--verbose"])
        #expect(verbose.code == 4)
        #expect(verbose.stderr.contains("caused by: 127.0.0.1:1: connection refused"), "\(verbose.stderr)")
        #expect(verbose.stderr.contains("NodeError"), "the kind of error is named: \(verbose.stderr)")
    }
}
