import Foundation
import NearcardProcess
import NearcardTestSupport
import Testing

/// libzbar, libavahi-client and libxml2 are loaded by the command that first needs one (CZBar, CAvahi,
/// CXML: docs/ARCHITECTURE.md), not by every start. In a mount namespace where the three are empty
/// files, every other command runs; the one that needs a missing library fails in one line that names
/// the package to install.
@Suite struct LoadedOnUseTests {
    /// The real files behind the three libraries' sonames.
    static func libraryFiles() throws -> [String] {
        let cache = try CLI.run(executable: "/sbin/ldconfig", ["-p"]).stdout
        return try ["libzbar.so.0", "libavahi-client.so.3", "libxml2.so.2"].map { soname in
            let line = try #require(cache.split(separator: "\n").first { $0.trimmingCharacters(in: .whitespaces).hasPrefix(soname + " ") })
            let path = String(try #require(line.components(separatedBy: " => ").last))
            return URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        }
    }

    @Test func withoutTheLibrariesOnlyTheCommandsThatNeedThemFailAndSayWhatToInstall() throws {
        let cli = try CLI()
        defer { cli.cleanUp() }
        let hidden = try Self.libraryFiles()
        let script = hidden.map { "mount --bind /dev/null '\($0)' || exit 97; " }.joined() + "exec \"$@\""
        // The node's account runs nearcard (CLI.executable drops to it) inside a namespace only root can make.
        func run(_ args: [String]) throws -> CLI.Result {
            try CLI.run(
                executable: "/usr/bin/unshare", ["--mount", "--propagation", "private", "/bin/sh", "-c", script, "sh", CLI.executable.path] + args,
                env: ["NEARCARD_HOME": cli.home.path])
        }
        let version = try run(["--version"])
        #expect(version.code == 0, "\(version.stderr)")
        #expect(try run(["init", "--name", "Ada"]).code == 0)
        #expect(try run(["card", "set", "--name", "Ada Lovelace", "--email", "ada@example.org"]).code == 0)
        #expect(try run(["contacts", "--json"]).list().isEmpty)
        let png = cli.auxiliary.appendingPathComponent("card.png").path
        let made = try run(["qr", "make", "--format", "plaintext", "--out", png])
        #expect(made.code == 0, "\(made.stderr)")

        // Each command that needs one: one line, the package to install, exit 4 (the environment).
        let scan = try run(["qr", "scan", "--image", png])
        #expect(scan.code == 4 && scan.stderr.split(separator: "\n").count == 1, "\(scan.code): \(scan.stderr)")
        #expect(scan.stderr.contains("apt install libzbar0"), "\(scan.stderr)")
        let peers = try run(["peers"])
        #expect(peers.code == 4 && peers.stderr.split(separator: "\n").count == 1, "\(peers.code): \(peers.stderr)")
        #expect(peers.stderr.contains("apt install libavahi-client3"), "\(peers.stderr)")

        // The CardDAV sync reads XML only once a server answers: a small server that answers every
        // PROPFIND with a multistatus.
        let server = try DAVStub()
        defer { server.stop() }
        let password = try cli.write("secret", to: "dav-password")
        let add = try run(["addressbook", "add", "http://127.0.0.1:\(server.port)/book/", "--user", "ada", "--password-file", password])
        #expect(add.code == 4 && add.stderr.split(separator: "\n").count == 1, "\(add.code): \(add.stderr)")
        #expect(add.stderr.contains("apt install libxml2"), "\(add.stderr)")

        // Outside the namespace the same home scans, as a check that the image was one.
        let outside = try cli.run(["qr", "scan", "--image", png, "--json"])
        #expect(outside.code == 0, "\(outside.stderr)")
    }
}

/// A loopback HTTP server (Python's http.server) that answers every request with a WebDAV multistatus.
struct DAVStub {
    let process: ChildProcess
    let port: Int
    let log: String

    init() throws {
        let code = """
            import http.server
            class H(http.server.BaseHTTPRequestHandler):
                def answer(self):
                    body = b'<?xml version="1.0"?><d:multistatus xmlns:d="DAV:"><d:response><d:href>/book/</d:href></d:response></d:multistatus>'
                    self.send_response(207); self.send_header("Content-Type", "application/xml"); self.send_header("Content-Length", str(len(body))); self.end_headers(); self.wfile.write(body)
                do_PROPFIND = do_GET = do_OPTIONS = do_REPORT = answer
                def log_message(self, *a): pass
            s = http.server.HTTPServer(("127.0.0.1", 0), H)
            print(s.server_address[1], flush=True)
            s.serve_forever()
            """
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-davstub-\(UUID().uuidString).log").path
        process = try ChildProcess(["/usr/bin/python3", "-c", code], log: path, pipes: false)
        log = path
        let deadline = Date().addingTimeInterval(10)
        var port: Int?
        while port == nil, Date() < deadline {
            port = ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").first.flatMap { Int($0) }
            if port == nil { usleep(20_000) }
        }
        guard let found = port else {
            _ = process.stop(after: 2)
            throw CLI.CLIResultError("the DAV stub did not start: \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
        }
        self.port = found
    }

    func stop() {
        _ = process.stop(after: 5)
        try? FileManager.default.removeItem(atPath: log)
    }
}
