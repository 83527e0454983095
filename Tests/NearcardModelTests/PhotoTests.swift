import Foundation
import NearcardImage
import NearcardModel
import Testing

/// A card's photo (docs/PROTOCOL.md §9): made from a person's picture with nothing of the file but its
/// pixels, and checked whole when it arrives.
@Suite struct PhotoTests {
    static func rgb(_ w: Int, _ h: Int) -> [UInt8] { (0..<(w * h * 3)).map { UInt8(truncatingIfNeeded: $0 &* 7) } }

    /// A picture of any shape becomes its centre square, 256 pixels a side (or its own size when
    /// smaller), a JPEG within 16 KB with no APPn or comment segment; a PNG too.
    @Test func aPictureBecomesASquarePhotoOfPixelsOnly() throws {
        let wide = try JPEG.encodeRGB(width: 640, height: 400, pixels: Self.rgb(640, 400), quality: 95)
        let photo = try Photo.make(from: wide)
        #expect(photo.count <= Photo.maximumBytes && Photo.problem(photo) == nil)
        let decoded = try JPEG.decodeRGB(photo)
        #expect(decoded.width == 256 && decoded.height == 256)
        #expect(Photo.metadataProblem(photo) == nil)
        let small = try Photo.make(from: try JPEG.encodeRGB(width: 40, height: 60, pixels: Self.rgb(40, 60), quality: 90))
        #expect(try JPEG.decodeRGB(small).width == 40)
        #expect(Photo.describe(photo).hasPrefix("a 256×256 JPEG photo"))
        // Noise compresses badly: the photo still fits, smaller or coarser.
        var noise = SystemRandomNumberGenerator()
        let noisy = (0..<(512 * 512 * 3)).map { _ in UInt8.random(in: 0...255, using: &noise) }
        let fitted = try Photo.make(from: try JPEG.encodeRGB(width: 512, height: 512, pixels: noisy, quality: 95))
        #expect(fitted.count <= Photo.maximumBytes && Photo.problem(fitted) == nil)
        #expect(throws: ImageError.self) { try Photo.make(from: Array("not a picture".utf8)) }
        #expect(throws: ImageError.self) { try Photo.make(from: [0xFF, 0xD8, 0xFF, 0xE0, 0, 0]) }
    }

    /// A received photo is refused unless it is a square JPEG that decodes, within 16 KB and 512 pixels
    /// a side, with no metadata segment; each reason is named.
    @Test func aReceivedPhotoIsCheckedWhole() throws {
        let square = try JPEG.encodeRGB(width: 64, height: 64, pixels: Self.rgb(64, 64), quality: 80)
        #expect(Photo.problem(square) == nil)
        let wide = try JPEG.encodeRGB(width: 96, height: 64, pixels: Self.rgb(96, 64), quality: 80)
        #expect(Photo.problem(wide)?.contains("a photo is square") == true)
        let big = try JPEG.encodeRGB(width: 600, height: 600, pixels: [UInt8](repeating: 128, count: 600 * 600 * 3), quality: 30)
        #expect(big.count <= Photo.maximumBytes)
        #expect(Photo.problem(big)?.contains("larger than 512 pixels") == true)
        // An APP1 (EXIF) segment put in after SOI; a comment; a truncated image; not a JPEG at all.
        let exif = [0xFF, 0xD8, 0xFF, 0xE1, 0x00, 0x08] + Array("Exif\0\0".utf8) + square.dropFirst(2)
        #expect(Photo.problem(exif)?.contains("APP1") == true)
        let comment = [0xFF, 0xD8, 0xFF, 0xFE, 0x00, 0x05] + Array("GPS".utf8) + square.dropFirst(2)
        #expect(Photo.problem(comment)?.contains("comment") == true)
        #expect(Photo.problem(Array(square.prefix(square.count / 2))) != nil)
        #expect(Photo.problem(Array("GIF89a....".utf8))?.contains("not a JPEG") == true)
        #expect(Photo.problem(square + [UInt8](repeating: 0, count: Photo.maximumBytes))?.contains("at most 16384") == true)
        // The card refuses metadata wherever it is read (a file, the book), without decoding.
        var card = Card(name: "Nora")
        card.photo = exif
        #expect(throws: ModelError.self) { try card.validate() }
        card.photo = square
        try card.validate()
        #expect(try Card(json: card.json) == card)
    }
}
