internal import CJPEG

#if canImport(Glibc)
    import Glibc
#endif

/// Reading JPEG images (libjpeg-turbo), for photos of QR codes: a phone's camera writes JPEG.
public enum JPEG {
    /// Whether the bytes start like a JPEG file (SOI marker).
    public static func looksLike(_ data: [UInt8]) -> Bool { data.count > 3 && data[0] == 0xFF && data[1] == 0xD8 && data[2] == 0xFF }

    /// The image as 8-bit grayscale, at most `PNG.maximumDimension` pixels a side.
    public static func decodeGray(_ data: [UInt8]) throws(QRError) -> (width: Int, height: Int, pixels: [UInt8]) {
        var pixels: UnsafeMutablePointer<UInt8>?
        var width: Int32 = 0
        var height: Int32 = 0
        var message = [CChar](repeating: 0, count: 256)
        let rc = nearcard_jpeg_decode_gray(data, UInt(data.count), Int32(PNG.maximumDimension), &pixels, &width, &height, &message, Int32(message.count))
        switch rc {
        case 0:
            guard let pixels else { throw QRError(.image, "the JPEG image decoded to nothing") }
            defer { free(pixels) }
            return (Int(width), Int(height), Array(UnsafeBufferPointer(start: pixels, count: Int(width) * Int(height))))
        case -2:
            throw QRError(.image, "the image is \(width)×\(height); Nearcard reads images up to \(PNG.maximumDimension) pixels a side")
        default:
            let reason = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw QRError(.image, "not a JPEG image libjpeg can read (\(reason.isEmpty ? "unknown error" : reason))")
        }
    }
}
