import Foundation
public import NearcardCrypto
import NearcardImage

/// The fields of a card (the iOS app's `BusinessCardField`, without the profile image), and the one
/// table every serializer and every face reads.
///
/// A field is one case here and one row in `CardField.table`: its wire name, what it holds and its
/// limits, how what a person types is checked, its vCard property, its label and help text, whether an
/// exchange shares it until the person chooses, and the exchange version it first travels in. Nearcard's
/// JSON card, the contact's JSON, vCard, the iOS snapshot, the merge rule, selective disclosure, `card
/// set`'s options, `contacts add`, the web app's form and what people are shown all go through
/// `allCases` and the row, never a list of fields of their own. docs/ARCHITECTURE.md "Adding a card
/// field" says what else a field needs (its docs and tests).
///
/// The order of `allCases` is the card's canonical order (docs/PROTOCOL.md §9).
public enum CardField: String, Sendable, CaseIterable, Hashable, Comparable {
    case name, email, phone, company, title, socialNetworks, skills, pronouns, photo

    public static func < (a: CardField, b: CardField) -> Bool { a.rawValue < b.rawValue }

    /// What a field holds: one line of text, or a list of structured items.
    public enum Kind: Sendable, Equatable {
        /// One string; `name` is the one a card must have.
        case text
        /// A list of `SocialProfile`.
        case socialProfiles
        /// A list of `Skill`.
        case skills
        /// A photo: a square JPEG (docs/PROTOCOL.md §9), carried as a `data:image/jpeg;base64,` URI.
        case photo
    }

    /// The shape a value a person types must have (`shapeProblem`).
    public enum Shape: Sendable, Equatable {
        /// Free text.
        case free
        /// NAME@DOMAIN.
        case emailAddress
        /// Digits and the usual separators.
        case phoneNumber
        /// http(s)://HOST… (for a social profile: its URL).
        case webAddress
    }

    /// How a text field's vCard value is read back.
    public enum VCardForm: Sendable, Equatable {
        /// The unescaped value.
        case text
        /// A structured value of which the first component is the field (ORG: the organisation's name).
        case firstComponent
        /// A telephone number, with or without a `tel:` scheme.
        case telephone
    }

    /// One row of the table.
    public struct Row: Sendable {
        public let field: CardField
        public let kind: Kind
        /// The most characters (Unicode scalar values) of one string of the field; of a photo, the most
        /// bytes of its JPEG.
        public let maximumCharacters: Int
        public let shape: Shape
        /// The word people see beside the value (the CLI's card and contact views, the web app's form).
        public let label: String
        /// One line of help (`card set --help`, the web app's form).
        public let help: String
        /// `card set`'s option: `--OPTION VALUE` (repeatable for a list), `--no-OPTION` removes the field.
        public let option: String
        /// The value's name in help text.
        public let valueName: String
        /// Whether `contacts add` takes it too (people type such fields for someone else).
        public let typedForContacts: Bool
        /// The vCard property that carries the field (RFC 6350 and RFC 9554; `X-` properties are Nearcard's own).
        public let vCardProperty: String
        public let vCardForm: VCardForm
        /// Where the iOS app's `BusinessCardSnapshot` keeps the field: its member, and whether that member
        /// is a list of which Nearcard keeps the first (`emails`, `phones`). nil: the snapshot has no such field.
        public let snapshotMember: (key: String, isList: Bool)?
        /// Whether an exchange shares the field until the person chooses (`share --fields`).
        public let sharedByDefault: Bool
        /// The exchange version the field first travels in: a peer speaking an older version is sent
        /// none of it (docs/PROTOCOL.md §9, §21).
        public let since: Int
        /// Where it comes when people read a card (name, then what they do, then how to reach them).
        public let displayRank: Int
    }

    /// The table: one row for each field, in the card's canonical order.
    public static let table: [Row] = [
        Row(
            field: .name, kind: .text, maximumCharacters: 256, shape: .free, label: N_("Name"), help: N_("The name on the card (a new card needs one)."),
            option: "name", valueName: "NAME", typedForContacts: true, vCardProperty: "FN", vCardForm: .text, snapshotMember: ("name", false),
            sharedByDefault: true, since: 2, displayRank: 0),
        Row(
            field: .email, kind: .text, maximumCharacters: 256, shape: .emailAddress, label: N_("Email"), help: N_("Email address."),
            option: "email", valueName: "ADDRESS", typedForContacts: true, vCardProperty: "EMAIL", vCardForm: .text,
            snapshotMember: ("emails", true), sharedByDefault: false, since: 2, displayRank: 4),
        Row(
            field: .phone, kind: .text, maximumCharacters: 256, shape: .phoneNumber, label: N_("Phone"), help: N_("Phone number."),
            option: "phone", valueName: "NUMBER", typedForContacts: true, vCardProperty: "TEL", vCardForm: .telephone,
            snapshotMember: ("phones", true), sharedByDefault: false, since: 2, displayRank: 5),
        Row(
            field: .company, kind: .text, maximumCharacters: 256, shape: .free, label: N_("Company"), help: N_("Company."),
            option: "company", valueName: "NAME", typedForContacts: true, vCardProperty: "ORG", vCardForm: .firstComponent,
            snapshotMember: ("company", false), sharedByDefault: true, since: 2, displayRank: 3),
        Row(
            field: .title, kind: .text, maximumCharacters: 256, shape: .free, label: N_("Title"), help: N_("Job title."),
            option: "title", valueName: "TITLE", typedForContacts: true, vCardProperty: "TITLE", vCardForm: .text,
            snapshotMember: ("title", false), sharedByDefault: true, since: 2, displayRank: 2),
        Row(
            field: .socialNetworks, kind: .socialProfiles, maximumCharacters: 256, shape: .webAddress, label: N_("Social"),
            help: N_("A social profile; repeat it for several (they replace the list)."), option: "social",
            valueName: "PLATFORM:HANDLE[:URL]", typedForContacts: false, vCardProperty: "SOCIALPROFILE", vCardForm: .text,
            snapshotMember: ("socialProfiles", true), sharedByDefault: false, since: 2, displayRank: 6),
        Row(
            field: .skills, kind: .skills, maximumCharacters: 256, shape: .free, label: N_("Skills"),
            help: N_("A skill; repeat it for several (they replace the list)."), option: "skill",
            valueName: "NAME[:CATEGORY[:PROFICIENCY]]", typedForContacts: false, vCardProperty: "X-NEARCARD-SKILL", vCardForm: .text,
            snapshotMember: ("skills", true), sharedByDefault: false, since: 2, displayRank: 7),
        Row(
            field: .pronouns, kind: .text, maximumCharacters: 64, shape: .free, label: N_("Pronouns"),
            help: N_("The pronouns you use, as you write them (e.g. she/her, they/them)."), option: "pronouns", valueName: "PRONOUNS",
            typedForContacts: true, vCardProperty: "PRONOUNS", vCardForm: .text, snapshotMember: nil, sharedByDefault: false, since: 3,
            displayRank: 1),
        Row(
            field: .photo, kind: .photo, maximumCharacters: Photo.maximumBytes, shape: .free, label: N_("Photo"),
            help: N_("A picture of you, JPEG or PNG: its centre square is kept, re-encoded (256 px, at most 16 KB) with nothing else of the file."),
            option: "photo", valueName: "FILE", typedForContacts: false, vCardProperty: "PHOTO", vCardForm: .text, snapshotMember: nil,
            sharedByDefault: false, since: 3, displayRank: 8),
    ]

    private static let rows: [CardField: Row] = Dictionary(uniqueKeysWithValues: table.map { ($0.field, $0) })

    /// This field's row.
    public var row: Row { Self.rows[self]! }

    public var kind: Kind { row.kind }
    public var label: String { row.label }
    public var vCardProperty: String { row.vCardProperty }
    public var snapshotMember: (key: String, isList: Bool)? { row.snapshotMember }

    /// What is wrong with `value` as what a person typed for this field (`card set`, `contacts add`, the
    /// web app's form), or nil when it has the field's shape: an email address NAME@DOMAIN, a phone
    /// number of digits and the usual separators, a social profile's URL http(s)://HOST…. Names and
    /// other free text have no shape. Cards from peers, codes and files are not held to it (another
    /// app's card is kept as it came).
    public func shapeProblem(_ value: String) -> String? {
        switch row.shape {
        case .emailAddress:
            let parts = value.split(separator: "@", omittingEmptySubsequences: false)
            guard parts.count == 2, !parts[0].isEmpty, parts[1].contains("."), !parts[1].hasPrefix("."), !parts[1].hasSuffix("."),
                !value.contains(where: \.isWhitespace)
            else { return "is not an email address (NAME@DOMAIN, e.g. ada@example.org)" }
            return nil
        case .phoneNumber:
            let allowed = Set("0123456789 +-().,/")
            let digits = value.filter { $0.isASCII && $0.isNumber }.count
            guard value.allSatisfy({ allowed.contains($0) }), digits >= 3, !value.dropFirst().contains("+") else {
                return "is not a phone number (digits, spaces and + - ( ) . /, e.g. +44 20 7946 0000)"
            }
            return nil
        case .webAddress:
            guard let url = URL(string: value), ["http", "https"].contains(url.scheme?.lowercased() ?? ""), url.host?.isEmpty == false,
                !value.contains(where: \.isWhitespace)
            else { return "is not a web address (http:// or https:// and a host, e.g. https://example.social/@ada)" }
            return nil
        case .free:
            return nil
        }
    }

    /// `shapeProblem` as the sentence it makes: `value`, typed for this field named `name` (`--email`,
    /// `"email"`), does not have the field's shape; nil when it has.
    func shapeProblem(_ value: String, named name: String) -> Phrase? {
        guard shapeProblem(value) != nil else { return nil }
        return switch row.shape {
        case .emailAddress: Phrase("%1$@ \"%2$@\" is not an email address (NAME@DOMAIN, e.g. ada@example.org)", name, value)
        case .phoneNumber: Phrase("%1$@ \"%2$@\" is not a phone number (digits, spaces and + - ( ) . /, e.g. +44 20 7946 0000)", name, value)
        case .webAddress:
            Phrase("%1$@ \"%2$@\" is not a web address (http:// or https:// and a host, e.g. https://example.social/@ada)", name, value)
        case .free: nil
        }
    }

    /// The same for the URL `url` of `profile`, a social profile typed for this field named `name`.
    func urlShapeProblem(_ url: String, named name: String, in profile: SocialProfile) -> Phrase? {
        guard let problem = shapeProblem(url) else { return nil }
        let typed = "\(profile.platform):\(profile.username):\(url)"
        guard row.shape == .webAddress else { return Phrase(verbatim: "\(name) \"\(typed)\": the URL \(problem)") }
        return Phrase("%1$@ \"%2$@\": the URL is not a web address (http:// or https:// and a host, e.g. https://example.social/@ada)", name, typed)
    }

    /// The fields that hold one line of text, in card order.
    public static let textFields: [CardField] = allCases.filter { $0.kind == .text }

    /// The order people read a card in (name, then what they do, then how to reach them).
    public static let displayOrder: [CardField] = table.sorted { $0.displayRank < $1.displayRank }.map(\.field)

    /// The fields an exchange shares until the person chooses.
    public static let sharedByDefault: Set<CardField> = Set(table.filter(\.sharedByDefault).map(\.field))

    /// The fields that travel in exchange `version` (those of version 2 are the first seven).
    public static func fields(ofVersion version: Int) -> [CardField] { allCases.filter { $0.row.since <= version } }

    /// The field whose `card set` option is `option` (`social` is `socialNetworks`).
    public static func field(option: String) -> CardField? { table.first { $0.option == option }?.field }

    /// Parses a comma-separated list such as `name,company,title`; names what is unknown.
    public static func parseList(_ text: String) throws(ModelError) -> Set<CardField> {
        var out = Set<CardField>()
        for part in text.split(separator: ",") {
            let name = part.trimmingCharacters(in: .whitespaces)
            guard let field = CardField(rawValue: name) ?? CardField.allCases.first(where: { $0.rawValue.lowercased() == name.lowercased() }) else {
                throw ModelError(
                    .invalidCard, Phrase("unknown card field \"%1$@\"; the fields are %2$@", name, CardField.allCases.map(\.rawValue).joined(separator: ", ")))
            }
            out.insert(field)
        }
        return out
    }

    /// The table as JSON (`nearcard card fields --json`, the web app's form, the test peers): one object
    /// per field in card order.
    public static var tableJSON: JSONValue {
        .array(
            table.map { row in
                [
                    "name": .string(row.field.rawValue),
                    "kind": .string("\(row.kind)"),
                    "maximumCharacters": .number(Double(row.maximumCharacters)),
                    "label": .string(row.label),
                    "help": .string(row.help),
                    "option": .string(row.option),
                    "valueName": .string(row.valueName),
                    "shape": .string("\(row.shape)"),
                    "vCardProperty": .string(row.vCardProperty),
                    "sharedByDefault": .bool(row.sharedByDefault),
                    "since": .number(Double(row.since)),
                ]
            })
    }
}
