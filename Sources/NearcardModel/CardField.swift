import Foundation

/// The fields of a card (the iOS app's `BusinessCardField`, without the profile image), and the one
/// table every serializer reads: Nearcard's JSON card, the contact's JSON, vCard, the iOS snapshot,
/// the merge rule, selective disclosure and what people are shown all go through `allCases` and the
/// members below rather than listing the fields by hand. A new text field is a case here, a stored
/// property on `Card`, a row in `Card.subscript(text:)` and in each switch of this file; the compiler
/// finds every switch that misses it. docs/ARCHITECTURE.md "Adding a card field" lists what else shows it.
///
/// The order of `allCases` is the card's canonical order (docs/PROTOCOL.md: the `_sd` digests of a
/// selective-disclosure proof follow it).
public enum CardField: String, Sendable, CaseIterable, Hashable, Comparable {
    case name, email, phone, company, title, socialNetworks, skills

    public static func < (a: CardField, b: CardField) -> Bool { a.rawValue < b.rawValue }

    /// What a field holds: one line of text, or a list of structured items.
    public enum Kind: Sendable, Equatable {
        /// One string; `name` is the one a card must have.
        case text
        /// A list of `SocialProfile`.
        case socialProfiles
        /// A list of `Skill`.
        case skills
    }

    public var kind: Kind {
        switch self {
        case .name, .email, .phone, .company, .title: .text
        case .socialNetworks: .socialProfiles
        case .skills: .skills
        }
    }

    /// The word people see beside the value (the CLI's card and contact views, the web app's form).
    public var label: String {
        switch self {
        case .name: "Name"
        case .email: "Email"
        case .phone: "Phone"
        case .company: "Company"
        case .title: "Title"
        case .socialNetworks: "Social"
        case .skills: "Skills"
        }
    }

    /// The vCard property that carries the field (RFC 6350; `X-` properties are Nearcard's own).
    public var vCardProperty: String {
        switch self {
        case .name: "FN"
        case .email: "EMAIL"
        case .phone: "TEL"
        case .company: "ORG"
        case .title: "TITLE"
        case .socialNetworks: "X-SOCIALPROFILE"
        case .skills: "X-NEARCARD-SKILL"
        }
    }

    /// Where the iOS app's `BusinessCardSnapshot` keeps the field: its member, and whether that member
    /// is a list of which Nearcard keeps the first (`emails`, `phones`). nil: the snapshot has no such field.
    public var snapshotMember: (key: String, isList: Bool)? {
        switch self {
        case .name: ("name", false)
        case .email: ("emails", true)
        case .phone: ("phones", true)
        case .company: ("company", false)
        case .title: ("title", false)
        case .socialNetworks: ("socialProfiles", true)
        case .skills: ("skills", true)
        }
    }

    /// What is wrong with `value` as what a person typed for this field (`card set`, `contacts add`, the
    /// web app's form), or nil when it has the field's shape: an email address NAME@DOMAIN, a phone
    /// number of digits and the usual separators, a social profile's URL http(s)://HOST…. Names and
    /// other free text have no shape. Cards from peers, codes and files are not held to it (another
    /// app's card is kept as it came).
    public func shapeProblem(_ value: String) -> String? {
        switch self {
        case .email:
            let parts = value.split(separator: "@", omittingEmptySubsequences: false)
            guard parts.count == 2, !parts[0].isEmpty, parts[1].contains("."), !parts[1].hasPrefix("."), !parts[1].hasSuffix("."),
                !value.contains(where: \.isWhitespace)
            else { return "is not an email address (NAME@DOMAIN, e.g. ada@example.org)" }
            return nil
        case .phone:
            let allowed = Set("0123456789 +-().,/")
            let digits = value.filter { $0.isASCII && $0.isNumber }.count
            guard value.allSatisfy({ allowed.contains($0) }), digits >= 3, !value.dropFirst().contains("+") else {
                return "is not a phone number (digits, spaces and + - ( ) . /, e.g. +44 20 7946 0000)"
            }
            return nil
        case .socialNetworks:
            guard let url = URL(string: value), ["http", "https"].contains(url.scheme?.lowercased() ?? ""), url.host?.isEmpty == false,
                !value.contains(where: \.isWhitespace)
            else { return "is not a web address (http:// or https:// and a host, e.g. https://example.social/@ada)" }
            return nil
        case .name, .company, .title, .skills:
            return nil
        }
    }

    /// The fields that hold one line of text, in card order.
    public static let textFields: [CardField] = allCases.filter { $0.kind == .text }

    /// The order people read a card in (name, then what they do, then how to reach them).
    public static let displayOrder: [CardField] = [.name, .title, .company, .email, .phone, .socialNetworks, .skills]

    /// Parses a comma-separated list such as `name,company,title`; names what is unknown.
    public static func parseList(_ text: String) throws(ModelError) -> Set<CardField> {
        var out = Set<CardField>()
        for part in text.split(separator: ",") {
            let name = part.trimmingCharacters(in: .whitespaces)
            guard let field = CardField(rawValue: name) ?? CardField.allCases.first(where: { $0.rawValue.lowercased() == name.lowercased() }) else {
                throw ModelError(.invalidCard, "unknown card field \"\(name)\"; the fields are \(CardField.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            out.insert(field)
        }
        return out
    }
}
