/// What a session is for, named by the payload of Noise message 1 (docs/PROTOCOL.md §5). The tags are
/// the protocol versions: a responder answers only a tag it knows.
public enum SessionKind: String, Sendable, CaseIterable {
    /// A card exchange between two people.
    case exchange = "nearcard/2"
    /// Delivery of a follow-up message to a contact.
    case mail = "nearcard-mail/2"

    /// The bytes message 1 carries in the clear.
    public var tag: [UInt8] { Array(rawValue.utf8) }

    /// The Noise prologue every Nearcard session hashes first (docs/PROTOCOL.md §5).
    public static let prologue = Array("nearcard-exchange".utf8)
}
