import Foundation
public import NearcardCrypto
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A command's line to the node running on its home (the control socket, docs/JSONL.md): nil from
/// `connect` when no node serves the home, and the command then works alone. A socket left by a node
/// that died refuses the connection, so it never blocks a command.
///
///     if let node = NodeLink.connect(home: home) {
///         let reply = try await node.call(["cmd": "rotate-presence"])
///     }
public final class NodeLink: Sendable {
    private let fd: Int32
    /// Every line the node writes to this connection (replies and the events of its exchanges), in order.
    public let lines: AsyncStream<JSONValue>
    private let counter = Mutex(0)

    /// Why a call could not be made or answered.
    public struct Failure: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    /// Connects to the node serving `home`; nil when none does (no socket, or a stale one) or when the
    /// process at the other end is not this user's.
    public static func connect(home: String) -> NodeLink? {
        let path = ControlSocket.path(home: home)
        guard var address = try? ControlSocket.address(path) else { return nil }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        // The home is its owner's (0700); a node of another user there is not ours to drive.
        guard connected == 0, ControlSocket.peerUID(fd) == geteuid() else {
            close(fd)
            return nil
        }
        return NodeLink(fd: fd)
    }

    private init(fd: Int32) {
        self.fd = fd
        let (stream, continuation) = AsyncStream.makeStream(of: JSONValue.self, bufferingPolicy: .unbounded)
        lines = stream
        let reader = Thread {
            var buffer: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 16384)
            while true {
                let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { break }
                buffer.append(contentsOf: chunk[0..<n])
                while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = Array(buffer[..<newline])
                    buffer.removeSubrange(...newline)
                    if let value = try? JSONParser(maximumDepth: 32, maximumLength: 1 << 24).parse(line) { continuation.yield(value) }
                }
            }
            continuation.finish()
        }
        reader.name = "nearcard-link"
        reader.start()
    }

    deinit {
        shutdown(fd, Int32(SHUT_RDWR))
        close(fd)
    }

    /// Sends one command (a JSON object, `cmd` and its members) and returns the `ref` it carries.
    @discardableResult
    public func send(_ command: JSONObject) throws(Failure) -> String {
        var o = command
        let n = counter.withLock { n in
            n += 1
            return n
        }
        let ref = o["ref"]?.stringValue ?? "c\(n)"
        o["ref"] = .string(ref)
        guard ControlSocket.writeAll(fd, Array((JSONValue.object(o).canonicalText + "\n").utf8)) else {
            throw Failure(description: "the node running on this home stopped answering (\(String(cString: strerror(errno))))")
        }
        return ref
    }

    /// Sends a command and waits for its reply (events in between are passed to `event`).
    public func call(_ command: JSONObject, event: (JSONValue) async -> Void = { _ in }) async throws(Failure) -> JSONValue {
        let ref = try send(command)
        for await line in lines {
            if line["event"] == "reply", line["ref"]?.stringValue == ref { return line }
            if line["event"] == "stopped" || (line["event"] == "error" && line["ref"]?.stringValue == ref) { break }
            await event(line)
        }
        throw Failure(description: "the node running on this home stopped before it answered")
    }
}
