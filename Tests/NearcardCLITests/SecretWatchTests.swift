import Foundation
import NearcardCrypto
import NearcardTestSupport
import Testing

/// The watch every CLI run and lab log goes through (Tests/Support/SecretWatch.swift): it must see a
/// key or passphrase that reaches output, in each encoding, or its silence proves nothing.
@Suite struct SecretWatchTests {
    @Test func seesAKeyInEachEncodingAndAPassphrase() throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        #expect(try cli.run(["init", "--name", "Watch Me"]).code == 0)
        let keyFile = try JSONParser.parse(Array(try Data(contentsOf: URL(fileURLWithPath: cli.secretsPath))))
        let ed = try Base64.urlDecode(keyFile["keys"]?["ed25519"]?.stringValue ?? "")
        #expect(ed.count == 32)
        for leaked in [Base64.urlEncode(ed), Base64.encode(ed), Hex.encode(ed)] {
            withKnownIssue("the watch reports a key that reached output") {
                SecretWatch.shared.check("debug: key=\(leaked)", what: "a made-up log line")
            }
        }
        let passphrase = try cli.write("a long enough passphrase\n", to: "pass")
        SecretWatch.shared.learn(arguments: ["init", "--passphrase-file", passphrase], environment: [:])
        withKnownIssue("the watch reports a passphrase that reached output") {
            SecretWatch.shared.check("unlocking with a long enough passphrase", what: "a made-up error")
        }
        // And what the CLI really prints about the identity is clean (this run is itself watched).
        #expect(try cli.run(["id", "--json"]).code == 0)
    }
}
