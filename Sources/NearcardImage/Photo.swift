/// A card's photo (docs/PROTOCOL.md §9): a square JPEG of at most 16 KB and 512 pixels a side, with no
/// marker segment but the image's own — Nearcard re-encodes whatever a person gives it, so nothing but
/// pixels leaves: no EXIF (camera, time, GPS position), no thumbnail, no ICC profile, no comment.
public enum Photo {
    /// The largest photo a card carries, and a receiver accepts.
    public static let maximumBytes = 16 * 1024
    /// The largest side a receiver accepts.
    public static let maximumSide = 512
    /// The side Nearcard makes (smaller when the picture given is smaller, or to fit `maximumBytes`).
    public static let side = 256
    /// The largest picture file read to make a photo from.
    public static let maximumInputBytes = 20 * 1024 * 1024

    /// A card photo from a JPEG or PNG file's bytes: the centre square, scaled to `side` pixels (or
    /// less), encoded at the best quality that fits `maximumBytes`.
    public static func make(from data: [UInt8]) throws(ImageError) -> [UInt8] {
        guard data.count <= maximumInputBytes else {
            throw ImageError(.image, Phrase("the picture is %1$@ bytes; at most %2$@ are read", String(data.count), String(maximumInputBytes)))
        }
        let (width, height, rgb): (Int, Int, [UInt8])
        if JPEG.looksLike(data) {
            (width, height, rgb) = try JPEG.decodeRGB(data)
        } else if data.starts(with: [0x89, 0x50, 0x4E, 0x47]) {
            (width, height, rgb) = try PNG.decodeRGB(data)
        } else {
            throw ImageError(.image, Phrase("not a JPEG or PNG picture"))
        }
        guard min(width, height) >= 16 else {
            throw ImageError(.image, Phrase("the picture is %1$@×%2$@; a photo needs at least 16 pixels a side", String(width), String(height)))
        }
        let crop = min(width, height)
        for target in [min(side, crop), min(192, crop), min(128, crop), min(96, crop)] {
            let square = scaled(rgb, width: width, x: (width - crop) / 2, y: (height - crop) / 2, crop: crop, to: target)
            for quality in stride(from: 85, through: 35, by: -10) {
                let jpeg = try JPEG.encodeRGB(width: target, height: target, pixels: square, quality: quality)
                if jpeg.count <= maximumBytes { return jpeg }
            }
        }
        throw ImageError(.image, Phrase("the picture does not fit %1$@ bytes even at 96 pixels", String(maximumBytes)))
    }

    /// The `crop`×`crop` square at (x, y) of an RGB image `width` wide, scaled to `target` pixels a side
    /// by averaging the source pixels each target pixel covers.
    static func scaled(_ rgb: [UInt8], width: Int, x: Int, y: Int, crop: Int, to target: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: target * target * 3)
        for ty in 0..<target {
            let y0 = y + ty * crop / target
            let y1 = max(y0 + 1, y + (ty + 1) * crop / target)
            for tx in 0..<target {
                let x0 = x + tx * crop / target
                let x1 = max(x0 + 1, x + (tx + 1) * crop / target)
                var sum = (0, 0, 0)
                for sy in y0..<y1 {
                    var i = (sy * width + x0) * 3
                    for _ in x0..<x1 {
                        sum.0 += Int(rgb[i])
                        sum.1 += Int(rgb[i + 1])
                        sum.2 += Int(rgb[i + 2])
                        i += 3
                    }
                }
                let n = (y1 - y0) * (x1 - x0)
                let o = (ty * target + tx) * 3
                out[o] = UInt8(sum.0 / n)
                out[o + 1] = UInt8(sum.1 / n)
                out[o + 2] = UInt8(sum.2 / n)
            }
        }
        return out
    }

    /// "a 256×256 JPEG photo, 11,234 bytes" (or, for one that does not decode, its size).
    public static func describe(_ jpeg: [UInt8]) -> String {
        guard let (w, h, _) = try? JPEG.decodeRGB(jpeg, maximumSide: maximumSide) else { return "a photo of \(jpeg.count) bytes" }
        return "a \(w)×\(h) JPEG photo, \(jpeg.count) bytes"
    }

    /// What is wrong with a photo a card carries, or nil when it is one (the receiver's check, §9): at
    /// most `maximumBytes`, a JPEG libjpeg decodes, square, at most `maximumSide` a side, and no marker
    /// segment that is not the image's (`metadataProblem`).
    public static func problem(_ jpeg: [UInt8]) -> String? {
        guard jpeg.count <= maximumBytes else { return "is \(jpeg.count) bytes; at most \(maximumBytes)" }
        if let why = metadataProblem(jpeg) { return why }
        let decoded: (width: Int, height: Int, pixels: [UInt8])
        do { decoded = try JPEG.decodeRGB(jpeg, maximumSide: maximumSide, strict: true) } catch {
            // (Never decoded past `maximumSide`: a 16 KB file may claim 65,535 pixels a side.)
            return error.message.hasPrefix("the image is ") ? "is larger than \(maximumSide) pixels a side" : "is \(error.message)"
        }
        guard decoded.width == decoded.height else { return "is \(decoded.width)×\(decoded.height); a photo is square" }
        return nil
    }

    /// Whether the bytes are a JPEG whose marker segments, up to its first scan, are all the image's
    /// own (tables, frame, restart interval): an APPn segment (JFIF, EXIF and its GPS and thumbnail,
    /// ICC, XMP, Adobe) or a comment is metadata, and a photo carries none. Pure byte walking: cheap
    /// enough for every card read from the book.
    public static func metadataProblem(_ jpeg: [UInt8]) -> String? {
        guard jpeg.count > 4, jpeg[0] == 0xFF, jpeg[1] == 0xD8 else { return "is not a JPEG image" }
        var i = 2
        while i + 4 <= jpeg.count {
            guard jpeg[i] == 0xFF else { return "is not a well-formed JPEG image" }
            var m = jpeg[i + 1]
            while m == 0xFF, i + 2 < jpeg.count {
                i += 1
                m = jpeg[i + 1]
            }
            if m == 0xDA { return nil } // start of scan: the image data follows
            if (0xD0...0xD7).contains(m) || m == 0x01 {
                i += 2
                continue
            }
            if (0xE0...0xEF).contains(m) || m == 0xFE {
                return "carries metadata (an \(m == 0xFE ? "comment" : "APP\(m - 0xE0)") segment); a photo holds nothing but the image"
            }
            let length = Int(jpeg[i + 2]) << 8 | Int(jpeg[i + 3])
            guard length >= 2 else { return "is not a well-formed JPEG image" }
            i += 2 + length
        }
        return "is not a well-formed JPEG image (no image data)"
    }
}
