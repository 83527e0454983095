import Dispatch
import Foundation
import NearcardDiscovery
import NearcardText

#if canImport(Glibc)
    import Glibc
#endif

/// What `nearcard doctor` asks of the network by itself, below Avahi: the interfaces and their flags,
/// whether a TCP port is free or answers, whether a Unix socket takes a connection, and whether an mDNS
/// query sent out on an interface comes back answered (a firewall dropping UDP 5353 stops it).
enum NetworkProbe {
    struct Interface: Equatable {
        var name: String
        var up: Bool
        var loopback: Bool
        var multicast: Bool
        var ipv4: [String]
        var ipv6: [String]
    }

    /// The machine's interfaces (getifaddrs), in the order the system lists them.
    static func interfaces() -> [Interface] {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return [] }
        defer { freeifaddrs(list) }
        var out: [Interface] = []
        var node: UnsafeMutablePointer<ifaddrs>? = first
        while let n = node {
            node = n.pointee.ifa_next
            let name = String(cString: n.pointee.ifa_name)
            let flags = Int32(n.pointee.ifa_flags)
            var index = out.firstIndex { $0.name == name }
            if index == nil {
                out.append(
                    Interface(
                        name: name, up: flags & Int32(IFF_UP) != 0, loopback: flags & Int32(IFF_LOOPBACK) != 0,
                        multicast: flags & Int32(IFF_MULTICAST) != 0, ipv4: [], ipv6: []))
                index = out.count - 1
            }
            guard let addr = n.pointee.ifa_addr else { continue }
            var buf = [CChar](repeating: 0, count: Int(NI_MAXHOST))
            let family = Int32(addr.pointee.sa_family)
            let length = socklen_t(family == AF_INET ? MemoryLayout<sockaddr_in>.size : MemoryLayout<sockaddr_in6>.size)
            guard family == AF_INET || family == AF_INET6,
                getnameinfo(addr, length, &buf, socklen_t(buf.count), nil, 0, NI_NUMERICHOST) == 0
            else { continue }
            let ip = buf.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            if family == AF_INET { out[index!].ipv4.append(ip) } else { out[index!].ipv6.append(ip) }
        }
        return out
    }

    enum PortState: Equatable {
        case free
        case inUse
        case refused(String)
    }

    /// Whether TCP `port` can be bound on every address (as `nearcard listen` binds it).
    static func portState(_ port: Int) -> PortState {
        let (fd, _) = listen(onPort: port)
        if fd >= 0 {
            close(fd)
            return .free
        }
        return errno == EADDRINUSE ? .inUse : .refused(String(cString: strerror(errno)))
    }

    /// A TCP socket listening on `port` (0: any) on every address, as `nearcard listen` binds, and the
    /// port it got; -1 (with errno set) when it cannot.
    static func listen(onPort port: Int) -> (Int32, Int) {
        let fd = socket(AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return (-1, 0) }
        var yes: Int32 = 1
        var no: Int32 = 0
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &no, socklen_t(MemoryLayout<Int32>.size))
        var addr = sockaddr_in6()
        addr.sin6_family = sa_family_t(AF_INET6)
        addr.sin6_port = in_port_t(UInt16(port).bigEndian)
        addr.sin6_addr = in6addr_any
        var length = socklen_t(MemoryLayout<sockaddr_in6>.size)
        let ok = withUnsafeMutablePointer(to: &addr) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.bind(fd, $0, length) == 0 && Glibc.listen(fd, 16) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard ok else {
            let saved = errno
            close(fd)
            errno = saved
            return (-1, 0)
        }
        return (fd, Int(UInt16(bigEndian: addr.sin6_port)))
    }

    /// The process listening on TCP `port`, when this user may see it (its own processes): its pid and
    /// command name, from /proc/net/tcp{,6} and the processes' file descriptors. A serving nearcard is
    /// not dumpable, so its descriptors are out of sight even to its own user: a socket this user owns,
    /// while a `nearcard` process of this user runs, is taken to be that node.
    static func listener(onPort port: Int) -> (pid: Int32, command: String)? {
        var inodes: Set<String> = []
        var owners: Set<String> = []
        let hexPort = String(format: ":%04X", port)
        for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
            guard let text = try? String(contentsOfFile: table, encoding: .utf8) else { continue }
            for line in text.split(separator: "\n").dropFirst() {
                let f = line.split(separator: " ", omittingEmptySubsequences: true)
                guard f.count > 9, f[1].hasSuffix(hexPort), f[3] == "0A" else { continue } // 0A: LISTEN
                inodes.insert(String(f[9]))
                owners.insert(String(f[7]))
            }
        }
        guard !inodes.isEmpty, let pids = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return nil }
        if owners.contains(String(getuid())) {
            for pid in pids where pid.allSatisfy(\.isNumber) && Int32(pid) != getpid() {
                let command = (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
                guard command == "nearcard", let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
                    let uidLine = status.split(separator: "\n").first(where: { $0.hasPrefix("Uid:") }),
                    uidLine.split(whereSeparator: { $0 == "\t" || $0 == " " }).dropFirst().first == Substring(String(getuid()))
                else { continue }
                return (Int32(pid) ?? 0, "nearcard")
            }
        }
        for pid in pids where pid.allSatisfy(\.isNumber) {
            guard let fds = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd") else { continue }
            for fd in fds {
                guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(fd)"),
                    target.hasPrefix("socket:["), inodes.contains(String(target.dropFirst(8).dropLast()))
                else { continue }
                let command = (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "?"
                return (Int32(pid) ?? 0, command)
            }
        }
        return nil
    }

    /// Whether a Unix stream socket at `path` takes a connection (nil) or why not.
    static func unixSocketProblem(_ path: String) -> Phrase? {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return Phrase(verbatim: String(cString: strerror(errno))) }
        defer { close(fd) }
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: addr.sun_path) else { return Phrase("the path is too long") }
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            for (i, b) in bytes.enumerated() { raw[i] = b }
        }
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        return rc == 0 ? nil : Phrase(verbatim: String(cString: strerror(errno)))
    }

    /// Sends a DNS-SD query for `serviceType`'s instances to 224.0.0.251:5353 out of the interface with
    /// IPv4 address `ip` (looped back to this machine's own responder), and waits up to `seconds` for an
    /// answer naming `instance`. From a port other than 5353 the query is a "legacy unicast" one: the
    /// responder answers to that port directly (RFC 6762 §6.7), the way `dig -p 5353 @224.0.0.251` asks.
    static func mdnsAnswers(instance: String, serviceType: String, via ip: String, seconds: Double) async -> Bool {
        await withCheckedContinuation { (done: CheckedContinuation<Bool, Never>) in
            DispatchQueue.global().async { done.resume(returning: mdnsAnswersNow(instance: instance, serviceType: serviceType, via: ip, seconds: seconds)) }
        }
    }

    static func mdnsAnswersNow(instance: String, serviceType: String, via ip: String, seconds: Double) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var local = in_addr()
        guard inet_pton(AF_INET, ip, &local) == 1 else { return false }
        setsockopt(fd, Int32(IPPROTO_IP), IP_MULTICAST_IF, &local, socklen_t(MemoryLayout<in_addr>.size))
        var loop: UInt8 = 1
        setsockopt(fd, Int32(IPPROTO_IP), IP_MULTICAST_LOOP, &loop, 1)
        let id = UInt16.random(in: 1...UInt16.max)
        var query: [UInt8] = [UInt8(id >> 8), UInt8(id & 0xFF), 0, 0, 0, 1, 0, 0, 0, 0, 0, 0]
        for label in (serviceType + ".local").split(separator: ".") {
            query.append(UInt8(label.utf8.count))
            query += Array(label.utf8)
        }
        query += [0, 0, 12, 0, 1] // PTR, IN
        var to = sockaddr_in()
        to.sin_family = sa_family_t(AF_INET)
        to.sin_port = in_port_t(UInt16(5353).bigEndian)
        inet_pton(AF_INET, "224.0.0.251", &to.sin_addr)
        let sent = withUnsafePointer(to: &to) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(fd, query, query.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard sent == query.count else { return false }
        let wanted = Array(instance.utf8)
        let deadline = Date().addingTimeInterval(seconds)
        var buf = [UInt8](repeating: 0, count: 9000)
        while Date() < deadline {
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let wait = Int32(max(1, deadline.timeIntervalSinceNow * 1000))
            guard poll(&p, 1, wait) > 0 else { continue }
            let n = recv(fd, &buf, buf.count, 0)
            guard n > 12, buf[0] == query[0], buf[1] == query[1] else { continue }
            let answer = buf[0..<n]
            if answer.count >= wanted.count,
                (0...(answer.count - wanted.count)).contains(where: {
                    answer[answer.startIndex + $0..<answer.startIndex + $0 + wanted.count].elementsEqual(wanted)
                })
            {
                return true
            }
        }
        return false
    }
}
