internal import CZBar
internal import NearcardImage

/// Finding QR codes in pixels (zbar), returning each code's raw bytes.
public enum QRScanner {
    /// libzbar's functions, loaded the first time a code is scanned (not at every start).
    private static let library: Result<nearcard_zbar, QRError> = {
        var reason = [CChar](repeating: 0, count: 256)
        guard let table = nearcard_zbar_load(&reason, reason.count) else {
            let why = String(decoding: reason.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            return .failure(QRError(.library, Phrase("cannot load zbar to read QR codes (%1$@); install it: apt install libzbar0", why)))
        }
        return .success(table.pointee)
    }()

    /// Every QR code in an 8-bit grayscale image, as the bytes it carries (zbar's binary mode: no
    /// guessing at character sets).
    public static func scan(width: Int, height: Int, pixels: [UInt8]) throws(QRError) -> [[UInt8]] {
        let zbar = try library.get()
        guard let scanner = zbar.image_scanner_create() else { throw QRError(.library, "zbar_image_scanner_create failed") }
        defer { zbar.image_scanner_destroy(scanner) }
        _ = zbar.image_scanner_set_config(scanner, ZBAR_NONE, ZBAR_CFG_ENABLE, 0)
        _ = zbar.image_scanner_set_config(scanner, ZBAR_QRCODE, ZBAR_CFG_ENABLE, 1)
        _ = zbar.image_scanner_set_config(scanner, ZBAR_QRCODE, ZBAR_CFG_BINARY, 1)
        guard let image = zbar.image_create() else { throw QRError(.library, "zbar_image_create failed") }
        defer { zbar.image_destroy(image) }
        zbar.image_set_format(image, nearcard_zbar_y800())
        zbar.image_set_size(image, UInt32(width), UInt32(height))
        return pixels.withUnsafeBytes { buffer in
            // zbar reads the buffer during zbar_scan_image only; no cleanup handler is needed.
            zbar.image_set_data(image, buffer.baseAddress, UInt(buffer.count), nil)
            guard zbar.scan_image(scanner, image) > 0 else { return [] }
            var out: [[UInt8]] = []
            var symbol = zbar.image_first_symbol(image)
            while let s = symbol {
                if let data = zbar.symbol_get_data(s) {
                    let n = Int(zbar.symbol_get_data_length(s))
                    out.append(data.withMemoryRebound(to: UInt8.self, capacity: n) { Array(UnsafeBufferPointer(start: $0, count: n)) })
                }
                symbol = zbar.symbol_next(s)
            }
            return out
        }
    }

    /// QR codes in a PNG file's bytes.
    public static func scan(png: [UInt8]) throws(QRError) -> [[UInt8]] {
        try scan(image: png)
    }

    /// QR codes in an image file's bytes: PNG or JPEG (told apart by their first bytes).
    public static func scan(image data: [UInt8]) throws(QRError) -> [[UInt8]] {
        let (w, h, px): (Int, Int, [UInt8])
        if JPEG.looksLike(data) {
            do { (w, h, px) = try JPEG.decodeGray(data) } catch { throw QRError(error) }
        } else if data.starts(with: [0x89, 0x50, 0x4E, 0x47]) {
            do { (w, h, px) = try PNG.decodeGray(data) } catch { throw QRError(error) }
        } else {
            throw QRError(.image, Phrase("not a PNG or JPEG image"))
        }
        let found = try scan(width: w, height: h, pixels: px)
        guard !found.isEmpty else { throw QRError(.image, Phrase("no QR code found in the image (is it sharp, and the whole code in view?)")) }
        return found
    }
}
