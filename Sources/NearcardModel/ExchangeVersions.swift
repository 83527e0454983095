/// The exchange versions this node speaks (docs/PROTOCOL.md §21): version 3, and version 2 beside it
/// for every peer that speaks only that. The version is the hello's `version` (§6); what it changes is
/// the card (§9): which fields travel (a field's row says since which version) and how the disclosure
/// proof is built.
public enum ExchangeVersions {
    public static let spoken: [Int] = [2, 3]
    public static let lowest = 2
    public static let highest = 3
}
