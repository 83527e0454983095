internal import CJPEG

#if canImport(Glibc)
    import Glibc
#endif

/// JPEG images through libjpeg-turbo: photos of QR codes (a phone's camera writes JPEG) and card photos.
public enum JPEG {
    /// Whether the bytes start like a JPEG file (SOI marker).
    public static func looksLike(_ data: [UInt8]) -> Bool { data.count > 3 && data[0] == 0xFF && data[1] == 0xD8 && data[2] == 0xFF }

    /// The image as 8-bit grayscale, at most `PNG.maximumDimension` pixels a side.
    public static func decodeGray(_ data: [UInt8]) throws(ImageError) -> (width: Int, height: Int, pixels: [UInt8]) {
        try decode(data, components: 1, maximumSide: PNG.maximumDimension, strict: false)
    }

    /// The image as 8-bit RGB, at most `maximumSide` pixels a side. `strict`: an image libjpeg decodes
    /// only with warnings (truncated, damaged) is refused too.
    public static func decodeRGB(
        _ data: [UInt8], maximumSide: Int = PNG.maximumDimension, strict: Bool = false
    ) throws(ImageError) -> (width: Int, height: Int, pixels: [UInt8]) {
        try decode(data, components: 3, maximumSide: maximumSide, strict: strict)
    }

    static func decode(_ data: [UInt8], components: Int, maximumSide: Int, strict: Bool) throws(ImageError) -> (width: Int, height: Int, pixels: [UInt8]) {
        var pixels: UnsafeMutablePointer<UInt8>?
        var width: Int32 = 0
        var height: Int32 = 0
        var message = [CChar](repeating: 0, count: 256)
        let rc = nearcard_jpeg_decode(
            data, UInt(data.count), Int32(maximumSide), Int32(components), strict ? 1 : 0, &pixels, &width, &height, &message, Int32(message.count))
        switch rc {
        case 0:
            guard let pixels else { throw ImageError(.image, Phrase("the JPEG image decoded to nothing")) }
            defer { free(pixels) }
            return (Int(width), Int(height), Array(UnsafeBufferPointer(start: pixels, count: Int(width) * Int(height) * components)))
        case -2:
            throw ImageError(
                .image, Phrase("the image is %1$@×%2$@; Nearcard reads images up to %3$@ pixels a side", String(width), String(height), String(maximumSide)))
        default:
            let reason = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw ImageError(
                .image,
                reason.isEmpty
                    ? Phrase("not a JPEG image libjpeg can read (unknown error)") : Phrase("not a JPEG image libjpeg can read (%1$@)", reason))
        }
    }

    /// RGB pixels as a baseline JPEG of `quality` (1…100) holding no marker segment but the image's
    /// own: no JFIF, EXIF, ICC, XMP or comment — nothing but pixels.
    public static func encodeRGB(width: Int, height: Int, pixels: [UInt8], quality: Int) throws(ImageError) -> [UInt8] {
        precondition(pixels.count == width * height * 3)
        var out: UnsafeMutablePointer<UInt8>?
        var size: UInt = 0
        var message = [CChar](repeating: 0, count: 256)
        let rc = nearcard_jpeg_encode_rgb(pixels, Int32(width), Int32(height), Int32(quality), &out, &size, &message, Int32(message.count))
        defer { free(out) }
        guard rc == 0, let out else {
            let reason = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw ImageError(.library, Phrase("libjpeg could not encode the image (%1$@)", reason))
        }
        return Array(UnsafeBufferPointer(start: out, count: Int(size)))
    }
}
