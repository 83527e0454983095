internal import NIOCore
import NearcardModel
import NearcardProtocol

/// Splits the TCP stream into frames (docs/PROTOCOL.md "Framing": 2-byte big-endian length, 1…65535
/// bytes). A zero length is a `ProtocolError` the session handler ends the session with. A frame is
/// delivered as soon as its last byte arrives, so at most one incomplete frame (65,537 bytes) is ever
/// buffered: the length field itself is the buffer's bound (§4).
struct FrameDecoder: ByteToMessageDecoder {
    typealias InboundOut = [UInt8]

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let length = buffer.getInteger(at: buffer.readerIndex, as: UInt16.self) else { return .needMoreData }
        guard length > 0 else { throw ProtocolError(.protocolError, "a frame of length zero") }
        guard buffer.readableBytes >= 2 + Int(length) else { return .needMoreData }
        buffer.moveReaderIndex(forwardBy: 2)
        guard let frame = buffer.readBytes(length: Int(length)) else { return .needMoreData }
        context.fireChannelRead(wrapInboundOut(frame))
        return .continue
    }

    /// Bytes left when the connection closes are an incomplete frame: nothing to deliver.
    mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        while try decode(context: context, buffer: &buffer) == .continue {}
        return .needMoreData
    }
}

/// Writes each outbound frame with its length in front, into a buffer of its own that is freed once
/// written. (NIO's MessageToByteHandler keeps one buffer per connection for reuse: half a kilobyte
/// held by every idle session of a node holding a thousand, for a few writes each.)
final class FrameEncoder: ChannelOutboundHandler {
    typealias OutboundIn = [UInt8]
    typealias OutboundOut = ByteBuffer

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let frame = unwrapOutboundIn(data)
        guard !frame.isEmpty, frame.count <= ProtocolLimits.maximumFrameLength else {
            let error = ProtocolError(.internalError, "a frame of \(frame.count) bytes")
            promise?.fail(error)
            context.fireErrorCaught(error)
            return
        }
        var out = context.channel.allocator.buffer(capacity: 2 + frame.count)
        out.writeInteger(UInt16(frame.count))
        out.writeBytes(frame)
        context.write(wrapOutboundOut(out), promise: promise)
    }
}
