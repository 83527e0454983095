import Foundation
import NearcardCrypto
import NearcardTestSupport
import Testing

/// One consent question at a time at the terminal: two people ask a listening laptop at once; its
/// person sees the first request, its code and its question together, answers it, and only then sees
/// the second (with the time it has left). The answers go to the requests they were typed under.
@Suite(.serialized) struct ConsentQueueTests {
    @Test func twoRequestsAtOnceAreAskedOneAfterTheOther() throws {
        let lab = try Lab("cq")
        let ada = try TestPerson(name: "Ada")
        let grace = try TestPerson(name: "Grace")
        let lin = try TestPerson(name: "Lin")
        defer { for p in [ada, grace, lin] { p.cli.cleanUp() } }
        let script = CLI.packageRoot.appendingPathComponent("Tests/Interop/interactive_exchange.py").path
        let r = try CLI.run(
            executable: CLI.python,
            [
                script, lab.execPrefix.joined(separator: " "),
                CLI.executable.path, ada.home.path, grace.home.path, "queue", lin.home.path,
            ])
        #expect(r.code == 0, "driver failed: \(r.stderr)")
        let out = r.json
        #expect(out["secondShownBeforeFirstAnswered"] == false, "the second request waited until the first was answered")
        let shown = (out["shown"]?.arrayValue ?? []).compactMap(\.stringValue)
        try #require(Set(shown) == ["Grace", "Lin"] && shown.count == 2, "each request shown once: \(shown)")
        let exitOf = ["Grace": out["exit_b"], "Lin": out["exit_c"]]
        #expect(exitOf[shown[0]] == 0, "the one answered y exchanged")
        #expect(exitOf[shown[1]] == 7, "the one answered n was declined (exit 7)")
        #expect((out["secondTimeLeft"]?.doubleValue ?? 99) < 60, "the second shows the time it has left")
        #expect(try ada.contacts().compactMap { $0["name"]?.stringValue } == [shown[0]], "exactly the first peer got the card")
        #expect(out["listenerExit"] == 0)
    }
}
