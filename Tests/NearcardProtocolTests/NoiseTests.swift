import Foundation
import NearcardCrypto
import NearcardModel
import Testing

@testable import NearcardProtocol

let vectorsRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Vectors")

func hexBytes(_ s: Any?) -> [UInt8] { try! Hex.decode(s as! String) }

@Suite struct NoiseTests {
    /// The cacophony vector for Noise_XX_25519_ChaChaPoly_SHA256: both sides, in lockstep, produce
    /// the vector's ciphertexts (handshake and transport) and handshake hash.
    @Test func cacophonyXX25519ChaChaPolySHA256() throws {
        let file =
            try JSONSerialization.jsonObject(with: Data(contentsOf: vectorsRoot.appendingPathComponent("noise/cacophony-xx-25519.json"))) as! [String: Any]
        let v = (file["vectors"] as! [[String: Any]]).first { $0["protocol_name"] as? String == NoiseXXHandshake.protocolName }!
        func key(_ name: String) throws -> X25519.PrivateKey { try X25519.PrivateKey(secret: SecureBytes(hexBytes(v[name]))) }
        var initiator = NoiseXXHandshake(
            role: .initiator, prologue: hexBytes(v["init_prologue"]), staticKey: try key("init_static"), ephemeralKey: try key("init_ephemeral"))
        var responder = NoiseXXHandshake(
            role: .responder, prologue: hexBytes(v["resp_prologue"]), staticKey: try key("resp_static"), ephemeralKey: try key("resp_ephemeral"))
        let messages = v["messages"] as! [[String: String]]
        #expect(messages.count == 6)

        // Handshake: initiator, responder, initiator.
        for (i, m) in messages.prefix(3).enumerated() {
            let payload = hexBytes(m["payload"])
            let expected = hexBytes(m["ciphertext"])
            if i % 2 == 0 {
                #expect(try initiator.writeMessage(payload: payload) == expected, "message \(i)")
                #expect(try responder.readMessage(expected) == payload)
            } else {
                #expect(try responder.writeMessage(payload: payload) == expected, "message \(i)")
                #expect(try initiator.readMessage(expected) == payload)
            }
        }
        #expect(initiator.isComplete && responder.isComplete)
        #expect(initiator.handshakeHash == hexBytes(v["handshake_hash"]))
        #expect(responder.handshakeHash == initiator.handshakeHash)
        #expect(initiator.remoteStatic == (try key("resp_static")).publicKey)
        #expect(responder.remoteStatic == (try key("init_static")).publicKey)

        // Transport: the vector continues alternating, responder first.
        var ti = try initiator.split()
        var tr = try responder.split()
        for (i, m) in messages.dropFirst(3).enumerated() {
            let payload = hexBytes(m["payload"])
            let expected = hexBytes(m["ciphertext"])
            if i % 2 == 0 {
                #expect(try tr.encrypt(payload) == expected)
                #expect(try ti.decrypt(expected) == payload)
            } else {
                #expect(try ti.encrypt(payload) == expected)
                #expect(try tr.decrypt(expected) == payload)
            }
        }
    }

    @Test func alteredHandshakeMessagesFail() throws {
        var i = NoiseXXHandshake(role: .initiator, prologue: [], staticKey: X25519.PrivateKey(), ephemeralKey: X25519.PrivateKey())
        var r = NoiseXXHandshake(role: .responder, prologue: [], staticKey: X25519.PrivateKey(), ephemeralKey: X25519.PrivateKey())
        _ = try r.readMessage(try i.writeMessage())
        var m2 = try r.writeMessage()
        m2[40] ^= 1
        #expect(throws: ProtocolError.self) { try i.readMessage(m2) }
        // A different prologue: the handshake fails at message 2.
        var a = NoiseXXHandshake(role: .initiator, prologue: Array("a".utf8), staticKey: X25519.PrivateKey(), ephemeralKey: X25519.PrivateKey())
        var b = NoiseXXHandshake(role: .responder, prologue: Array("b".utf8), staticKey: X25519.PrivateKey(), ephemeralKey: X25519.PrivateKey())
        _ = try b.readMessage(try a.writeMessage())
        #expect(throws: ProtocolError.self) { try a.readMessage(try b.writeMessage()) }
        // Too short.
        var c = NoiseXXHandshake(role: .responder, prologue: [], staticKey: X25519.PrivateKey(), ephemeralKey: X25519.PrivateKey())
        #expect(throws: ProtocolError.self) { try c.readMessage([1, 2, 3]) }
    }

    @Test func transportRefusesReplaysAndOversizedMessages() throws {
        var i = NoiseXXHandshake(role: .initiator, prologue: [], staticKey: X25519.PrivateKey(), ephemeralKey: X25519.PrivateKey())
        var r = NoiseXXHandshake(role: .responder, prologue: [], staticKey: X25519.PrivateKey(), ephemeralKey: X25519.PrivateKey())
        _ = try r.readMessage(try i.writeMessage())
        _ = try i.readMessage(try r.writeMessage())
        _ = try r.readMessage(try i.writeMessage())
        var ti = try i.split()
        var tr = try r.split()
        let c = try ti.encrypt(Array("once".utf8))
        #expect(try tr.decrypt(c) == Array("once".utf8))
        #expect(throws: ProtocolError.self) { try tr.decrypt(c) } // the nonce moved on
        #expect { try ti.encrypt([UInt8](repeating: 0, count: ProtocolLimits.maximumMessageLength + 1)) } throws: {
            ($0 as? ProtocolError)?.code == .tooLarge
        }
        #expect(try ti.encrypt([UInt8](repeating: 0, count: ProtocolLimits.maximumMessageLength)).count == ProtocolLimits.maximumFrameLength)
    }
}

@Suite struct FramingTests {
    @Test func parsesIncrementallyAcrossArbitrarySplits() throws {
        let frames: [[UInt8]] = [[1], Array(repeating: 7, count: 300), Array(repeating: 9, count: 65535)]
        let stream = frames.flatMap { FrameParser.frame($0) }
        for chunk in [1, 2, 3, 1000, stream.count] {
            var parser = FrameParser()
            var out: [[UInt8]] = []
            var i = 0
            while i < stream.count {
                parser.append(bytes: stream[i..<min(i + chunk, stream.count)])
                while let f = try parser.nextFrame() { out.append(f) }
                i += chunk
            }
            #expect(out == frames, "chunk \(chunk)")
            #expect(parser.bufferedByteCount == 0)
        }
    }

    @Test func refusesZeroLengthFrames() {
        var parser = FrameParser()
        parser.append(bytes: [0, 0, 1])
        #expect { try parser.nextFrame() } throws: { ($0 as? ProtocolError)?.code == .protocolError }
    }

    @Test func waitsForMore() throws {
        var parser = FrameParser()
        parser.append(bytes: [0x01])
        #expect(try parser.nextFrame() == nil)
        parser.append(bytes: [0x00])
        #expect(try parser.nextFrame() == nil)
        parser.append(bytes: [UInt8](repeating: 1, count: 255))
        #expect(try parser.nextFrame() == nil)
        parser.append(bytes: [1])
        #expect(try parser.nextFrame()?.count == 256)
    }
}

@Suite struct SASTests {
    @Test func displayAndCommitment() {
        #expect(SAS.display(42) == "000 042")
        #expect(SAS.display(999_999) == "999 999")
        let h = Sodium.randomBytes(32)
        let n = Sodium.randomBytes(32)
        #expect(SAS.commitment(handshakeHash: h, nonce: n) != SAS.commitment(handshakeHash: h, nonce: Sodium.randomBytes(32)))
        #expect(SAS.value(handshakeHash: h, initiatorNonce: n, responderNonce: n) < 1_000_000)
    }
}
