internal import CQREncode

/// A QR code's modules (libqrencode).
public struct QRMatrix: Sendable, Equatable {
    public let size: Int
    /// Row-major; true = dark.
    public let modules: [Bool]

    public subscript(x: Int, y: Int) -> Bool {
        x >= 0 && y >= 0 && x < size && y < size && modules[y * size + x]
    }

    /// Encodes bytes in 8-bit mode, error correction level M (as phones expect), the smallest version that fits.
    public static func encode(_ data: [UInt8]) throws(QRError) -> QRMatrix {
        guard !data.isEmpty else { throw QRError(.malformed, "nothing to encode") }
        guard let code = QRcode_encodeData(Int32(data.count), data, 0, QR_ECLEVEL_M) else {
            throw QRError(.tooLarge, "\(data.count) bytes do not fit in one QR code (at most 2331 at level M); use chunks")
        }
        defer { QRcode_free(code) }
        let size = Int(code.pointee.width)
        let cells = UnsafeBufferPointer(start: code.pointee.data, count: size * size)
        return QRMatrix(size: size, modules: cells.map { $0 & 1 == 1 })
    }

    /// The largest payload Nearcard puts in one QR code before chunking (the iOS app's frame size).
    public static let maximumFrameBytes = 2950
}
