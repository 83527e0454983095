import Foundation
import NearcardText

/// What avahi-daemon itself publishes that can undo Nearcard's random host names (docs/PROTOCOL.md
/// §3): a stock configuration announces the machine's own name with the same addresses, and a reverse
/// record from each address to that name, so an observer can map `nc-….local` to `laptop.local`.
enum AvahiPrivacy {
    static let configPath = "/etc/avahi/avahi-daemon.conf"

    /// The `key=value` lines of one `[section]` of an avahi-daemon.conf (comments and other sections left out).
    static func values(_ text: String, section: String) -> [String: String] {
        var current = ""
        var out: [String: String] = [:]
        for raw in text.split(whereSeparator: \.isNewline) {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("[") && line.hasSuffix("]") {
                current = String(line.dropFirst().dropLast())
                continue
            }
            guard current == section, let eq = line.firstIndex(of: "=") else { continue }
            out[line[..<eq].trimmingCharacters(in: .whitespaces)] = line[line.index(after: eq)...].trimmingCharacters(in: .whitespaces).lowercased()
        }
        return out
    }

    /// The settings that would keep the machine's own records from naming it, given the configuration's text.
    static func leaks(_ text: String) -> [String] {
        let publish = values(text, section: "publish")
        if publish["disable-publishing"] == "yes" { return [] }
        var out: [String] = []
        if (publish["publish-addresses"] ?? "yes") != "no" { out.append("publish-addresses=no") }
        if publish["publish-workstation"] == "yes" { out.append("publish-workstation=no") }
        if publish["publish-hinfo"] == "yes" { out.append("publish-hinfo=no") }
        return out
    }

    /// The doctor's `privacy` finding: a warning (exchanges work) when avahi-daemon names the machine.
    /// `hostName`: the name avahi-daemon publishes (else the kernel's host name + `.local`).
    static func check(configPath: String = configPath, hostName: String? = nil) -> DoctorCheck {
        guard let text = try? String(contentsOfFile: configPath, encoding: .utf8) else {
            return DoctorCheck("privacy", .skipped, Phrase("cannot read %1$@", configPath))
        }
        let settings = leaks(text)
        guard !settings.isEmpty else { return DoctorCheck("privacy", .ok, Phrase("avahi-daemon does not publish this machine's own name")) }
        let restart =
            FileManager.default.fileExists(atPath: "/run/systemd/system")
            ? Firewall.asRoot("systemctl restart avahi-daemon") : Firewall.asRoot("service avahi-daemon restart")
        return DoctorCheck(
            "privacy", .warning,
            Phrase(
                "avahi-daemon publishes this machine's own name (%1$@) with the same addresses, and a reverse record from each address to it: an observer can tell the random names Nearcard announces are this machine",
                hostName ?? ProcessInfo.processInfo.hostName + ".local"),
            fix: Phrase(
                "in the [publish] section of %1$@ set %2$@ (programs that find this machine by its name over mDNS stop finding it), then: %3$@",
                configPath, settings.joined(separator: ", "), restart)
        )
    }
}
