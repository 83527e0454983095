import NearcardCrypto

/// Large QR payloads in several codes (the iOS app's format):
/// `sqc1.<32-hex session id>.<index>.<total>.<sha256-hex of the whole payload>.<base64url chunk>`.
/// Indices count from 0 (frames numbered from 1 are read too). Limits: 2950 bytes a frame read (the
/// iOS app's), 512 frames, 256 KiB in all; frames made fit one code (at most 2331 bytes, level M).
public enum Chunks {
    public static let prefix = "sqc1."
    public static let maximumFrameLength = 2950
    public static let maximumFrames = 512
    public static let maximumTotal = 256 * 1024

    public struct Frame: Sendable, Equatable {
        public let session: String
        public let index: Int
        public let total: Int
        public let hash: String
        public let chunk: [UInt8]
    }

    /// Room a frame's header takes, with the longest index and total.
    public static let headerLength = prefix.count + 32 + 1 + 3 + 1 + 3 + 1 + 64 + 1

    /// Splits `payload` into frames of at most `frameLength` characters (a code's capacity), under one
    /// fresh session id.
    public static func split(_ payload: [UInt8], frameLength: Int = QRMatrix.maximumBytes,
                             session: String = Hex.encode(Sodium.randomBytes(16))) throws(QRError) -> [String] {
        guard payload.count <= maximumTotal else { throw QRError(.tooLarge, "the payload is \(payload.count) bytes; QR chunking carries at most \(maximumTotal)") }
        let hash = Hex.encode(SHA256.hash(payload))
        // Room for the header, then base64url (4 characters per 3 bytes).
        let perFrame = (min(frameLength, maximumFrameLength) - headerLength) / 4 * 3
        guard perFrame > 0 else { throw QRError(.tooLarge, "a frame of \(frameLength) characters has no room for data (its header takes \(headerLength))") }
        let total = max(1, (payload.count + perFrame - 1) / perFrame)
        guard total <= maximumFrames else { throw QRError(.tooLarge, "the payload needs \(total) frames; at most \(maximumFrames)") }
        return (0..<total).map { i in
            let part = payload[(i * perFrame)..<min(payload.count, (i + 1) * perFrame)]
            return "\(prefix)\(session).\(i).\(total).\(hash).\(Base64.urlEncode(part))"
        }
    }

    public static func parse(_ text: String) throws(QRError) -> Frame {
        guard text.hasPrefix(prefix), text.utf8.count <= maximumFrameLength else {
            throw QRError(.chunks, text.hasPrefix(prefix) ? "a chunk frame is longer than \(maximumFrameLength) characters" : "not a chunk frame")
        }
        let parts = text.dropFirst(prefix.count).split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 5 else { throw QRError(.chunks, "a chunk frame has 6 dot-separated parts") }
        let isHex: (String, Int) -> Bool = { s, n in s.count == n && s.allSatisfy { $0.isHexDigit && !$0.isUppercase } }
        guard isHex(parts[0].lowercased(), 32) else { throw QRError(.chunks, "the frame's session id is not 32 hex digits") }
        guard let index = Int(parts[1]), let total = Int(parts[2]), total >= 1, total <= maximumFrames, index >= 0, index <= total else {
            throw QRError(.chunks, "the frame's index or total is out of range (at most \(maximumFrames) frames)")
        }
        guard isHex(parts[3].lowercased(), 64) else { throw QRError(.chunks, "the frame's hash is not 64 hex digits") }
        let chunk: [UInt8]
        do { chunk = try Base64.urlDecode(parts[4]) } catch { throw QRError(.chunks, "the frame's data is not base64url") }
        return Frame(session: parts[0].lowercased(), index: index, total: total, hash: parts[3].lowercased(), chunk: chunk)
    }

    /// Collects the frames of one payload, in any order; refuses frames of another session, a changed
    /// frame, and a reassembled payload whose hash differs.
    public struct Assembler: Sendable {
        private var session: String?
        private var total = 0
        private var hash = ""
        private var frames: [Int: [UInt8]] = [:]
        private var bytes = 0

        public init() {}

        public var received: Int { frames.count }
        public var expected: Int { total }

        /// Adds a frame; returns the payload once every frame is in.
        public mutating func add(_ frame: Frame) throws(QRError) -> [UInt8]? {
            if let session {
                guard frame.session == session, frame.total == total, frame.hash == hash else {
                    throw QRError(.chunks, "a frame from another chunked payload (session \(frame.session.prefix(8))…) was mixed in; nothing was stored")
                }
            } else {
                session = frame.session
                total = frame.total
                hash = frame.hash
            }
            if let existing = frames[frame.index] {
                guard existing == frame.chunk else { throw QRError(.chunks, "frame \(frame.index) arrived twice with different contents") }
                return nil
            }
            bytes += frame.chunk.count
            guard bytes <= maximumTotal else { throw QRError(.tooLarge, "the chunked payload is over \(maximumTotal) bytes") }
            frames[frame.index] = frame.chunk
            guard frames.count == total else { return nil }
            // Numbered from 0, or from 1.
            let base = frames[0] != nil ? 0 : 1
            var payload: [UInt8] = []
            for i in base..<(base + total) {
                guard let part = frames[i] else { throw QRError(.chunks, "frame \(i) of \(total) is missing (the indices do not run \(base)…\(base + total - 1))") }
                payload += part
            }
            guard Hex.encode(SHA256.hash(payload)) == hash else {
                throw QRError(.chunks, "the reassembled payload does not match its SHA-256; a frame was altered; nothing was stored")
            }
            return payload
        }

        /// Which frames are still missing.
        public var missing: [Int] {
            guard total > 0 else { return [] }
            let base = frames[0] != nil || frames[total] == nil ? 0 : 1
            return (base..<(base + total)).filter { frames[$0] == nil }
        }
    }
}

/// `sce1:` + base64url(raw DEFLATE(envelope JSON)): used when it is shorter.
/// The codes a payload is shown in: one when it fits `capacity` bytes (compressed first if that makes
/// it fit), else sqc1 frames of at most `capacity` characters each.
public enum QRFrames {
    /// The smallest capacity a frame can use (header plus some data).
    public static let minimumCapacity = Chunks.headerLength + 64

    public static func plan(_ payload: String, capacity: Int = QRMatrix.maximumBytes) throws(QRError) -> [String] {
        if payload.utf8.count <= capacity { return [payload] }
        // A bare JWT (did-signed) is read as it is; envelope JSON may be compressed (sce1:).
        let packed = payload.hasPrefix("eyJ") ? payload : try Compressed.encode(payload)
        if packed.utf8.count <= capacity { return [packed] }
        guard capacity >= minimumCapacity else {
            throw QRError(.tooLarge, "\(packed.utf8.count) bytes need codes of at least \(minimumCapacity) bytes each to be split into frames")
        }
        return try Chunks.split(Array(packed.utf8), frameLength: capacity)
    }
}

public enum Compressed {
    public static let prefix = "sce1:"

    public static func encode(_ text: String) throws(QRError) -> String {
        let packed = prefix + Base64.urlEncode(try RawDeflate.compress(Array(text.utf8)))
        return packed.utf8.count < text.utf8.count ? packed : text
    }

    public static func decode(_ text: String) throws(QRError) -> String {
        guard text.hasPrefix(prefix) else { return text }
        let raw: [UInt8]
        do { raw = try Base64.urlDecode(String(text.dropFirst(prefix.count))) } catch { throw QRError(.malformed, "the sce1: payload is not base64url") }
        let bytes = try RawDeflate.decompress(raw, limit: Chunks.maximumTotal)
        guard let s = String(validating: bytes, as: UTF8.self) else { throw QRError(.malformed, "the sce1: payload is not UTF-8 text") }
        return s
    }
}
