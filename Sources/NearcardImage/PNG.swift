internal import CPNG

/// PNG through libpng's simplified API (no setjmp/longjmp in sight): QR codes' images and photos.
public enum PNG {
    public static let maximumDimension = 8192

    public static func encodeGray(width: Int, height: Int, pixels: [UInt8]) throws(ImageError) -> [UInt8] {
        var image = png_image()
        image.version = nearcard_png_image_version()
        image.width = UInt32(width)
        image.height = UInt32(height)
        image.format = UInt32(PNG_FORMAT_GRAY)
        var size = 0
        guard png_image_write_to_memory(&image, nil, &size, 0, pixels, Int32(width), nil) != 0, size > 0 else {
            throw ImageError(.library, "libpng: \(message(image))")
        }
        var out = [UInt8](repeating: 0, count: size)
        guard png_image_write_to_memory(&image, &out, &size, 0, pixels, Int32(width), nil) != 0 else {
            throw ImageError(.library, "libpng: \(message(image))")
        }
        return Array(out.prefix(size))
    }

    /// Decodes any PNG libpng reads (all colour types and depths, interlaced or not) to 8-bit gray.
    public static func decodeGray(_ data: [UInt8]) throws(ImageError) -> (width: Int, height: Int, pixels: [UInt8]) {
        try decode(data, format: UInt32(PNG_FORMAT_GRAY), channels: 1)
    }

    /// Decodes any PNG libpng reads to 8-bit RGB (3 bytes a pixel; transparency composed over white).
    public static func decodeRGB(_ data: [UInt8]) throws(ImageError) -> (width: Int, height: Int, pixels: [UInt8]) {
        try decode(data, format: UInt32(PNG_FORMAT_RGB), channels: 3)
    }

    static func decode(_ data: [UInt8], format: UInt32, channels: Int) throws(ImageError) -> (width: Int, height: Int, pixels: [UInt8]) {
        var image = png_image()
        image.version = nearcard_png_image_version()
        guard png_image_begin_read_from_memory(&image, data, data.count) != 0 else {
            throw ImageError(.image, Phrase("not a PNG image libpng can read (%1$@)", message(image)))
        }
        let width = Int(image.width)
        let height = Int(image.height)
        guard width > 0, height > 0, width <= maximumDimension, height <= maximumDimension else {
            png_image_free(&image)
            throw ImageError(
                .image,
                Phrase("the image is %1$@×%2$@; Nearcard reads images up to %3$@ pixels a side", String(width), String(height), String(maximumDimension)))
        }
        image.format = format
        var pixels = [UInt8](repeating: 0, count: width * height * channels)
        var white = png_color(red: 255, green: 255, blue: 255)
        guard png_image_finish_read(&image, &white, &pixels, Int32(width * channels), nil) != 0 else {
            throw ImageError(.image, Phrase("the PNG image is damaged (%1$@)", message(image)))
        }
        return (width, height, pixels)
    }

    static func message(_ image: png_image) -> String {
        var m = image.message
        return withUnsafeBytes(of: &m) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
    }
}
