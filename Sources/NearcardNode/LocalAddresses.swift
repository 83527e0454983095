import NearcardDiscovery
internal import NIOCore

/// This machine's addresses, for route hints.
public enum LocalAddresses {
    public static func current(filter: InterfaceFilter) -> [String] {
        guard let interfaces = try? System.enumerateDevices() else { return [] }
        var out: [String] = []
        for device in interfaces where filter.permits(device.name) {
            guard let ip = device.address?.ipAddress, ip != "127.0.0.1", ip != "::1", !ip.lowercased().hasPrefix("fe80") else { continue }
            if !out.contains(ip) { out.append(ip) }
        }
        return out
    }
}
