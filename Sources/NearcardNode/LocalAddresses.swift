internal import NIOCore
package import NearcardDiscovery
import NearcardModel

/// This machine's addresses, for route hints.
package enum LocalAddresses {
    package static func current(filter: InterfaceFilter) -> [String] {
        guard let interfaces = try? System.enumerateDevices() else { return [] }
        var out: [String] = []
        for device in interfaces where filter.permits(device.name) {
            guard let ip = device.address?.ipAddress, !ip.hasPrefix("127."), ip != "::1", !RouteRecord.Hint.isLinkLocal(ip) else { continue }
            if !out.contains(ip) { out.append(ip) }
        }
        return out
    }
}
