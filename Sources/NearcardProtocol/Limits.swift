/// Every limit of the wire protocol, named (docs/PROTOCOL.md "Limits").
public enum ProtocolLimits {
    /// A frame is a 2-byte big-endian length and that many bytes: at most 65535 (the Noise maximum).
    public static let maximumFrameLength = 65535
    /// Noise's authentication tag on every transport message.
    public static let noiseTagLength = 16
    /// The largest application message (a Noise message minus its tag). Larger messages are refused,
    /// never split.
    public static let maximumMessageLength = maximumFrameLength - noiseTagLength
    /// Nesting allowed in application JSON.
    public static let maximumJSONDepth = 16
    /// Display names in hello messages and TXT records.
    public static let maximumNameLength = 64
    /// How far (seconds) a payload's timestamp, or a follow-up message's date, may be from our clock.
    public static let maximumClockSkew: Int64 = 300
}

/// The text rules of docs/PROTOCOL.md §1: what a "character" and a "control character" are.
public enum ProtocolText {
    /// A control character is a Unicode scalar of general category Cc: U+0000–U+001F and U+007F–U+009F.
    public static func isControl(_ c: Unicode.Scalar) -> Bool {
        c.value < 0x20 || (0x7F...0x9F).contains(c.value)
    }
}

extension String {
    /// Left-padded with zeros to `width` (for U+XXXX).
    func leftPadded(_ width: Int) -> String { count >= width ? self : String(repeating: "0", count: width - count) + self }
}
