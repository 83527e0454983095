import NearcardCrypto
import NearcardModel
import Testing

@testable import NearcardProtocol

/// QR invitations (docs/PROTOCOL.md §19): the text, the proof, and what the state machines do with them.
@Suite struct InvitationProtocolTests {
    /// PROTOCOL.md §19's worked example, computed independently (Python's hmac and json).
    @Test func workedExample() throws {
        let secret = [UInt8](0..<16)
        let proof = Invitation.proof(secret: secret, handshakeHash: [UInt8](repeating: 0x11, count: 32))
        #expect(Hex.encode(proof) == "846bf1512be874392952354a0d7f6adf1a3cf018bc339bf6e656664f675e96de")
        let invitation = Invitation(
            fingerprint: "4b01d34bbfee55b5", name: "Ada Lovelace", addresses: ["192.0.2.7:7447"], id: [UInt8](0..<8),
            secret: secret, expires: 1_795_000_000)
        let text =
            "nearcard-invite:eyJhZGRycyI6WyIxOTIuMC4yLjc6NzQ0NyJdLCJleHAiOjE3OTUwMDAwMDAsImZwIjoiNGIwMWQzNGJiZmVlNTViNSIsImlkIjoiQUFFQ0F3UUZCZ2MiLCJuYW1lIjoiQWRhIExvdmVsYWNlIiwic2VjcmV0IjoiQUFFQ0F3UUZCZ2NJQ1FvTERBME9EdyIsInYiOjF9"
        #expect(invitation.text == text)
        #expect(try Invitation(text: text) == invitation)
    }

    @Test func malformedInvitationsSayWhatIsWrong() {
        let good = Invitation(
            fingerprint: "4b01d34bbfee55b5", name: nil, addresses: ["192.0.2.7:7447"], id: [UInt8](0..<8), secret: [UInt8](0..<16), expires: 1)
        func with(_ change: (inout JSONObject) -> Void) -> String {
            var o = good.json.objectValue!
            change(&o)
            return Invitation.prefix + Base64.urlEncode(JCS.canonicalize(.object(o)))
        }
        let cases: [(String, String)] = [
            ("hello", "not a Nearcard invitation"),
            (Invitation.prefix + "%%%", "damaged"),
            (with { $0["v"] = 2 }, "version"),
            (with { $0["fp"] = "XYZ" }, "fingerprint"),
            (with { $0["addrs"] = [] }, "no address"),
            (with { $0["secret"] = "AAEC" }, "secret"),
            (with { $0["extra"] = 1 }, "unknown member"),
            (Invitation.prefix + String(repeating: "A", count: 4000), "longer than"),
        ]
        for (text, says) in cases {
            #expect { try Invitation(text: text) } throws: { ($0 as? ProtocolError)?.message.contains(says) == true }
        }
    }

    /// The initiator's hello carries {id, proof} under its DID signature; the responder is handed the
    /// proof with its own h, which checks against the secret and not against another.
    @Test func theProofTravelsSignedAndBindsTheSession() throws {
        let a = party("Ada")
        let b = party("Grace")
        let claim = Invitation.Claim(id: Sodium.randomBytes(8), secret: Sodium.randomBytes(16))
        var pair = Pair(a, b)
        pair.i = ExchangeStateMachine(
            initiatorFor: a.local, expected: ExpectedPeer(fingerprint: b.identity.fingerprint), sessionKey: X25519.PrivateKey(),
            ephemeralKey: X25519.PrivateKey(),
            sasNonce: Sodium.randomBytes(32), mailboxToken: Sodium.randomBytes(32), sealKey: X25519.PrivateKey(), psiRandomness: .fresh(),
            invitation: claim)
        pair.start()
        var presented: Invitation.Presented?
        for case .identified(_, _, let invite?) in pair.rEvents { presented = invite }
        let invite = try #require(presented, "the responder is handed the invitation")
        #expect(invite.id == claim.id)
        #expect(invite.isMade(with: claim.secret))
        #expect(!invite.isMade(with: Sodium.randomBytes(16)), "a forged secret does not check")
        // Both sides accept (the driver's part once the invitation checks); the outcome says invited.
        // (v2: the responder decides first, and shows itself in its acceptance.)
        pair.decide(initiator: false, accept: true)
        pair.decide(initiator: true, accept: true)
        #expect(pair.iEvents.completed?.invited == true && pair.rEvents.completed?.invited == true)
        // An ordinary session is not marked.
        var plain = Pair(a, b)
        plain.start()
        plain.decide(initiator: false, accept: true)
        plain.decide(initiator: true, accept: true)
        #expect(plain.iEvents.completed?.invited == false)
        var identified = 0
        for case .identified(_, _, let invite) in plain.rEvents {
            identified += 1
            #expect(invite == nil, "a session opened without an invitation presents none")
        }
        #expect(identified == 1, "the responder identified the initiator once")
    }

    /// An invitation goes with the initiator's identity (v2: a hello without one asks a recognised
    /// contact to prove itself, which an invitation has no part in); a malformed one is refused.
    @Test func anInvitationIsPresentedWithAnIdentity() throws {
        let hello: JSONValue = [
            "type": "hello", "version": 2, "sasCommit": .string(Base64.urlEncode([UInt8](repeating: 2, count: 32))),
            "invite": ["id": .string(Base64.urlEncode([UInt8](repeating: 4, count: 8))), "proof": .string(Base64.urlEncode([UInt8](repeating: 5, count: 32)))],
        ]
        #expect { try ExchangeMessage(decoding: JCS.canonicalize(hello)) } throws: { ($0 as? ProtocolError)?.message.contains("with an identity") == true }
        var bad = hello.objectValue!
        bad["invite"] = ["id": "short", "proof": "x"]
        #expect { try ExchangeMessage(decoding: JCS.canonicalize(.object(bad))) } throws: { ($0 as? ProtocolError)?.code == .protocolError }
    }
}
