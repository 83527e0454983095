import Foundation
import NearcardCrypto
public import NearcardNode
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The control socket (docs/JSONL.md, "The control socket"): while a node runs on a home, the commands
/// typed beside it (`exchange`, `message`, `id rotate-presence`, `card set` …) are carried out or
/// applied by that node, over `control.sock` in the home — a Unix socket, mode 0600, that accepts only
/// the node's own user (SO_PEERCRED) and speaks the JSON lines of `listen --jsonl`.
public enum ControlSocket {
    /// The socket's path in a home.
    public static func path(home: String) -> String { home + "/control.sock" }
    /// Connections served at once; one more is told so and closed (a person's commands use one each).
    public static let maximumConnections = 16
    /// The longest line read from a connection (as on stdin, `JSONLines.maximumCommandLength`).
    static let maximumLine = JSONLines.maximumCommandLength
    /// Lines queued for a connection that does not read them; past this it is closed.
    static let maximumQueued = 256
    /// `sun_path` holds 108 bytes with its terminating NUL.
    static let maximumPathBytes = 107

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// A `sockaddr_un` for `path`, or why there can be none.
    static func address(_ path: String) throws(Failure) -> sockaddr_un {
        let bytes = Array(path.utf8)
        guard bytes.count <= maximumPathBytes else {
            throw Failure(description: "the path \(path) is \(bytes.count) bytes, longer than a Unix socket's \(maximumPathBytes)")
        }
        var a = sockaddr_un()
        a.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &a.sun_path) { raw in
            for (i, b) in bytes.enumerated() { raw[i] = b }
            raw[bytes.count] = 0
        }
        return a
    }

    /// The user id of the process at the other end of a connected Unix socket (SO_PEERCRED).
    static func peerUID(_ fd: Int32) -> uid_t? {
        // struct ucred { pid_t pid; uid_t uid; gid_t gid; } (socket(7)); Glibc hides it behind _GNU_SOURCE.
        var cred: (Int32, UInt32, UInt32) = (0, 0, 0)
        var length = socklen_t(MemoryLayout.size(ofValue: cred))
        guard getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &length) == 0, Int(length) == MemoryLayout.size(ofValue: cred) else { return nil }
        return cred.1
    }

    /// Writes all of `bytes`, or returns false (the other end went away, or it stopped reading for
    /// longer than the socket's send timeout).
    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += n
        }
        return true
    }
}

/// The node's end of the control socket: accepts its own user's connections and answers each one's
/// JSON-lines commands against the running node (one `Controller` a connection, with the events of the
/// exchanges that connection started).
public final class ControlServer: Sendable {
    let path: String
    private let fd: Int32
    private let runtime: NodeRuntime
    private let state = Mutex<(stopped: Bool, connections: [Int32: ControlConnection])>((false, [:]))

    /// Binds `control.sock` in `home` (a socket left there by a node that died is replaced: the caller
    /// holds the home's node lock, so no other node is using it) and starts accepting.
    public static func start(home: String, runtime: NodeRuntime) throws -> ControlServer {
        let path = ControlSocket.path(home: home)
        var address = try ControlSocket.address(path)
        var info = stat()
        if lstat(path, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFSOCK else {
                throw ControlSocket.Failure(description: "\(path) exists and is not a socket: move it away")
            }
            unlink(path)
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw ControlSocket.Failure(description: "cannot make a socket: \(String(cString: strerror(errno)))") }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, chmod(path, 0o600) == 0, listen(fd, Int32(ControlSocket.maximumConnections)) == 0 else {
            let why = String(cString: strerror(errno))
            close(fd)
            unlink(path)
            throw ControlSocket.Failure(description: "cannot serve \(path): \(why)")
        }
        let server = ControlServer(path: path, fd: fd, runtime: runtime)
        let thread = Thread { server.acceptLoop() }
        thread.name = "nearcard-control"
        thread.start()
        return server
    }

    private init(path: String, fd: Int32, runtime: NodeRuntime) {
        self.path = path
        self.fd = fd
        self.runtime = runtime
    }

    private func acceptLoop() {
        let me = geteuid()
        while !state.withLock({ $0.stopped }) {
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, 200) > 0 else { continue }
            let client = accept(fd, nil, nil)
            guard client >= 0 else { continue }
            _ = fcntl(client, F_SETFD, FD_CLOEXEC)
            // Another user (root included) never drives this node: the home is its owner's alone.
            guard let uid = ControlSocket.peerUID(client), uid == me else {
                let who = ControlSocket.peerUID(client).map { "user id \($0)" } ?? "an unknown user"
                close(client)
                runtime.events.emit(
                    .error(message: "control socket: refused a connection from \(who): only this node's own user may use \(path)"))
                continue
            }
            // A reader that stops reading is closed after 5 s instead of holding the node's threads.
            var timeout = timeval(tv_sec: 5, tv_usec: 0)
            setsockopt(client, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            let admitted = state.withLock { s -> Bool in
                guard !s.stopped, s.connections.count < ControlSocket.maximumConnections else { return false }
                return true
            }
            guard admitted else {
                let line = JSONLines.line(
                    "error", ["message": .string("the node serves \(ControlSocket.maximumConnections) control connections at once; try again"), "ref": .null])
                _ = ControlSocket.writeAll(client, Array((line.canonicalText + "\n").utf8))
                close(client)
                continue
            }
            let connection = ControlConnection(fd: client, runtime: runtime) { [weak self] in
                _ = self?.state.withLock { $0.connections.removeValue(forKey: client) }
            }
            state.withLock { $0.connections[client] = connection }
            connection.start()
        }
    }

    /// Stops accepting, ends every connection (a command waiting on one is told the node stopped) and
    /// removes the socket.
    public func stop() {
        let open = state.withLock { s -> [ControlConnection] in
            guard !s.stopped else { return [] }
            s.stopped = true
            return Array(s.connections.values)
        }
        for c in open { c.finish() }
        close(fd)
        unlink(path)
    }
}

/// One command-line process talking to the node: its commands, its replies, and the events of the
/// exchanges it started — written in order by a thread of its own, so an event loop never waits on it.
final class ControlConnection: Sendable {
    private let fd: Int32
    private let runtime: NodeRuntime
    private let scope = ControlScope()
    private let queue = Mutex<(lines: [String], closed: Bool)>(([], false))
    private let ready = NSCondition()
    private let closed: @Sendable () -> Void
    private let observer = Mutex<Int?>(nil)
    private let controller = Mutex<Controller?>(nil)
    private let ended = Mutex(0)

    init(fd: Int32, runtime: NodeRuntime, closed: @escaping @Sendable () -> Void) {
        self.fd = fd
        self.runtime = runtime
        self.closed = closed
    }

    func start() {
        let scope = self.scope
        let identity = runtime.identity
        let token = runtime.events.observe { [weak self] event in
            guard let self, scope.owns(event), let line = JSONLines.encode(event, identity: identity) else { return }
            self.write(line)
        }
        observer.withLock { $0 = token }
        let controller = Controller(runtime: runtime, output: { [weak self] in self?.write($0) }, quit: { [weak self] in self?.finish() }, scope: scope)
        self.controller.withLock { $0 = controller }
        let reader = Thread { [self] in self.readLoop(controller) }
        reader.name = "nearcard-control-read"
        reader.start()
        let writer = Thread { [self] in self.writeLoop() }
        writer.name = "nearcard-control-write"
        writer.start()
    }

    func write(_ line: JSONValue) {
        let text = line.canonicalText
        let overflow = queue.withLock { q -> Bool in
            guard !q.closed else { return false }
            if q.lines.count >= ControlSocket.maximumQueued { return true }
            q.lines.append(text)
            return false
        }
        if overflow { finish() }
        ready.lock()
        ready.signal()
        ready.unlock()
    }

    private func readLoop(_ controller: Controller) {
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        reading: while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            buffer.append(contentsOf: chunk[0..<n])
            while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                controller.handle(line: line)
            }
            if buffer.count > ControlSocket.maximumLine {
                write(JSONLines.line("error", ["message": .string("command longer than \(ControlSocket.maximumLine) bytes"), "ref": .null]))
                break reading
            }
        }
        // The command-line process went away (or sent too much): its dials end with it.
        Task {
            await controller.drain(timeout: 0)
            self.finish()
        }
        threadEnded()
    }

    private func writeLoop() {
        while true {
            ready.lock()
            var batch: [String] = []
            var done = false
            while true {
                (batch, done) = queue.withLock { q in
                    defer { q.lines.removeAll() }
                    return (q.lines, q.closed)
                }
                if !batch.isEmpty || done { break }
                _ = ready.wait(until: Date().addingTimeInterval(1))
            }
            ready.unlock()
            if !batch.isEmpty {
                let bytes = Array(batch.map { $0 + "\n" }.joined().utf8)
                if !ControlSocket.writeAll(fd, bytes) {
                    finish()
                    done = true
                }
            }
            if done { break }
        }
        if let token = observer.withLock({ $0 }) { runtime.events.stopObserving(token) }
        // Wakes the reader; the descriptor is closed once both threads are done with it (never while the
        // reader could still read it, and so never a number the next connection was given).
        shutdown(fd, Int32(SHUT_RDWR))
        threadEnded()
    }

    /// The reader or the writer is done; the second to finish closes the socket.
    private func threadEnded() {
        let last = ended.withLock { n -> Bool in
            n += 1
            return n == 2
        }
        guard last else { return }
        close(fd)
        closed()
    }

    /// Ends the connection once what is queued is written.
    func finish() {
        queue.withLock { $0.closed = true }
        ready.lock()
        ready.signal()
        ready.unlock()
    }
}

/// Which events belong to one control connection: those of the exchanges it dialled (their ids, as
/// its consent was asked to expect them) and, while one of its dials is under way, the node's retries.
final class ControlScope: Sendable {
    private let state = Mutex<(ids: Set<String>, dialling: Int)>(([], 0))

    func owns(_ event: NodeEvent) -> Bool {
        switch event {
        case .exchangeRequested(let id, _, _, _, _, _), .exchangeCheckCode(let id, _), .exchangeUnconfirmed(let id, _, _),
            .exchangeCompleted(let id, _, _, _, _), .exchangeFailed(let id, _, _, _), .exchangeAbandoned(let id, _, _):
            return state.withLock { $0.ids.contains(id) }
        case .stillDialing:
            return state.withLock { $0.dialling > 0 }
        default:
            return false
        }
    }

    func expect(_ id: String) { _ = state.withLock { $0.ids.insert(id) } }
    func dialling(_ started: Bool) { state.withLock { $0.dialling += started ? 1 : -1 } }

    /// `inner`'s consent, with the exchange's id kept so that its events reach this connection.
    func consent(_ inner: any ConsentProvider) -> any ConsentProvider { Scoped(inner: inner, scope: self) }

    struct Scoped: ConsentProvider {
        let inner: any ConsentProvider
        let scope: ControlScope
        func decide(_ request: ConsentRequest) async -> ConsentAnswer { await inner.decide(request) }
        func immediateAnswer(_ request: ConsentRequest) -> ConsentAnswer? { inner.immediateAnswer(request) }
        func acceptanceMessage(_ request: ConsentRequest) -> String? { inner.acceptanceMessage(request) }
        var waitsForCommand: Bool { inner.waitsForCommand }
        func expect(_ exchangeID: String) {
            scope.expect(exchangeID)
            inner.expect(exchangeID)
        }
    }
}
