/// Keccak-256 (the original Keccak padding, as Ethereum and Semaphore use it; not SHA3-256).
public enum Keccak256 {
    static let roundConstants: [UInt64] = [
        0x0000_0000_0000_0001, 0x0000_0000_0000_8082, 0x8000_0000_0000_808A, 0x8000_0000_8000_8000, 0x0000_0000_0000_808B, 0x0000_0000_8000_0001,
        0x8000_0000_8000_8081, 0x8000_0000_0000_8009, 0x0000_0000_0000_008A, 0x0000_0000_0000_0088, 0x0000_0000_8000_8009, 0x0000_0000_8000_000A,
        0x0000_0000_8000_808B, 0x8000_0000_0000_008B, 0x8000_0000_0000_8089, 0x8000_0000_0000_8003, 0x8000_0000_0000_8002, 0x8000_0000_0000_0080,
        0x0000_0000_0000_800A, 0x8000_0000_8000_000A, 0x8000_0000_8000_8081, 0x8000_0000_0000_8080, 0x0000_0000_8000_0001, 0x8000_0000_8000_8008,
    ]
    static let rotations: [UInt64] = [0, 1, 62, 28, 27, 36, 44, 6, 55, 20, 3, 10, 43, 25, 39, 41, 45, 15, 21, 8, 18, 2, 61, 56, 14]

    static func permute(_ a: inout [UInt64]) {
        var b = [UInt64](repeating: 0, count: 25)
        var c = [UInt64](repeating: 0, count: 5)
        @inline(__always) func rotl(_ v: UInt64, _ n: UInt64) -> UInt64 { n == 0 ? v : (v << n) | (v >> (64 - n)) }
        for round in 0..<24 {
            for x in 0..<5 { c[x] = a[x] ^ a[x + 5] ^ a[x + 10] ^ a[x + 15] ^ a[x + 20] }
            for x in 0..<5 {
                let d = c[(x + 4) % 5] ^ rotl(c[(x + 1) % 5], 1)
                for y in 0..<5 { a[x + 5 * y] ^= d }
            }
            for x in 0..<5 {
                for y in 0..<5 { b[y + 5 * ((2 * x + 3 * y) % 5)] = rotl(a[x + 5 * y], rotations[x + 5 * y]) }
            }
            for x in 0..<5 {
                for y in 0..<5 { a[x + 5 * y] = b[x + 5 * y] ^ (~b[(x + 1) % 5 + 5 * y] & b[(x + 2) % 5 + 5 * y]) }
            }
            a[0] ^= roundConstants[round]
        }
    }

    public static func hash(_ data: [UInt8]) -> [UInt8] {
        let rate = 136
        var state = [UInt64](repeating: 0, count: 25)
        var padded = data
        padded.append(0x01)
        while padded.count % rate != 0 { padded.append(0) }
        padded[padded.count - 1] |= 0x80
        for blockStart in stride(from: 0, to: padded.count, by: rate) {
            for i in 0..<(rate / 8) {
                var lane: UInt64 = 0
                for k in 0..<8 { lane |= UInt64(padded[blockStart + 8 * i + k]) << (8 * UInt64(k)) }
                state[i] ^= lane
            }
            permute(&state)
        }
        var out = [UInt8]()
        for i in 0..<4 { for k in 0..<8 { out.append(UInt8(truncatingIfNeeded: state[i] >> (8 * UInt64(k)))) } }
        return out
    }
}
