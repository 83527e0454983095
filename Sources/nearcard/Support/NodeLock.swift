import Foundation
import NearcardCrypto

#if canImport(Glibc)
    import Glibc
#endif

/// One node per home: `listen`, `bot` and `ui` hold an exclusive lock on `node.lock` in the home while
/// they serve, and write there what they are (the command, its pid and port, the web app's address). A
/// second node of the same home finds it and says so — or, for `ui`, opens the running page — instead
/// of starting a second node with the same identity. The lock goes with the process (the kernel drops
/// it), so a killed node leaves nothing that blocks the next.
final class NodeLock: @unchecked Sendable {
    /// What the running node wrote.
    struct Holder: Error, Equatable {
        var command: String
        var pid: Int
        var port: Int?
        /// The web app's address without its token (a `ui`).
        var page: String?
    }

    private let fd: Int32
    private let path: String

    private init(fd: Int32, path: String) {
        self.fd = fd
        self.path = path
    }

    static func path(home: String) -> String { home + "/node.lock" }

    /// Takes the home's lock for `command`, or returns who holds it.
    static func acquire(home: String, command: String) -> Result<NodeLock, Holder> {
        let path = path(home: home)
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return .success(NodeLock(fd: -1, path: path)) } // an unwritable home is said elsewhere
        if flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let holder = read(fd: fd) ?? Holder(command: "a Nearcard node", pid: 0)
            close(fd)
            return .failure(holder)
        }
        let lock = NodeLock(fd: fd, path: path)
        lock.record(Holder(command: command, pid: Int(getpid())))
        return .success(lock)
    }

    /// Says what this node is now (its port once bound, the page once served).
    func record(_ holder: Holder) {
        guard fd >= 0 else { return }
        var o: JSONObject = ["command": .string(holder.command), "pid": .number(Double(holder.pid))]
        if let port = holder.port { o["port"] = .number(Double(port)) }
        if let page = holder.page { o["page"] = .string(page) }
        let bytes = Array(JSONValue.object(o).compactText.utf8)
        _ = ftruncate(fd, 0)
        _ = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
    }

    private static func read(fd: Int32) -> Holder? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard n > 0, let o = try? JSONParser.parse(String(decoding: buffer.prefix(n), as: UTF8.self)),
            let command = o["command"]?.stringValue, let pid = o["pid"]?.integerValue
        else { return nil }
        return Holder(command: command, pid: Int(pid), port: o["port"]?.integerValue.map { Int($0) }, page: o["page"]?.stringValue)
    }

    /// The line a second node of the home says.
    static func refusal(_ holder: Holder, home: String) -> String {
        let command = "nearcard \(holder.command)"
        guard holder.pid > 0 else {
            return t("this home (%1$@) already has a running node, %2$@: one node per home — stop it first, or give another --home", home, command)
        }
        if let port = holder.port {
            return t(
                "this home (%1$@) already has a running node, %2$@ (pid %3$@, port %4$@): one node per home — stop it first, or give another --home", home,
                command, String(holder.pid), String(port))
        }
        return t(
            "this home (%1$@) already has a running node, %2$@ (pid %3$@): one node per home — stop it first, or give another --home", home, command,
            String(holder.pid))
    }

    deinit {
        if fd >= 0 {
            _ = ftruncate(fd, 0)
            close(fd)
        }
    }
}
