import NearcardDiscovery
import Testing

@Suite struct TXTRecordTests {
    @Test func roundTrips() {
        let txt = TXTRecord(fingerprint: "0123456789abcdef", name: "Ada Lovelace")
        #expect(TXTRecord(parsing: txt.entries) == txt)
        #expect(txt.entries.map { String(decoding: $0, as: UTF8.self) } == ["v=1", "fp=0123456789abcdef", "name=Ada Lovelace"])
    }

    @Test func malformedValuesAreDroppedNotTrusted() {
        let t = TXTRecord(parsing: [Array("fp=XYZ".utf8), Array("name=bell\u{07}".utf8), Array("v=abc".utf8), [0x6E, 0x61, 0x6D, 0x65, 0x3D, 0xFF]])
        #expect(t.fingerprint == nil && t.name == nil && t.version == nil)
        // Upper-case fingerprints are not ours; keys are case-insensitive; the first occurrence wins.
        let u = TXTRecord(parsing: [Array("FP=0123456789abcdef".utf8), Array("fp=fedcba9876543210".utf8), Array("NAME=x".utf8)])
        #expect(u.fingerprint == "0123456789abcdef" && u.name == "x")
        #expect(TXTRecord(parsing: [Array("fp=0123456789ABCDEF".utf8)]).fingerprint == nil)
        // Entries without '=', empty, or over 255 bytes are ignored; unknown keys too.
        let w = TXTRecord(parsing: [[], Array("novalue".utf8), Array(repeating: 0x61, count: 300), Array("other=1".utf8)])
        #expect(w == TXTRecord(version: nil, fingerprint: nil, name: nil))
    }

    @Test func longNamesAreClippedToOneTXTString() {
        let long = String(repeating: "é", count: 200)
        let txt = TXTRecord(fingerprint: nil, name: long)
        #expect(txt.entries.allSatisfy { $0.count <= 255 })
        #expect(TXTRecord(parsing: txt.entries).name?.unicodeScalars.count == 64)
    }
}

@Suite struct InterfaceFilterTests {
    @Test func leavesOutTunnelsAndBridgesByDefault() {
        let f = InterfaceFilter()
        for name in ["docker0", "br-1a2b3c", "virbr0", "tun0", "wg0", "tailscale0", "veth1a2b3c"] { #expect(!f.permits(name), "\(name)") }
        for name in ["eth0", "wlp2s0", "enp0s31f6", "lo", "nc-nab12", "vethernet-not-hex"] { #expect(f.permits(name), "\(name)") }
    }

    @Test func allowListWins() {
        let f = InterfaceFilter(allow: ["wlan0"])
        #expect(f.permits("wlan0") && !f.permits("eth0"))
    }
}

@Suite struct PeerAddressTests {
    @Test func describesScopedLinkLocalAddresses() {
        #expect(PeerAddress(ip: "fe80::1", port: 7447, interfaceName: "eth0", interfaceIndex: 2).description == "[fe80::1%eth0]:7447")
        #expect(PeerAddress(ip: "192.0.2.1", port: 7447, interfaceName: "eth0", interfaceIndex: 2).description == "192.0.2.1:7447")
        #expect(PeerAddress(ip: "2001:db8::1", port: 1, interfaceName: "eth0", interfaceIndex: 2).description == "[2001:db8::1]:1")
    }

    /// A DNS-SD instance name is one 63-byte label: longer names are cut at a character boundary.
    @Test func instanceNamesFitOneLabel() {
        let ascii = String(repeating: "a", count: 64)
        #expect(TXTRecord.instanceName(for: ascii) == String(repeating: "a", count: 63))
        let cyrillic = String(repeating: "Ж", count: 35)  // 70 bytes
        let cut = TXTRecord.instanceName(for: cyrillic)
        #expect(cut == String(repeating: "Ж", count: 31) && cut.utf8.count == 62)
        let family = "👨‍👩‍👧‍👦"  // one character of 25 bytes: never split
        let names = TXTRecord.instanceName(for: String(repeating: "x", count: 50) + family)
        #expect(names == String(repeating: "x", count: 50))
        #expect(TXTRecord.instanceName(for: String(repeating: "b", count: 62) + " c") == String(repeating: "b", count: 62))
        #expect(TXTRecord.instanceName(for: "Ada Lovelace") == "Ada Lovelace")
    }
}
