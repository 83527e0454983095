import FuzzSupport

/// The frame parser: any bytes, in any pieces, give frames or a typed error, never a crash, and
/// never more buffered than the limit allows.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFrame(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = Fuzz.bytes(data, size)
    var parser = FrameParser()
    // The first byte sets how the stream is cut into reads (1…256 bytes each).
    let piece = Int(input.first ?? 0) + 1
    var i = 1
    reading: while i < input.count {
        let end = min(input.count, i + piece)
        parser.append(bytes: input[i..<end])
        i = end
        while true {
            do {
                guard let frame = try parser.nextFrame() else { break }
                precondition(frame.count <= ProtocolLimits.maximumFrameLength)
            } catch {
                break reading
            }
        }
    }
    return 0
}
