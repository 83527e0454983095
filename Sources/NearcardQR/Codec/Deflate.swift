internal import CZlib

/// Raw DEFLATE (RFC 1951, no zlib header), as the `sce1:` QR compression uses (zlib).
public enum RawDeflate {
    public static func compress(_ input: [UInt8]) throws(QRError) -> [UInt8] {
        var stream = z_stream()
        guard nearcard_deflate_init_raw(&stream, Z_BEST_COMPRESSION) == Z_OK else { throw QRError(.library, "zlib deflateInit2 failed") }
        defer { deflateEnd(&stream) }
        var out = [UInt8](repeating: 0, count: Int(deflateBound(&stream, UInt(input.count))) + 16)
        var input = input
        let rc = input.withUnsafeMutableBufferPointer { inp in
            out.withUnsafeMutableBufferPointer { o in
                stream.next_in = inp.baseAddress
                stream.avail_in = UInt32(inp.count)
                stream.next_out = o.baseAddress
                stream.avail_out = UInt32(o.count)
                return deflate(&stream, Z_FINISH)
            }
        }
        guard rc == Z_STREAM_END else { throw QRError(.library, "zlib deflate failed (\(rc))") }
        return Array(out.prefix(Int(stream.total_out)))
    }

    /// Inflates, refusing output larger than `limit` (a small QR code must not expand into gigabytes).
    public static func decompress(_ input: [UInt8], limit: Int) throws(QRError) -> [UInt8] {
        var stream = z_stream()
        guard nearcard_inflate_init_raw(&stream) == Z_OK else { throw QRError(.library, "zlib inflateInit2 failed") }
        defer { inflateEnd(&stream) }
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16384)
        var input = input
        var rc: Int32 = Z_OK
        try input.withUnsafeMutableBufferPointer { (inp) throws(QRError) in
            stream.next_in = inp.baseAddress
            stream.avail_in = UInt32(inp.count)
            repeat {
                rc = chunk.withUnsafeMutableBufferPointer { o in
                    stream.next_out = o.baseAddress
                    stream.avail_out = UInt32(o.count)
                    return inflate(&stream, Z_NO_FLUSH)
                }
                let produced = chunk.count - Int(stream.avail_out)
                output += chunk.prefix(produced)
                guard output.count <= limit else { throw QRError(.tooLarge, Phrase("compressed data expands beyond %1$@ bytes", String(limit))) }
                if rc == Z_BUF_ERROR && stream.avail_in == 0 { break }
            } while rc == Z_OK
        }
        guard rc == Z_STREAM_END else { throw QRError(.malformed, Phrase("the compressed data is damaged or truncated")) }
        return output
    }
}
