import CBaseline
import Foundation
import NearcardCrypto
import NearcardNode
import NearcardProcess
import NearcardSimulation

#if canImport(Glibc)
    import Glibc
    import NearcardStore
#endif

/// Issue 7: one exchange on loopback (TCP connect → both contacts committed, both sides accepting
/// automatically), beside the floor (the same crypto through the C libraries plus one loopback round
/// trip) and beside a TLS 1.3 handshake with certificates on both sides against `openssl s_server`.
///
/// The responder is the release `nearcard listen --jsonl --accept all` (its own process, as
/// `s_server` is); the initiator dials from this process (as the libssl client does). The clock stops
/// when both contacts are committed: the initiator's result and the responder's `exchange.completed`
/// line, time-stamped as it is read. Two placements, interleaved round by round: both processes
/// free to use both cores, and each party on a core of its own (the server side on CPU 1, this
/// process on CPU 0), which is what two machines give each person. Both references run in both.
func exchangeLatencyBenchmark(rounds: Int = 41) async throws -> String {
    precondition(cb_init() == 0)
    let scratch = try Scratch("latency")
    let exe = try nearcardExecutable()
    var limits = NodeLimits()
    limits.connectionsPerAddressPerMinute = 1_000_000
    let initiator = try scratch.service("Ivan Initiator", limits: limits)
    let twoCores = sysconf(Int32(_SC_NPROCESSORS_ONLN)) >= 2

    final class Placement {
        let name: String
        let pinned: Bool
        let responder: NodeProcess
        let target: DialTarget
        let tls: TLSReference
        var ours: [Double] = [], tlsLib: [Double] = []
        init(name: String, pinned: Bool, responder: NodeProcess, target: DialTarget, tls: TLSReference) {
            self.name = name
            self.pinned = pinned
            self.responder = responder
            self.target = target
            self.tls = tls
        }
    }
    var placements: [Placement] = []
    defer {
        for p in placements {
            p.responder.stop()
            p.tls.stop()
        }
    }
    for pinned in twoCores ? [false, true] : [false] {
        let tag = pinned ? "pinned" : "shared"
        let home = try scratch.home("Rita Responder \(tag)")
        let argv =
            (pinned ? ["/usr/bin/taskset", "-c", "1"] : []) + [
                exe, "listen", "--jsonl", "--accept", "all", "--home", home.path, "--port", "0",
                "--no-discovery", "--connections-per-minute", "1000000", "--max-sessions-per-address", "1000",
            ]
        let node = try NodeProcess(argv, log: scratch.root + "/responder-\(tag).log", keep: false)
        let started = try waitForStarted(node)
        let tls = try TLSReference(directory: scratch.root + "/\(tag)", pinnedTo: pinned ? 1 : nil)
        placements.append(
            Placement(
                name: pinned ? "each party on its own core" : "both parties on both cores", pinned: pinned, responder: node,
                target: loopbackTarget(port: started.port, did: started.did), tls: tls))
    }
    let floor = ExchangeCryptoFloor()
    var crypto: [Double] = []
    var tlsTool: [Double] = []
    for round in -3..<rounds { // three warm-up rounds, not counted
        for p in placements {
            _ = cb_pin_process(p.pinned ? 0 : -1)
            let before = p.responder.count("exchange.completed")
            let t0 = now()
            guard case .completed = try await Dialer.exchange(with: p.target, context: initiator, consent: initiator.consent) else {
                throw BenchError("an exchange failed (\(p.name)); see \(scratch.root)")
            }
            let initiatorDone = now()
            let responderDone = try p.responder.waitForNth("exchange.completed", before + 1)
            let ours = Double(max(initiatorDone, responderDone) - t0)
            let l = try p.tls.libsslConnection()
            if round >= 0 {
                p.ours.append(ours)
                p.tlsLib.append(l)
            }
        }
        _ = cb_pin_process(-1)
        let c = floor.run()
        let t = round % 4 == 0 ? try placements[0].tls.sClientConnection() : nil
        guard round >= 0 else { continue }
        crypto.append(c)
        if let t { tlsTool.append(t) }
    }
    let rtt = Double(cb_loopback_rtt_ns(2001))
    guard rtt > 0 else { throw BenchError("the loopback round trip could not be measured") }

    let f = median(crypto) + rtt
    let t = median(tlsTool)
    var out =
        "| placement | Nearcard exchange (TCP connect → both contacts committed) | TLS 1.3 mutual-certificate handshake (libssl client ↔ `openssl s_server`) | Nearcard ÷ TLS | Nearcard ÷ crypto floor |\n|---|---|---|---|---|\n"
    for p in placements {
        let o = median(p.ours)
        let l = median(p.tlsLib)
        out += "| \(p.name) | \(format(o)) (\(p.ours.count) runs) | \(format(l)) | **\(format2(o / l))×** | \(format2(o / f))× |\n"
    }
    out +=
        "\nFloor: both sides' crypto through libcrypto/libsodium (\(ExchangeCryptoFloor.summary)) + one loopback round trip (\(format(rtt))): \(format(f)) (median of \(crypto.count)). "
    out += "`openssl s_client` run as a command (a process per connection, as a person would run it), both cores: \(format(t)) (median of \(tlsTool.count)). "
    out +=
        "The exchange does Noise XX, a signed hello each way, the SAS commit/reveal, a signed card with its SD-JWT and a sealed route each way, and a SQLite commit on each side; the TLS handshake's client sends one line and reads the server's answer, so the server has checked the client certificate.\n"
    return out
}

/// The crypto both sides of one exchange do, called straight through the C libraries.
/// Per side (protocol v2): Noise XX (two X25519 key pairs — the ephemeral key and the per-session
/// static key — and three X25519), the identity (one P-256 signature over the handshake hash, one
/// verification of the peer's), the card (the SD-JWT and the payload signature: two P-256
/// signatures; two verifications of the peer's), the sealed route (an Ed25519 signature, a sealed
/// box; opening the peer's: a box open and an Ed25519 verification). Both sides do the same work,
/// so one side's half is `runHalf()`.
struct ExchangeCryptoFloor {
    static let summary = "per side: 2 X25519 key pairs + 3 X25519, 3 P-256 sign + 3 verify, 1 Ed25519 sign + 1 verify, 1 sealed-box seal + 1 open"
    static let halfSummary = "2 X25519 key pairs + 3 X25519, 3 P-256 sign + 3 verify, 1 Ed25519 sign + 1 verify, 1 sealed-box seal + 1 open"
    let p256: UnsafeMutableRawPointer
    let message = [UInt8](repeating: 0x42, count: 512)
    var der = [UInt8](repeating: 0, count: 80)
    let edSK: [UInt8], edPK: [UInt8], edSig: [UInt8]
    let xSK: [UInt8], xPK: [UInt8]
    let route = [UInt8](repeating: 7, count: 300)
    let sealed: [UInt8]

    init() {
        let key = P256.PrivateKey()
        p256 = cb_p256_key_from_scalar(key.rawRepresentation.bytes)
        var len = 80
        _ = cb_p256_sign(p256, message, message.count, &der, &len)
        der = Array(der[0..<len])
        let ed = Ed25519.PrivateKey()
        edSK = ed.seed.bytes + ed.publicKey.rawRepresentation
        edPK = ed.publicKey.rawRepresentation
        edSig = ed.signature(for: message)
        let x = X25519.PrivateKey()
        xSK = x.secret.bytes
        xPK = x.publicKey.rawRepresentation
        var box = [UInt8](repeating: 0, count: route.count + 48)
        _ = cb_seal(route, route.count, xPK, &box)
        sealed = box
    }

    /// Both sides, one after the other; nanoseconds.
    func run() -> Double { runHalf() + runHalf() }

    /// One side's crypto; nanoseconds.
    func runHalf() -> Double {
        var out = [UInt8](repeating: 0, count: 32)
        var pk = [UInt8](repeating: 0, count: 32)
        var sk = [UInt8](repeating: 0, count: 32)
        var sig = [UInt8](repeating: 0, count: 80)
        var edOut = [UInt8](repeating: 0, count: 64)
        var box = [UInt8](repeating: 0, count: route.count + 48)
        var plain = [UInt8](repeating: 0, count: route.count)
        let t0 = now()
        for _ in 0..<2 { _ = cb_x25519_keypair(&pk, &sk) }
        for _ in 0..<3 { _ = cb_x25519(xSK, xPK, &out) }
        for _ in 0..<3 {
            var len = 80
            _ = cb_p256_sign(p256, message, message.count, &sig, &len)
            precondition(cb_p256_verify(p256, message, message.count, der, der.count) == 0)
        }
        _ = cb_ed25519_sign(edSK, message, message.count, &edOut)
        precondition(cb_ed25519_verify(edPK, message, message.count, edSig) == 0)
        _ = cb_seal(route, route.count, xPK, &box)
        precondition(cb_seal_open(sealed, sealed.count, xPK, xSK, &plain) == 0)
        return Double(now() - t0)
    }
}

/// `openssl s_server` with a CA, a server and a client certificate (P-256), requiring the client's.
final class TLSReference {
    let directory: String
    let port: Int
    let server: ChildProcess
    let context: UnsafeMutableRawPointer
    let openssl: String

    /// `pinnedTo`: the CPU `s_server` runs on (nil: any).
    init(directory root: String, pinnedTo cpu: Int? = nil) throws {
        directory = root + "/tls"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        guard let openssl = ["/usr/bin/openssl", "/usr/local/bin/openssl"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw BenchError("openssl (the command) is not installed: apt-get install openssl")
        }
        self.openssl = openssl
        func run(_ args: [String]) throws {
            let r = try ChildProcess.run([openssl] + args)
            guard r.code == 0 else { throw BenchError("openssl \(args.first ?? ""): \(r.output)") }
        }
        let d = directory
        try run([
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "\(d)/ca.key",
            "-out", "\(d)/ca.pem", "-days", "2", "-subj", "/CN=nearcard-bench-ca",
        ])
        for name in ["server", "client"] {
            try run([
                "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "\(d)/\(name).key",
                "-out", "\(d)/\(name).csr", "-subj", "/CN=\(name)",
            ])
            try run([
                "x509", "-req", "-in", "\(d)/\(name).csr", "-CA", "\(d)/ca.pem", "-CAkey", "\(d)/ca.key", "-CAcreateserial",
                "-out", "\(d)/\(name).pem", "-days", "2",
            ])
        }
        port = try freeLoopbackPort()
        server = try ChildProcess(
            (cpu.map { ["/usr/bin/taskset", "-c", "\($0)"] } ?? []) + [
                openssl, "s_server", "-accept", "127.0.0.1:\(port)", "-cert", "\(d)/server.pem", "-key", "\(d)/server.key",
                "-CAfile", "\(d)/ca.pem", "-Verify", "1", "-tls1_3", "-rev", "-quiet",
            ],
            log: "\(d)/s_server.log", pipes: false)
        var err = [CChar](repeating: 0, count: 256)
        guard let ctx = cb_tls_client_ctx("\(d)/client.pem", "\(d)/client.key", "\(d)/ca.pem", &err, err.count) else {
            server.stop(after: 1)
            throw BenchError("libssl: \(err.withUnsafeBufferPointer { String(cString: $0.baseAddress!) })")
        }
        context = ctx
        // Wait for the server to listen.
        for _ in 0..<500 {
            if (try? libsslConnection()) != nil { return }
            usleep(10_000)
        }
        server.stop(after: 1)
        throw BenchError("openssl s_server did not answer on port \(port); see \(d)/s_server.log")
    }

    func libsslConnection() throws -> Double {
        var err = [CChar](repeating: 0, count: 256)
        let ns = cb_tls_connection_ns(context, Int32(port), &err, err.count)
        guard ns > 0 else { throw BenchError("TLS connection: \(err.withUnsafeBufferPointer { String(cString: $0.baseAddress!) })") }
        return Double(ns)
    }

    /// `openssl s_client` run as a command: start → handshake → "CLOSE" echoed → server closes → exit.
    func sClientConnection() throws -> Double {
        let t0 = now()
        let child = try ChildProcess(
            [
                openssl, "s_client", "-connect", "127.0.0.1:\(port)", "-cert", "\(directory)/client.pem",
                "-key", "\(directory)/client.key", "-CAfile", "\(directory)/ca.pem", "-verify_return_error",
                "-tls1_3", "-quiet", "-ign_eof",
            ], log: "\(directory)/s_client.log", pipes: true)
        _ = child.lines() // drained until it exits
        _ = child.send(line: "CLOSE")
        let code = child.stop(after: 10, signal: nil)
        guard code == 0 else { throw BenchError("openssl s_client exited \(code); see \(directory)/s_client.log") }
        return Double(now() - t0)
    }

    func stop() { server.stop(after: 2) }
}

func freeLoopbackPort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var addr = sockaddr_in()
    addr.sin_family = sa_family_t(AF_INET)
    addr.sin_addr.s_addr = inet_addr("127.0.0.1")
    var len = socklen_t(MemoryLayout<sockaddr_in>.size)
    let ok = withUnsafeMutablePointer(to: &addr) { p in
        p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) == 0 && getsockname(fd, $0, &len) == 0 }
    }
    guard ok else { throw BenchError("no free loopback port") }
    return Int(UInt16(bigEndian: addr.sin_port))
}
