public import NearcardModel

/// Length-prefixed framing on the TCP stream (docs/PROTOCOL.md "Framing"):
/// `length (2 bytes, big-endian) ‖ bytes`, length 1…65535. Incremental and bounded: `append(bytes:)`,
/// then `nextFrame()` until it returns nil (= need more bytes).
public struct FrameParser: Sendable {
    private var buffer: [UInt8] = []
    private var start = 0

    public init() {}

    /// Bytes buffered but not yet returned as frames.
    public var bufferedByteCount: Int { buffer.count - start }

    public mutating func append<C: Collection>(bytes: C) where C.Element == UInt8 {
        if start > 0 && start == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next complete frame's bytes, or nil when more input is needed. A zero length is refused.
    public mutating func nextFrame() throws(ProtocolError) -> [UInt8]? {
        guard buffer.count - start >= 2 else { return nil }
        let length = Int(buffer[start]) << 8 | Int(buffer[start + 1])
        guard length > 0 else { throw ProtocolError(.protocolError, Phrase("a frame of length zero")) }
        guard buffer.count - start >= 2 + length else { return nil }
        let frame = Array(buffer[(start + 2)..<(start + 2 + length)])
        start += 2 + length
        if start > 65536 {
            buffer.removeFirst(start)
            start = 0
        }
        return frame
    }

    /// Frames `bytes` for sending. Callers never pass more than `maximumFrameLength` bytes.
    public static func frame(_ bytes: [UInt8]) -> [UInt8] {
        precondition(!bytes.isEmpty && bytes.count <= ProtocolLimits.maximumFrameLength, "frame of \(bytes.count) bytes")
        return [UInt8(bytes.count >> 8), UInt8(bytes.count & 0xFF)] + bytes
    }
}
