import Foundation
import NearcardCrypto
import NearcardStore
import NearcardTestSupport
import Testing

@Suite struct IdentityCommandTests {
    @Test func initCreatesPrivateKeyFilesAndIdShowsThem() throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        let created = try cli.run(["init", "--name", "Ada Lovelace"])
        #expect(created.code == 0, "\(created.stderr)")
        #expect(fileMode(cli.secretsPath) == 0o600)
        #expect(fileMode(cli.identityPath) == 0o600)
        #expect(fileMode(cli.home.path) == 0o700)

        let id = try cli.run(["id", "--json"]).json
        let did = try #require(id["did"]?.stringValue)
        #expect(did.hasPrefix("did:key:zDn"))
        #expect(id["name"] == "Ada Lovelace")
        #expect(id["publicKeyJwk"]?["d"] == nil, "the JWK must not carry the private key")
        // The JWK is the DID's key.
        #expect(try JWK(json: id["publicKeyJwk"]!).key.did == did)
        #expect(try Base64.decode(id["pubKey"]!.stringValue!).count == 32)
        #expect(try Base64.decode(id["signPubKey"]!.stringValue!).count == 32)
        #expect(id["fingerprint"]?.stringValue?.count == 16)

        let doc = try cli.run(["id", "--document"]).json
        #expect(doc["id"]?.stringValue == did)
        let human = try cli.run(["id"])
        #expect(human.stdout.contains(did) && human.stdout.contains("Ada Lovelace"))
    }

    @Test func initRefusesWhenAnIdentityExistsAndTouchesNothing() throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        try cli.run(["init"])
        let before = (sha(cli.secretsPath), sha(cli.identityPath))
        let again = try cli.run(["init", "--name", "Mallory"])
        #expect(again.code == 3)
        #expect(again.stderr.contains(cli.home.path), "the error names the directory")
        #expect((sha(cli.secretsPath), sha(cli.identityPath)) == before)
    }

    @Test func idWithoutIdentitySaysHowToCreateOne() throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        let r = try cli.run(["id"])
        #expect(r.code == 3)
        #expect(r.stderr.contains("nearcard init"))
        #expect(r.stderr.split(separator: "\n").count == 1, "one line")
        // A bot without an identity says so the same way, and makes nothing in the home.
        let policy = try cli.write(#"{"version": 1, "accept": "everyone"}"#, to: "policy.json")
        let bot = try cli.run(["bot", "--policy", policy, "--no-discovery", "--port", "0"])
        #expect(bot.code == 3 && bot.stderr.contains("nearcard init"), "\(bot.stderr)")
        #expect(!FileManager.default.fileExists(atPath: cli.home.appendingPathComponent("nearcard.sqlite").path), "no database made")
    }

    @Test func damagedKeyFilesAreNamedAndNeverRewritten() throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        try cli.run(["init"])
        let full = try Data(contentsOf: URL(fileURLWithPath: cli.secretsPath))
        try full.prefix(full.count / 2).write(to: URL(fileURLWithPath: cli.secretsPath))
        let before = sha(cli.secretsPath)
        let r = try cli.run(["jwt", "sign"], stdin: "{}")
        #expect(r.code == 3)
        #expect(r.stderr.contains(cli.secretsPath))
        #expect(sha(cli.secretsPath) == before)
        // init still refuses: a damaged identity is not an absent one.
        #expect(try cli.run(["init"]).code == 3)
        #expect(sha(cli.secretsPath) == before)
        // `id` shows the public identity, says the secret keys are damaged, and fails as the others do.
        let id = try cli.run(["id"])
        #expect(id.code == 3 && id.stdout.contains("did:key:") && id.stdout.contains("DAMAGED"), "\(id.stdout)")
        #expect(id.stderr.contains(cli.secretsPath) && id.stderr.split(separator: "\n").count == 1, "\(id.stderr)")
        #expect(sha(cli.secretsPath) == before)
    }

    /// Secret keys from another identity, well formed: every key file reads, but the pair does not match.
    @Test func idAndDoctorNoticeSecretKeysOfAnotherIdentity() throws {
        let cli = try CLI()
        let other = try CLI()
        defer {
            cli.cleanUp()
            other.cleanUp()
        }
        try cli.run(["init", "--name", "Ada"])
        try other.run(["init", "--name", "Eve"])
        // Written over Ada's file (its owner and mode stay: the tests' nodes run as another account).
        try Data(contentsOf: URL(fileURLWithPath: other.secretsPath)).write(to: URL(fileURLWithPath: cli.secretsPath))
        let id = try cli.run(["id"])
        #expect(id.code == 3 && id.stderr.contains("do not match"), "\(id.stderr)")
        // An identity that cannot sign stops every exchange: doctor's identity check says so.
        let doctor = try cli.run(["doctor", "--json", "--timeout", "1"])
        let checks = doctor.json["checks"]?.arrayValue ?? []
        let identity = try #require(checks.first { $0["check"]?.stringValue == "identity" }, "\(doctor.stdout)")
        #expect(identity["status"]?.stringValue == "problem" && identity["message"]?.stringValue?.contains("do not match") == true, "\(doctor.stdout)")
    }

    @Test func groupReadableSecretKeysAreRefused() throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        try cli.run(["init"])
        chmod(cli.secretsPath, 0o644)
        let r = try cli.run(["jwt", "sign"], stdin: "{}")
        #expect(r.code == 3)
        #expect(r.stderr.contains("chmod 600"))
    }

    @Test func passphraseSealsKeysAndWrongOneChangesNothing() throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        let good = try cli.write("correct horse battery\n", to: "pw")
        let bad = try cli.write("wrong\n", to: "bad")
        #expect(try cli.run(["init", "--passphrase-file", good]).code == 0)
        let sealed = try String(contentsOfFile: cli.secretsPath, encoding: .utf8)
        #expect(sealed.contains("argon2id-xchacha20poly1305"))
        #expect(!sealed.contains("\"keys\""))
        let before = sha(cli.secretsPath)

        let signed = try cli.run(["jwt", "sign"], stdin: "{\"a\":1}", env: ["NEARCARD_PASSPHRASE_FILE": good])
        #expect(signed.code == 0, "\(signed.stderr)")
        let wrong = try cli.run(["jwt", "sign"], stdin: "{\"a\":1}", env: ["NEARCARD_PASSPHRASE_FILE": bad])
        #expect(wrong.code == 3)
        #expect(wrong.stderr.contains("passphrase"))
        #expect(wrong.stdout.isEmpty)
        #expect(sha(cli.secretsPath) == before)
        // `id` needs no passphrase.
        #expect(try cli.run(["id"]).code == 0)
    }

    /// Every command that writes to a sealed identity's home leaves each file 0600 (the home 0700),
    /// and none of them holds a secret key in the clear, in any encoding, or raw.
    @Test func aSealedIdentityIsNeverWrittenUnsealed() throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        let pass = try cli.write("correct horse battery staple\n", to: "pw")
        let env = ["NEARCARD_PASSPHRASE_FILE": pass]
        #expect(try cli.run(["init", "--name", "Sealed Sam", "--passphrase-file", pass]).code == 0)
        for args in [
            ["card", "set", "--name", "Sealed Sam", "--email", "sam@example.org", "--company", "Vault"],
            ["share", "--fields", "name,company"], ["contacts", "add", "--name", "Manual Mo"],
            ["qr", "make", "--format", "zk", "--text"], ["qr", "make", "--format", "did-signed", "--text"],
            ["trust", "add", "did:key:zDnaerDaTF5BXEavCrfRZEk316dpbLsfPDZ3WJ5hRTPFU2169"],
        ] {
            let r = try cli.run(args, env: env)
            #expect(r.code == 0, "\(args.joined(separator: " ")): \(r.stderr)")
        }
        #expect(try cli.run(["jwt", "sign"], stdin: "{\"sub\":\"x\"}", env: env).code == 0)

        let keys = try IdentityStore(home: NearcardHome(path: cli.home.path)).unlock(passphrase: { SecureBytes(Array("correct horse battery staple".utf8)) })
        let secrets = [keys.p256.rawRepresentation.bytes, keys.x25519.secret.bytes, keys.ed25519.seed.bytes]
        let needles: [[UInt8]] = secrets.flatMap { s in [s, Array(Base64.urlEncode(s).utf8), Array(Base64.encode(s).utf8), Array(Hex.encode(s).utf8)] }
        #expect(fileMode(cli.home.path) == 0o700)
        let files = try FileManager.default.contentsOfDirectory(atPath: cli.home.path)
        #expect(files.contains("nearcard.sqlite") && files.contains("secret-keys.json"))
        for name in files {
            let path = cli.home.appendingPathComponent(name).path
            #expect(fileMode(path) == 0o600, "\(name) is \(String(fileMode(path), radix: 8))")
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
            for needle in needles {
                #expect(!contains(bytes, needle), "\(name) holds a secret key unsealed")
            }
        }
    }

    func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard needle.count <= haystack.count else { return false }
        return (0...(haystack.count - needle.count)).contains { i in haystack[i..<(i + needle.count)].elementsEqual(needle) }
    }

    /// Output into a pipe whose reader has gone (`nearcard id | head -1`): the command stops quietly
    /// with 0, not killed by SIGPIPE (141, which fails a `set -o pipefail` script such as the demo).
    @Test func aClosedPipeEndsTheCommandQuietly() throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        #expect(try cli.run(["init", "--name", "Pipe Reader"]).code == 0)
        let r = try CLI.run(executable: "/bin/bash", ["-c", "set -o pipefail; '\(CLI.executable.path)' id --home '\(cli.home.path)' | true"])
        #expect(r.code == 0, "exit \(r.code): \(r.stderr)")
        #expect(r.stderr.isEmpty)
    }

    /// Under systemd the passphrase comes as a credential (`LoadCredential=nearcard-passphrase:…`):
    /// `$CREDENTIALS_DIRECTORY/nearcard-passphrase`, never in the environment.
    @Test func aServiceReadsItsPassphraseFromASystemdCredential() throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        let pass = try cli.write("correct horse battery staple\n", to: "nearcard-passphrase")
        #expect(try cli.run(["init", "--name", "Booth", "--passphrase-file", pass]).code == 0)
        let credentials = (pass as NSString).deletingLastPathComponent
        let signed = try cli.run(["jwt", "sign"], stdin: "{\"sub\":\"x\"}", env: ["CREDENTIALS_DIRECTORY": credentials])
        #expect(signed.code == 0, "\(signed.stderr)")
    }

    @Test func sealedKeysWithoutPassphraseOrTerminalFailClearly() throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        let good = try cli.write("pw\n", to: "pw")
        try cli.run(["init", "--passphrase-file", good])
        // Run without a controlling terminal: setsid detaches it, so no prompt is possible.
        let r = try CLI.run(executable: "/usr/bin/setsid", ["--wait", CLI.executable.path, "jwt", "sign"], stdin: "{}", env: ["NEARCARD_HOME": cli.home.path])
        #expect(r.code == 3)
        #expect(r.stderr.contains("NEARCARD_PASSPHRASE_FILE"))
    }
}

/// `init` at a terminal asks for a passphrase (no echo, twice); an empty one leaves the keys unsealed
/// with a warning; `--no-passphrase` skips the question; without a terminal nothing is asked, as before.
/// The terminal is a pseudo-terminal (pexpect): the prompt is read from /dev/tty, as a person types it.
@Suite struct InitPassphrasePromptTests {
    /// Runs `init` in a pseudo-terminal, answering each passphrase prompt in turn; with `stderrToNull`
    /// its standard error is not the terminal. Returns the exit status, the prompts, everything the
    /// terminal showed (what was typed too, had it been echoed), and whether it waited for an answer
    /// nobody gave.
    static let driver = """
        import io, json, os, sys, pexpect
        nearcard, home, answers, stderr_to_null = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), sys.argv[4] == "1"
        args = json.loads(sys.argv[5])
        if stderr_to_null:
            c = pexpect.spawn("/bin/sh", ["-c", 'exec "$0" "$@" 2>/dev/null', nearcard, *args], env=dict(os.environ), encoding="utf-8", timeout=30)
        else:
            c = pexpect.spawn(nearcard, args, env=dict(os.environ), encoding="utf-8", timeout=30)
        c.logfile_read = log = io.StringIO()
        out = {"prompts": [], "waiting": False}
        for answer in answers:
            c.expect(r"((New|Repeat) passphrase|Passphrase to seal your secret keys|Passphrase for [^\\r\\n]*?)[^:\\r\\n]*: ")
            out["prompts"].append(c.after.strip())
            c.sendline(answer)
        try:
            c.expect(pexpect.EOF, timeout=20)
        except pexpect.TIMEOUT:
            out["waiting"] = True
            c.terminate(force=True)
        c.close()
        out["exit"] = c.exitstatus
        out["transcript"] = log.getvalue()
        print(json.dumps(out))
        """

    struct Run {
        let exit: Int?
        let prompts: [String]
        let transcript: String
        let waiting: Bool
    }

    func initAtTerminal(_ cli: CLI, answers: [String], stderrToNull: Bool = false, _ extra: [String] = []) throws -> Run {
        try atTerminal(cli, ["init", "--home", cli.home.path, "--name", "Ada Lovelace"] + extra, answers: answers, stderrToNull: stderrToNull)
    }

    /// Any command in the pseudo-terminal, answering its passphrase prompts.
    func atTerminal(_ cli: CLI, _ args: [String], answers: [String], stderrToNull: Bool = false) throws -> Run {
        let answersJSON = JSONValue.array(answers.map { .string($0) }).compactText
        let argsJSON = JSONValue.array(args.map { .string($0) }).compactText
        let r = try CLI.run(executable: CLI.python, ["-c", Self.driver, CLI.executable.path, cli.home.path, answersJSON, stderrToNull ? "1" : "0", argsJSON])
        try #require(r.code == 0, "the driver failed: \(r.stderr)")
        let o = r.json
        return Run(
            exit: o["exit"]?.integerValue.map(Int.init), prompts: (o["prompts"]?.arrayValue ?? []).compactMap(\.stringValue),
            transcript: o["transcript"]?.stringValue ?? "", waiting: o["waiting"]?.boolValue ?? true)
    }

    func secretKeys(_ cli: CLI) throws -> String { try String(contentsOfFile: cli.secretsPath, encoding: .utf8) }

    /// A typed passphrase seals the keys: not echoed, asked twice, and it opens them afterwards.
    @Test func aPassphraseTypedAtTheTerminalSealsTheKeys() throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        let run = try initAtTerminal(cli, answers: ["tea at the engine room", "tea at the engine room"])
        #expect(run.exit == 0 && !run.waiting, "\(run.transcript)")
        #expect(run.prompts.count == 2 && run.prompts[0].contains("New passphrase") && run.prompts[1].contains("Repeat passphrase"), "\(run.prompts)")
        #expect(!run.transcript.contains("tea at the engine room"), "the passphrase is not echoed")
        #expect(run.transcript.contains("sealed under a passphrase") && !run.transcript.contains("warning"), "\(run.transcript)")
        let sealed = try secretKeys(cli)
        #expect(sealed.contains("argon2id-xchacha20poly1305") && !sealed.contains("\"keys\""))
        let pass = try cli.write("tea at the engine room\n", to: "pw")
        let signed = try cli.run(["jwt", "sign"], stdin: "{\"a\":1}", env: ["NEARCARD_PASSPHRASE_FILE": pass])
        #expect(signed.code == 0, "\(signed.stderr)")
    }

    /// Enter: no passphrase, and nothing to repeat. The keys are unsealed and a one-line warning says so
    /// and what to do.
    @Test func anEmptyPassphraseLeavesTheKeysUnsealedWithAWarning() throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        let run = try initAtTerminal(cli, answers: [""])
        #expect(run.exit == 0 && !run.waiting, "\(run.transcript)")
        #expect(run.prompts.count == 1 && !run.transcript.contains("Repeat"), "an empty passphrase is not asked again: \(run.prompts)")
        let warning = try #require(run.transcript.split(whereSeparator: \.isNewline).first { $0.contains("warning") }, "\(run.transcript)")
        #expect(
            warning.hasPrefix("nearcard: warning: your secret keys are not sealed") && warning.contains(cli.secretsPath)
                && warning.contains("unencrypted") && warning.contains("nearcard id passphrase"), "\(warning)")
        #expect(run.transcript.contains("not sealed (mode 0600)"))
        let plain = try secretKeys(cli)
        #expect(plain.contains("\"keys\"") && !plain.contains("argon2id"))
        #expect(try cli.run(["jwt", "sign"], stdin: "{}").code == 0, "no passphrase needed")
    }

    /// Issue 51, point 8: a passphrase added after `init` (typed twice at the terminal), changed (the
    /// current one asked first; a wrong one changes nothing), and removed; the identity stays the same
    /// throughout and every state opens as it says.
    @Test func aPassphraseIsAddedChangedAndRemovedLater() throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        #expect(try cli.run(["init", "--name", "Ada Lovelace", "--no-passphrase"]).code == 0)
        let did = try cli.run(["id", "--json"]).json["did"]
        let added = try atTerminal(cli, ["id", "passphrase", "--home", cli.home.path], answers: ["tea at the engine room", "tea at the engine room"])
        #expect(added.exit == 0 && !added.waiting, "\(added.transcript)")
        #expect(added.prompts.count == 2 && added.prompts[0].contains("Passphrase to seal") && added.prompts[1].contains("Repeat"), "\(added.prompts)")
        #expect(!added.transcript.contains("tea at the engine room"), "not echoed")
        #expect(added.transcript.contains("now sealed under the passphrase"), "\(added.transcript)")
        #expect(try secretKeys(cli).contains("argon2id") && fileMode(cli.secretsPath) == 0o600)
        let tea = try cli.write("tea at the engine room\n", to: "tea")
        #expect(try cli.run(["jwt", "sign"], stdin: "{}", env: ["NEARCARD_PASSPHRASE_FILE": tea]).code == 0)
        #expect(try cli.run(["jwt", "sign"], stdin: "{}").code == 3, "sealed now: no passphrase, no signature")

        // A wrong current passphrase: exit 3, the key file byte for byte as it was, no new one asked.
        let before = sha(cli.secretsPath)
        let wrong = try atTerminal(cli, ["id", "passphrase", "--home", cli.home.path], answers: ["coffee"])
        #expect(wrong.exit == 3 && wrong.prompts.count == 1 && wrong.prompts[0].contains("Passphrase for"), "\(wrong.transcript)")
        #expect(sha(cli.secretsPath) == before)
        // Changed from files (as a script would), then removed.
        let cocoa = try cli.write("cocoa in the library\n", to: "cocoa")
        let changed = try cli.run(["id", "passphrase", "--new-passphrase-file", cocoa, "--json"], env: ["NEARCARD_PASSPHRASE_FILE": tea])
        #expect(changed.code == 0 && changed.json == ["sealed": true, "was": true], "\(changed.stdout) \(changed.stderr)")
        #expect(try cli.run(["jwt", "sign"], stdin: "{}", env: ["NEARCARD_PASSPHRASE_FILE": tea]).code == 3, "the old one opens nothing")
        #expect(try cli.run(["jwt", "sign"], stdin: "{}", env: ["NEARCARD_PASSPHRASE_FILE": cocoa]).code == 0)
        let removed = try cli.run(["id", "passphrase", "--remove"], env: ["NEARCARD_PASSPHRASE_FILE": cocoa])
        #expect(removed.code == 0 && removed.stdout.contains("Passphrase removed"), "\(removed.stderr)")
        #expect(try secretKeys(cli).contains("\"keys\"") && fileMode(cli.secretsPath) == 0o600)
        #expect(try cli.run(["jwt", "sign"], stdin: "{}").code == 0)
        #expect(try cli.run(["id", "--json"]).json["did"] == did, "the same identity throughout")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: cli.home.path).filter { $0.contains("secret-keys") }
        #expect(leftovers == ["secret-keys.json"], "no temporary or old key file left: \(leftovers)")
    }

    /// Two different answers: asked again; the right pair then seals the keys. Three wrong pairs: nothing
    /// is created.
    @Test func passphrasesThatDifferAreAskedAgain() throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        let run = try initAtTerminal(cli, answers: ["tea at the engine room", "tea at the engine rom", "tea at the engine room", "tea at the engine room"])
        #expect(run.exit == 0 && !run.waiting && run.transcript.contains("differ; type it again"), "\(run.transcript)")
        #expect(run.prompts.count == 4 && run.transcript.contains("sealed under a passphrase"), "\(run.prompts)")
        #expect(try secretKeys(cli).contains("argon2id"))

        let other = try CLI()
        defer { other.cleanUp() }
        let wrong = try initAtTerminal(other, answers: ["a1", "b1", "a2", "b2", "a3", "b3"])
        #expect(wrong.exit == 2 && wrong.transcript.contains("differed three times"), "\(wrong.transcript)")
        #expect(!FileManager.default.fileExists(atPath: other.secretsPath) && !FileManager.default.fileExists(atPath: other.identityPath))
    }

    /// `--no-passphrase` at a terminal, and a terminal that is not standard error too: nothing asked,
    /// no warning, unsealed.
    @Test func nothingIsAskedWithNoPassphraseOrWhenStandardErrorIsNotTheTerminal() throws {
        for (stderrToNull, extra) in [(false, ["--no-passphrase"]), (true, [])] {
            let cli = try CLI()
            defer { cli.cleanUp() }
            let run = try initAtTerminal(cli, answers: [], stderrToNull: stderrToNull, extra)
            #expect(run.exit == 0 && !run.waiting, "\(extra) \(stderrToNull): \(run.transcript)")
            #expect(!run.transcript.contains("assphrase:") && !run.transcript.contains("warning"), "\(run.transcript)")
            #expect(try secretKeys(cli).contains("\"keys\""))
        }
    }

    /// Not at a terminal (a script: standard input and error are pipes): nothing is asked, whatever
    /// standard input holds, and nothing is said about it; the keys are unsealed, as they always were.
    @Test func withoutATerminalNothingIsAsked() throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        let r = try cli.run(["init", "--name", "Script"], stdin: "secret\nsecret\n")
        #expect(r.code == 0, "\(r.stderr)")
        #expect(r.stderr.isEmpty && !r.stdout.contains("assphrase:"), "\(r.stdout) \(r.stderr)")
        #expect(try secretKeys(cli).contains("\"keys\""))
        #expect(try cli.run(["init", "--help"]).stdout.contains("Not at a terminal"))
        let both = try CLI().run(["init", "--no-passphrase", "--ask-passphrase"])
        #expect(both.code != 0 && both.stderr.contains("--ask-passphrase") && both.stderr.contains("--no-passphrase"), "\(both.stderr)")
    }
}

@Suite struct DIDCommandTests {
    @Test func resolvesEachKeyType() throws {
        for (did, format, type) in [
            ("did:key:zDnaerDaTF5BXEavCrfRZEk316dpbLsfPDZ3WJ5hRTPFU2169", "JsonWebKey2020", "JsonWebKey2020"),
            ("did:key:z6MkiTBz1ymuepAQ4HEHYSF1H8quG5GLVVQR3djdX3mDooWp", "Multikey", "Multikey"),
            ("did:key:z6LSeu9HkTHSfLLeUs2nnzUSNedgDUevfNQgQjQC23ZCit6F", "Multikey", "Multikey"),
        ] {
            let r = try CLI.run(executable: CLI.executable.path, ["did", "resolve", did, "--format", format])
            #expect(r.code == 0, "\(r.stderr)")
            #expect(r.json["id"]?.stringValue == did)
            #expect(r.json["verificationMethod"]?.arrayValue?.first?["type"]?.stringValue == type)
        }
    }

    @Test(arguments: [
        ("did:key:zQ3shokFTS3brHcDQrn82RUDfCZESWL1ZdCEJwekUDPQiYBme", "unsupportedPublicKeyType"),
        ("did:key:abc", "invalidDid"),
        ("did:key:" + Multibase.encodeBase58btc([0xED, 0x01] + [UInt8](repeating: 9, count: 31)), "invalidPublicKeyLength"),
    ])
    func malformedDIDsExitNonZeroNamingTheError(did: String, code: String) throws {
        let r = try CLI.run(executable: CLI.executable.path, ["did", "resolve", did])
        #expect(r.code == 2)
        #expect(r.stderr.contains(code))
        #expect(r.stderr.split(separator: "\n").count == 1)
    }
}

/// Sealed keys are unlocked by one answer to one prompt, whatever the command does with the terminal
/// afterwards: `listen` (which then asks y/N per request) and `exchange` without --yes (which asks after
/// the code) each start on the first passphrase typed, and then take their own questions' answers.
/// The terminal is a pseudo-terminal (pexpect), as a person types into it.
@Suite struct UnlockAtTerminalTests {
    /// `MODE` listen: HOME_SEALED listens at the terminal and HOME_OTHER dials it with --yes; the person
    /// types the passphrase once, then y to the request. `MODE` exchange: HOME_OTHER listens with
    /// --accept all and HOME_SEALED dials it at the terminal; the person types the passphrase once, then y.
    /// Prints what the terminal showed and how the commands exited.
    static let driver = """
        import io, json, os, re, sys, pexpect
        nearcard, mode, sealed, other, passphrase = sys.argv[1:6]
        env = dict(os.environ)
        def spawn(*args):
            return pexpect.spawn(nearcard, list(args), env=env, encoding="utf-8", timeout=20)
        out = {"unlocked": False, "asked": False}
        if mode == "listen":
            node = spawn("listen", "--home", sealed, "--port", "0", "--no-discovery")
            person = node
        else:
            node = spawn("listen", "--home", other, "--port", "0", "--no-discovery", "--accept", "all")
        node.logfile_read = log = io.StringIO()
        try:
            if mode == "listen":
                node.expect(r"Passphrase for [^:]*: ")
                node.sendline(passphrase)
            node.expect(r"Listening on port (\\d+)", timeout=10)
            port = node.match.group(1)
            if mode == "listen":
                out["unlocked"] = True
                dialer = spawn("exchange", "127.0.0.1:" + port, "--home", other, "--yes")
            else:
                dialer = person = spawn("exchange", "127.0.0.1:" + port, "--home", sealed)
                dialer.logfile_read = log
                person.expect(r"Passphrase for [^:]*: ")
                person.sendline(passphrase)
                person.expect(r"Check code", timeout=10)
                out["unlocked"] = True
            person.expect(r"\\[y/N\\] ", timeout=15)
            out["asked"] = True
            person.sendline("y")
            try:
                person.expect(r"Message for them[^:]*: ", timeout=5)
                person.sendline("")
            except pexpect.TIMEOUT:
                pass
            dialer.expect(pexpect.EOF, timeout=20)
            dialer.close()
            out["dialerExit"] = dialer.exitstatus
        except (pexpect.TIMEOUT, pexpect.EOF) as e:
            out["stuck"] = type(e).__name__
        node.terminate(force=True)
        out["transcript"] = log.getvalue()
        print(json.dumps(out))
        """

    func run(_ mode: String) throws {
        let sealed = try CLI()
        let other = try CLI()
        defer {
            sealed.cleanUp()
            other.cleanUp()
        }
        let pass = try sealed.write("tea at the engine room\n", to: "pw")
        #expect(try sealed.run(["init", "--name", "Ada Lovelace", "--passphrase-file", pass]).code == 0)
        #expect(try other.run(["init", "--name", "Grace Hopper"]).code == 0)
        let r = try CLI.run(
            executable: CLI.python,
            [
                "-c", Self.driver, CLI.executable.path, mode, sealed.home.path, other.home.path,
                "tea at the engine room",
            ])
        try #require(r.code == 0, "the driver failed: \(r.stderr)")
        let o = r.json
        let transcript = o["transcript"]?.stringValue ?? ""
        #expect(o["unlocked"] == true, "one passphrase typed once unlocks the keys: \(transcript)")
        #expect(!transcript.contains("wrong passphrase") && !transcript.contains("tea at the engine room"), "\(transcript)")
        #expect(o["asked"] == true && o["dialerExit"] == 0, "then the request's question takes its own answer: \(o)")
        #expect(try other.run(["contacts", "--json"]).list().count == 1)
    }

    @Test func listenAsksForThePassphraseOnce() throws { try run("listen") }
    @Test func exchangeAsksForThePassphraseOnce() throws { try run("exchange") }
}
