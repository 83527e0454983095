import Foundation
import Testing

@testable import NearcardNode

/// avahi-daemon's own records can name the machine behind Nearcard's random host names: the doctor
/// reads its configuration and says which lines keep them from doing so.
@Suite struct AvahiPrivacyTests {
    @Test func aStockConfigurationNamesTheMachine() {
        // Debian 12's file: publish-addresses is not set, so it is on.
        let stock = "[server]\nuse-ipv4=yes\n[publish]\npublish-hinfo=no\npublish-workstation=no\n[reflector]\n"
        #expect(AvahiPrivacy.leaks(stock) == ["publish-addresses=no"])
        #expect(AvahiPrivacy.leaks("[publish]\npublish-addresses=yes\npublish-workstation=yes\n") == ["publish-addresses=no", "publish-workstation=no"])
    }

    @Test func aQuietConfigurationIsFine() {
        #expect(AvahiPrivacy.leaks("[publish]\n# a comment\npublish-addresses = no\n").isEmpty)
        #expect(AvahiPrivacy.leaks("[publish]\ndisable-publishing=yes\n").isEmpty, "nothing is published at all")
        #expect(AvahiPrivacy.leaks("[server]\npublish-addresses=yes\n[publish]\npublish-addresses=no\n").isEmpty, "only [publish] counts")
    }

    @Test func theFindingIsAWarningWithTheLinesToChange() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("avahi-\(UUID().uuidString).conf").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try "[publish]\npublish-workstation=no\n".write(toFile: path, atomically: true, encoding: .utf8)
        let check = AvahiPrivacy.check(configPath: path)
        #expect(check.status == .warning && check.fix?.contains("set publish-addresses=no") == true && check.fix?.contains(path) == true, "\(check)")
        try "[publish]\npublish-addresses=no\n".write(toFile: path, atomically: true, encoding: .utf8)
        #expect(AvahiPrivacy.check(configPath: path).status == .ok)
    }
}
