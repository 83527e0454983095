internal import CQREncode

/// A QR code's modules (libqrencode).
public struct QRMatrix: Sendable, Equatable {
    public let size: Int
    /// Row-major; true = dark.
    public let modules: [Bool]

    public subscript(x: Int, y: Int) -> Bool {
        x >= 0 && y >= 0 && x < size && y < size && modules[y * size + x]
    }

    /// The most one code holds: version 40, 8-bit mode, error correction level M.
    public static let maximumBytes = 2331

    /// Encodes bytes in 8-bit mode, error correction level M (as phones expect), the smallest version that fits.
    public static func encode(_ data: [UInt8]) throws(QRError) -> QRMatrix {
        guard !data.isEmpty else { throw QRError(.malformed, Phrase("nothing to encode")) }
        guard data.count <= maximumBytes, let code = QRcode_encodeData(Int32(data.count), data, 0, QR_ECLEVEL_M) else {
            throw QRError(
                .tooLarge,
                Phrase("%1$@ bytes do not fit in one QR code (at most %2$@ at level M); split them into frames", String(data.count), String(maximumBytes)))
        }
        defer { QRcode_free(code) }
        let size = Int(code.pointee.width)
        let cells = UnsafeBufferPointer(start: code.pointee.data, count: size * size)
        return QRMatrix(size: size, modules: cells.map { $0 & 1 == 1 })
    }

    /// The side, in modules, of the code `count` bytes need (nil: more than one code holds).
    public static func side(forBytes count: Int) -> Int? {
        guard count > 0, count <= maximumBytes else { return count == 0 ? 21 : nil }
        let data = [UInt8](repeating: 0x41, count: count)
        guard let code = QRcode_encodeData(Int32(count), data, 0, QR_ECLEVEL_M) else { return nil }
        defer { QRcode_free(code) }
        return Int(code.pointee.width)
    }

    /// The most bytes one code of at most `side` modules a side holds (0: not even the smallest code fits).
    public static func capacity(side: Int) -> Int {
        guard side >= 21 else { return 0 }
        if side >= 177 { return maximumBytes }
        var (low, high) = (0, maximumBytes) // low fits, high + 1 does not
        while low < high {
            let mid = (low + high + 1) / 2
            if let s = Self.side(forBytes: mid), s <= side { low = mid } else { high = mid - 1 }
        }
        return low
    }
}
