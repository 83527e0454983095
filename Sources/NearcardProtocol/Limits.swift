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
    /// A presence key's length (docs/PROTOCOL.md §3): the key of the SipHash tag contacts resolve.
    public static let presenceKeyByteCount = 16
}

extension String {
    /// Left-padded with zeros to `width` (for U+XXXX).
    func leftPadded(_ width: Int) -> String { count >= width ? self : String(repeating: "0", count: width - count) + self }
}
