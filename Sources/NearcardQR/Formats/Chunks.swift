public import NearcardCrypto

/// Large QR payloads in several codes (the iOS app's format):
/// `sqc1.<32-hex session id>.<index>.<total>.<sha256-hex of the whole payload>.<base64url chunk>`.
/// Indices count from 0 (frames numbered from 1 are read too; one payload's frames use one numbering).
/// Limits: 2950 bytes a frame read (the iOS app's), 512 frames, 256 KiB in all; frames made fit one code
/// (at most 2331 bytes, level M).
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
    public static func split(
        _ payload: [UInt8], frameLength: Int = QRMatrix.maximumBytes,
        session: String = Hex.encode(Sodium.randomBytes(16))
    ) throws(QRError) -> [String] {
        guard payload.count <= maximumTotal else {
            throw QRError(.tooLarge, Phrase("the payload is %1$@ bytes; QR chunking carries at most %2$@", String(payload.count), String(maximumTotal)))
        }
        let hash = Hex.encode(SHA256.hash(payload))
        // Room for the header, then base64url (4 characters per 3 bytes).
        let perFrame = (min(frameLength, maximumFrameLength) - headerLength) / 4 * 3
        guard perFrame > 0 else {
            throw QRError(
                .tooLarge, Phrase("a frame of %1$@ characters has no room for data (its header takes %2$@)", String(frameLength), String(headerLength)))
        }
        let total = max(1, (payload.count + perFrame - 1) / perFrame)
        guard total <= maximumFrames else {
            throw QRError(.tooLarge, Phrase("the payload needs %1$@ frames; at most %2$@", String(total), String(maximumFrames)))
        }
        return (0..<total).map { i in
            let part = payload[(i * perFrame)..<min(payload.count, (i + 1) * perFrame)]
            return "\(prefix)\(session).\(i).\(total).\(hash).\(Base64.urlEncode(part))"
        }
    }

    public static func parse(_ text: String) throws(QRError) -> Frame {
        guard text.hasPrefix(prefix), text.utf8.count <= maximumFrameLength else {
            throw QRError(
                .chunks,
                text.hasPrefix(prefix)
                    ? Phrase("a chunk frame is longer than %1$@ characters", String(maximumFrameLength)) : Phrase("not a chunk frame"))
        }
        let parts = text.dropFirst(prefix.count).split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 5 else { throw QRError(.chunks, Phrase("a chunk frame has 6 dot-separated parts")) }
        let isHex: (String, Int) -> Bool = { s, n in s.count == n && s.allSatisfy { $0.isHexDigit && !$0.isUppercase } }
        guard isHex(parts[0].lowercased(), 32) else { throw QRError(.chunks, Phrase("the frame's session id is not 32 hex digits")) }
        guard let index = Int(parts[1]), let total = Int(parts[2]), total >= 1, total <= maximumFrames, index >= 0, index <= total else {
            throw QRError(.chunks, Phrase("the frame's index or total is out of range (at most %1$@ frames)", String(maximumFrames)))
        }
        guard isHex(parts[3].lowercased(), 64) else { throw QRError(.chunks, Phrase("the frame's hash is not 64 hex digits")) }
        let chunk: [UInt8]
        do { chunk = try Base64.urlDecode(parts[4]) } catch { throw QRError(.chunks, Phrase("the frame's data is not base64url")) }
        return Frame(session: parts[0].lowercased(), index: index, total: total, hash: parts[3].lowercased(), chunk: chunk)
    }

    /// Collects the frames of one payload, in any order; refuses frames of another session, a changed
    /// frame, a frame that mixes the two numberings, and a reassembled payload whose hash differs.
    ///
    /// A payload's frames count from 0 (Nearcard's) or from 1 (the iOS app's), and nothing in a frame
    /// says which: frame 0 shows the payload counts from 0, frame `total` that it counts from 1. Until
    /// one of them arrives, the numbering is unknown and `missing` names only the frames missing in both.
    /// A refused frame changes nothing; once the payload is complete (or fails its hash) the assembler
    /// starts afresh, so it never jams.
    public struct Assembler: Sendable {
        private var session: String?
        private var total = 0
        private var hash = ""
        private var frames: [Int: [UInt8]] = [:]
        private var bytes = 0

        public init() {}

        public var received: Int { frames.count }
        public var expected: Int { total }

        /// The number of the payload's first frame: 0 once frame 0 is in, 1 once frame `total` is (the
        /// iOS app's numbering); nil while neither is.
        public var firstIndex: Int? {
            guard total > 0 else { return nil }
            if frames[0] != nil { return 0 }
            if frames[total] != nil { return 1 }
            return nil
        }

        /// Adds a frame; returns the payload once every frame is in.
        public mutating func add(_ frame: Frame) throws(QRError) -> [UInt8]? {
            if let session {
                guard frame.session == session, frame.total == total, frame.hash == hash else {
                    throw QRError(
                        .chunks, Phrase("a frame from another chunked payload (session %1$@…) was mixed in; nothing was stored", frame.session.prefix(8)))
                }
            }
            // Frames 0 and `total` cannot both belong to one payload: keep the numbering already seen.
            if let first = firstIndex, frame.index == (first == 0 ? total : 0) {
                throw QRError(
                    .chunks,
                    first == 0
                        ? Phrase(
                            "frame %1$@ of %2$@ cannot join frame 0: this payload's frames count from 0 (0…%3$@), so it has no frame %2$@; the frame was not used",
                            String(frame.index), String(total), String(total - 1))
                        : Phrase(
                            "frame 0 cannot join frame %1$@ of %1$@: this payload's frames count from 1 (1…%1$@), so it has no frame 0; the frame was not used",
                            String(total))
                )
            }
            if let existing = frames[frame.index] {
                guard existing == frame.chunk else { throw QRError(.chunks, Phrase("frame %1$@ arrived twice with different contents", String(frame.index))) }
                return nil
            }
            guard bytes + frame.chunk.count <= maximumTotal else {
                throw QRError(.tooLarge, Phrase("the chunked payload is over %1$@ bytes", String(maximumTotal)))
            }
            if session == nil {
                session = frame.session
                total = frame.total
                hash = frame.hash
            }
            frames[frame.index] = frame.chunk
            bytes += frame.chunk.count
            guard frames.count == total else { return nil }
            // `total` distinct indices in 0…total, never both 0 and total: one run, from 0 or from 1.
            let base = firstIndex ?? 0
            let parts = (base..<(base + total)).map { frames[$0] }
            let expectedHash = hash
            self = Assembler()
            var payload: [UInt8] = []
            for (i, part) in parts.enumerated() {
                guard let part else {
                    throw QRError(
                        .chunks,
                        Phrase(
                            "frame %1$@ of %2$@ is missing (the indices do not run %3$@…%4$@); nothing was stored",
                            String(base + i), String(total), String(base), String(base + total - 1)))
                }
                payload += part
            }
            guard Hex.encode(SHA256.hash(payload)) == expectedHash else {
                throw QRError(.chunks, Phrase("the reassembled payload does not match its SHA-256; a frame was altered; nothing was stored"))
            }
            return payload
        }

        /// The frames still missing, by the numbers they carry. While the numbering is unknown (neither
        /// frame 0 nor frame `total` is in), only the frames missing in both numberings are listed: one
        /// more is missing too, the first or the last (0 or `total`); `missingDescription` says so.
        public var missing: [Int] {
            guard total > 0 else { return [] }
            let numbers = firstIndex.map { $0..<($0 + total) } ?? 1..<total
            return numbers.filter { frames[$0] == nil }
        }

        /// The missing frames in words, true in either numbering (see `Chunks.describeMissing`).
        public var missingDescription: String {
            Chunks.describeMissing(received: received, total: total, missing: missing)
        }
    }

    /// Names the missing frames of a payload from what an `Assembler` reports (`received`, `expected`,
    /// `missing`): "1, 3", or, while the frames read do not show whether they count from 0 or from 1
    /// (then `missing` lists one frame fewer than are missing), "1, 3 and the first or the last frame
    /// (0 or 5 …)".
    public static func describeMissing(received: Int, total: Int, missing: [Int]) -> String {
        let listed = missing.map(String.init).joined(separator: ", ")
        guard total > 0, received > 0, missing.count == total - received - 1 else { return listed }
        let edge = "the first or the last frame (0 or \(total): the frames read so far do not show whether they count from 0 or from 1)"
        return listed.isEmpty ? edge : "\(listed) and \(edge)"
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
            throw QRError(
                .tooLarge,
                Phrase("%1$@ bytes need codes of at least %2$@ bytes each to be split into frames", String(packed.utf8.count), String(minimumCapacity)))
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
        do { raw = try Base64.urlDecode(String(text.dropFirst(prefix.count))) } catch {
            throw QRError(.malformed, Phrase("the sce1: payload is not base64url"))
        }
        let bytes = try RawDeflate.decompress(raw, limit: Chunks.maximumTotal)
        guard let s = String(validating: bytes, as: UTF8.self) else { throw QRError(.malformed, Phrase("the sce1: payload is not UTF-8 text")) }
        return s
    }
}
