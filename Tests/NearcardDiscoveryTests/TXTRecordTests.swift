import NearcardDiscovery
import Testing

@Suite struct TXTRecordTests {
    static let tag = "00010203040506076224939a79f5f593"

    @Test func roundTrips() {
        let txt = TXTRecord(tag: Self.tag, name: "Ada Lovelace")
        #expect(TXTRecord(parsing: txt.entries) == txt)
        #expect(txt.entries.map { String(decoding: $0, as: UTF8.self) } == ["v=2", "vmax=3", "t=\(Self.tag)", "name=Ada Lovelace"])
        // Private mode: no name at all.
        #expect(TXTRecord(tag: Self.tag, name: nil).entries.map { String(decoding: $0, as: UTF8.self) } == ["v=2", "vmax=3", "t=\(Self.tag)"])
    }

    @Test func malformedValuesAreDroppedNotTrusted() {
        let t = TXTRecord(parsing: [Array("t=XYZ".utf8), Array("name=bell\u{07}".utf8), Array("v=abc".utf8), [0x6E, 0x61, 0x6D, 0x65, 0x3D, 0xFF]])
        #expect(t.tag == nil && t.name == nil && t.version == nil)
        // A name with a bidirectional control would reorder what a face prints after it: ignored.
        for control in ["\u{202E}", "\u{2067}"] {
            #expect(TXTRecord(parsing: [Array("name=Eve\(control)gnp.exe".utf8)]).name == nil)
        }
        // Keys are case-insensitive; the first occurrence wins (RFC 6763 §6.4), even a malformed one.
        let u = TXTRecord(parsing: [Array("T=\(Self.tag)".utf8), Array("t=ffffffffffffffffffffffffffffffff".utf8), Array("NAME=x".utf8)])
        #expect(u.tag == Self.tag && u.name == "x")
        #expect(TXTRecord(parsing: [Array("t=zz".utf8), Array("t=\(Self.tag)".utf8)]).tag == nil)
        // Upper case, a digit short or one too many: treated as absent.
        for bad in [Self.tag.uppercased(), String(Self.tag.dropLast()), Self.tag + "0", ""] {
            #expect(TXTRecord(parsing: [Array("t=\(bad)".utf8)]).tag == nil, "\(bad)")
        }
        // Entries without '=', empty, or over 255 bytes are ignored; unknown keys too, version 1's `fp` among them.
        let w = TXTRecord(parsing: [[], Array("novalue".utf8), Array(repeating: 0x61, count: 300), Array("other=1".utf8), Array("fp=0123456789abcdef".utf8)])
        #expect(w == TXTRecord(version: nil, highestVersion: nil, tag: nil, name: nil))
        // `vmax` (§3): the highest exchange version, 2…999; anything else is absent (a version-2 node).
        #expect(TXTRecord(parsing: [Array("vmax=3".utf8)]).highestVersion == 3)
        for bad in ["1", "x", "", "1000", "-3"] { #expect(TXTRecord(parsing: [Array("vmax=\(bad)".utf8)]).highestVersion == nil, "\(bad)") }
    }

    @Test func longNamesAreClippedToOneTXTString() {
        let long = String(repeating: "é", count: 200)
        let txt = TXTRecord(tag: nil, name: long)
        #expect(txt.entries.allSatisfy { $0.count <= 255 })
        #expect(TXTRecord(parsing: txt.entries).name?.unicodeScalars.count == 64)
    }

    /// What a face shows before any session: a recognised contact, an announced name, or nothing.
    @Test func peersAreShownWithoutAFingerprint() {
        var p = DiscoveredPeer(
            instanceName: "nearcard-0a1b2c3d", hostName: "nc-0011223344556677.local", port: 7447,
            txt: TXTRecord(tag: Self.tag, name: nil), addresses: [])
        #expect(p.displayName == "someone nearby (private)" && p.id == "00010203")
        p.txt.name = "Grace"
        #expect(p.displayName == "Grace")
        p.contact = RecognisedContact(did: "did:key:zDnaeExample", name: "Ada Lovelace", presenceKey: Array(0..<16))
        #expect(p.displayName == "Ada Lovelace (contact)")
        p.txt.tag = nil
        #expect(p.id == nil)
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
        let cyrillic = String(repeating: "Ж", count: 35) // 70 bytes
        let cut = TXTRecord.instanceName(for: cyrillic)
        #expect(cut == String(repeating: "Ж", count: 31) && cut.utf8.count == 62)
        let family = "👨‍👩‍👧‍👦" // one character of 25 bytes: never split
        let names = TXTRecord.instanceName(for: String(repeating: "x", count: 50) + family)
        #expect(names == String(repeating: "x", count: 50))
        #expect(TXTRecord.instanceName(for: String(repeating: "b", count: 62) + " c") == String(repeating: "b", count: 62))
        #expect(TXTRecord.instanceName(for: "Ada Lovelace") == "Ada Lovelace")
    }
}
