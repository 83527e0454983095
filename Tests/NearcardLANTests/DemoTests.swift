import Foundation
import NearcardCrypto
import NearcardTestSupport
import Testing

/// The README's first command: `make demo` runs scripts/demo.sh with the built executable. Run here
/// so that CI proves it, not only `make test`.
@Suite(.serialized) struct DemoTests {
    @Test func theDemoFindsThePeerExchangesAndPrintsBothContacts() throws {
        let script = CLI.packageRoot.appendingPathComponent("scripts/demo.sh").path
        let r = try CLI.run(executable: script, [CLI.builtExecutable.path])
        #expect(r.code == 0, "demo.sh exited \(r.code): \(r.stderr.suffix(800))")
        #expect(r.stdout.contains("== Ada's new contact") && r.stdout.contains("== Grace's new contact"))
        #expect(r.stdout.components(separatedBy: "Status         verified (source proximity)").count - 1 >= 2)
        #expect(r.stdout.contains("Both contacts are verified"))
    }
}
