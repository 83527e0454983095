import Foundation
public import NearcardCrypto
import NearcardImage

public struct SocialProfile: Sendable, Equatable, Hashable {
    public var platform: String
    public var username: String
    public var url: String?

    public init(platform: String, username: String, url: String? = nil) {
        self.platform = platform
        self.username = username
        self.url = url
    }

    /// `PLATFORM:HANDLE[:URL]` as `card set --social` takes it (the URL may itself contain colons).
    public init(argument: String) throws(ModelError) {
        let parts = argument.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
        guard parts.count >= 2, !parts[0].isEmpty, !parts[1].isEmpty else {
            throw ModelError(.invalidCard, Phrase("social profile \"%1$@\" is not PLATFORM:HANDLE[:URL]", argument))
        }
        self.init(platform: parts[0], username: parts[1], url: parts.count == 3 && !parts[2].isEmpty ? parts[2] : nil)
    }

    var json: JSONValue {
        var o: JSONObject = ["platform": .string(platform), "username": .string(username)]
        if let url { o["url"] = .string(url) }
        return .object(o)
    }
}

public struct Skill: Sendable, Equatable, Hashable {
    public var name: String
    public var category: String?
    public var proficiency: String?

    public init(name: String, category: String? = nil, proficiency: String? = nil) {
        self.name = name
        self.category = category
        self.proficiency = proficiency
    }

    /// `NAME[:CATEGORY[:PROFICIENCY]]` as `card set --skill` takes it.
    public init(argument: String) throws(ModelError) {
        let parts = argument.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
        guard !parts[0].isEmpty else { throw ModelError(.invalidCard, Phrase("skill \"%1$@\" has no name", argument)) }
        self.init(
            name: parts[0], category: parts.count > 1 && !parts[1].isEmpty ? parts[1] : nil,
            proficiency: parts.count > 2 && !parts[2].isEmpty ? parts[2] : nil)
    }

    var json: JSONValue {
        var o: JSONObject = ["name": .string(name)]
        if let category { o["category"] = .string(category) }
        if let proficiency { o["proficiency"] = .string(proficiency) }
        return .object(o)
    }
}

/// A business card: the user's own, or the part of a peer's that was disclosed.
/// Absent optionals and empty lists are "not on the card".
public struct Card: Sendable, Equatable {
    public var name: String
    /// The other text fields' values (`CardField.textFields` but `name`), by field: a field with a row
    /// in the table needs no property here.
    private var texts: [CardField: String] = [:]
    public var socialNetworks: [SocialProfile]
    public var skills: [Skill]
    /// The photo's JPEG (`CardField.photo`): a square of at most 16 KB and 512 pixels a side, with no
    /// metadata (docs/PROTOCOL.md §9). Nearcard makes it from a person's picture (`Photo.make`).
    public var photo: [UInt8]?

    public var email: String? {
        get { self[text: .email] }
        set { self[text: .email] = newValue }
    }
    public var phone: String? {
        get { self[text: .phone] }
        set { self[text: .phone] = newValue }
    }
    public var company: String? {
        get { self[text: .company] }
        set { self[text: .company] = newValue }
    }
    public var title: String? {
        get { self[text: .title] }
        set { self[text: .title] = newValue }
    }

    /// Limits (docs/PROTOCOL.md "Limits"): a card always fits one Noise message and one QR code.
    public enum Limits {
        /// The longest text of most fields; a field's own is its row's `maximumCharacters`.
        public static let textLength = 256
        public static let socialNetworks = 16
        public static let skills = 32
    }

    public init(
        name: String, email: String? = nil, phone: String? = nil, company: String? = nil, title: String? = nil,
        socialNetworks: [SocialProfile] = [], skills: [Skill] = []
    ) {
        self.name = name
        self.socialNetworks = socialNetworks
        self.skills = skills
        self.email = email
        self.phone = phone
        self.company = company
        self.title = title
    }

    /// A text field's value (`CardField.textFields`); nil for a list field or one the card lacks.
    /// Setting `name` to nil leaves the name as it is (a card always has one).
    public subscript(text field: CardField) -> String? {
        get {
            guard field.kind == .text else { return nil }
            return field == .name ? name : texts[field]
        }
        set {
            guard field.kind == .text else { return }
            if field == .name {
                if let newValue { name = newValue }
            } else {
                texts[field] = newValue
            }
        }
    }

    /// Sets `field` from what a person typed (`card set`'s options, the web app's form): a text field
    /// from its one value, trimmed, a list field from one item a value in the form its row's help gives
    /// (`PLATFORM:HANDLE[:URL]`); nothing typed, or only spaces, removes the field (a name cannot be removed).
    public mutating func set(_ field: CardField, typed values: [String]) throws(ModelError) {
        let items = values.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        switch field.kind {
        case .text:
            if field == .name && items.isEmpty { throw ModelError(.invalidCard, Phrase("the card's name is empty: a card always has a name")) }
            self[text: field] = items.first
        case .socialProfiles:
            var profiles: [SocialProfile] = []
            for item in items { profiles.append(try SocialProfile(argument: item)) }
            socialNetworks = profiles
        case .skills:
            var list: [Skill] = []
            for item in items { list.append(try Skill(argument: item)) }
            skills = list
        case .photo:
            // A photo is typed as its data: URI (the web form's); a file is made into one by the face.
            photo = try items.first.map { (uri) throws(ModelError) in try Self.photo(dataURI: uri) }
        }
    }

    /// The prefix of a photo's data: URI.
    public static let photoURIPrefix = "data:image/jpeg;base64,"

    /// A photo as it travels in JSON: `data:image/jpeg;base64,…`.
    public static func dataURI(photo: [UInt8]) -> String { photoURIPrefix + Base64.encode(photo) }

    /// The JPEG of a photo's data: URI; anything else is named.
    public static func photo(dataURI: String) throws(ModelError) -> [UInt8] {
        guard dataURI.hasPrefix(photoURIPrefix), let bytes = try? Base64.decode(String(dataURI.dropFirst(photoURIPrefix.count))) else {
            throw ModelError(.invalidCard, Phrase("\"photo\" must be a data:image/jpeg;base64,… URI"))
        }
        return bytes
    }

    /// The value of one field as JSON, or nil when the card does not have it.
    public func value(of field: CardField) -> JSONValue? {
        switch field.kind {
        case .text: self[text: field].map { .string($0) }
        case .socialProfiles: socialNetworks.isEmpty ? nil : .array(socialNetworks.map(\.json))
        case .skills: skills.isEmpty ? nil : .array(skills.map(\.json))
        case .photo: photo.map { .string(Self.dataURI(photo: $0)) }
        }
    }

    /// Which fields the card has.
    public var presentFields: Set<CardField> { Set(CardField.allCases.filter { value(of: $0) != nil }) }

    /// The card reduced to `fields` (name always stays).
    public func filtered(to fields: Set<CardField>) -> Card {
        var out = Card(name: name)
        for field in fields { out.copy(field, from: self) }
        return out
    }

    /// Takes `field` from `other` as it is there (absent there: absent here; `name` is always kept).
    public mutating func copy(_ field: CardField, from other: Card) {
        switch field.kind {
        case .text: if field == .name { name = other.name } else { self[text: field] = other[text: field] }
        case .socialProfiles: socialNetworks = other.socialNetworks
        case .skills: skills = other.skills
        case .photo: photo = other.photo
        }
    }

    /// Nearcard's JSON card: `{"name", "email"?, "phone"?, "company"?, "title"?, "socialNetworks"?, "skills"?}`.
    public var json: JSONValue {
        var o = JSONObject()
        for field in CardField.allCases {
            if let v = value(of: field) { o[field.rawValue] = v }
        }
        return .object(o)
    }

    /// Reads Nearcard's JSON card. Errors name the key at fault.
    public init(json: JSONValue) throws(ModelError) {
        guard let o = json.objectValue else { throw ModelError(.invalidCard, Phrase("a card must be a JSON object")) }
        for key in o.keys where CardField(rawValue: key) == nil {
            throw ModelError(
                .invalidCard, Phrase("unknown key \"%1$@\" in the card (known: %2$@)", key, CardField.allCases.map(\.rawValue).joined(separator: ", ")))
        }
        func text(_ key: String, required: Bool = false) throws(ModelError) -> String? {
            guard let v = o[key], !v.isNull else {
                if required { throw ModelError(.invalidCard, Phrase("the card has no \"%1$@\"", key)) }
                return nil
            }
            guard let s = v.stringValue else { throw ModelError(.invalidCard, Phrase("\"%1$@\" must be a string", key)) }
            return s
        }
        // An item holds its members and nothing else: a member the card would drop silently could make
        // a card differ from what its disclosure proof committed to (docs/PROTOCOL.md §9).
        func list(_ key: String, members: Set<String>) throws(ModelError) -> [JSONObject] {
            guard let v = o[key], !v.isNull else { return [] }
            guard let a = v.arrayValue else { throw ModelError(.invalidCard, Phrase("\"%1$@\" must be an array", key)) }
            var out: [JSONObject] = []
            for (i, item) in a.enumerated() {
                guard let io = item.objectValue else { throw ModelError(.invalidCard, Phrase("\"%1$@[%2$@]\" must be an object", key, String(i))) }
                if let extra = io.members.first(where: { !members.contains($0.key) }) {
                    throw ModelError(
                        .invalidCard,
                        Phrase(
                            "\"%1$@[%2$@]\" has an unknown member \"%3$@\" (known: %4$@)", key, String(i), extra.key,
                            members.sorted().joined(separator: ", ")))
                }
                out.append(io)
            }
            return out
        }
        func member(_ o: JSONObject, _ key: String, _ path: String, required: Bool) throws(ModelError) -> String? {
            guard let v = o[key], !v.isNull else {
                if required { throw ModelError(.invalidCard, Phrase("\"%1$@\" has no \"%2$@\"", path, key)) }
                return nil
            }
            guard let s = v.stringValue else { throw ModelError(.invalidCard, Phrase("\"%1$@.%2$@\" must be a string", path, key)) }
            return s
        }
        var card = Card(name: try text(CardField.name.rawValue, required: true)!)
        for field in CardField.allCases {
            let key = field.rawValue
            switch field.kind {
            case .text:
                if field != .name { card[text: field] = try text(key) }
            case .socialProfiles:
                for (i, s) in try list(key, members: ["platform", "username", "url"]).enumerated() {
                    let path = "\(key)[\(i)]"
                    card.socialNetworks.append(
                        SocialProfile(
                            platform: try member(s, "platform", path, required: true)!,
                            username: try member(s, "username", path, required: true)!,
                            url: try member(s, "url", path, required: false)))
                }
            case .photo:
                if let uri = try text(key) { card.photo = try Self.photo(dataURI: uri) }
            case .skills:
                for (i, s) in try list(key, members: ["name", "category", "proficiency"]).enumerated() {
                    let path = "\(key)[\(i)]"
                    card.skills.append(
                        Skill(
                            name: try member(s, "name", path, required: true)!,
                            category: try member(s, "category", path, required: false),
                            proficiency: try member(s, "proficiency", path, required: false)))
                }
            }
        }
        self = card
        try validate()
    }

    /// Checks what a person typed against each field's shape (`CardField.shapeProblem`): the first field
    /// that does not fit is thrown, named as `naming` names it (`--email`, `"email"`).
    public func checkShapes(naming: (CardField) -> String) throws(ModelError) {
        for field in CardField.textFields {
            if let value = self[text: field], let problem = field.shapeProblem(value, named: naming(field)) {
                throw ModelError(.invalidCard, problem)
            }
        }
        for profile in socialNetworks {
            if let url = profile.url, let problem = CardField.socialNetworks.urlShapeProblem(url, named: naming(.socialNetworks), in: profile) {
                throw ModelError(.invalidCard, problem)
            }
        }
    }

    /// Checks the documented limits and that the name is not empty.
    public func validate() throws(ModelError) {
        if name.trimmingCharacters(in: .whitespaces).isEmpty { throw ModelError(.invalidCard, Phrase("the card's name is empty")) }
        let strings: [(String, String?, Int)] =
            CardField.textFields.map { ($0.rawValue, self[text: $0], $0.row.maximumCharacters) }
            + socialNetworks.enumerated().flatMap { i, s in
                [("socialNetworks[\(i)].platform", s.platform), ("socialNetworks[\(i)].username", s.username), ("socialNetworks[\(i)].url", s.url)]
                    .map { ($0.0, $0.1, CardField.socialNetworks.row.maximumCharacters) }
            }
            + skills.enumerated().flatMap { i, s in
                [("skills[\(i)].name", s.name), ("skills[\(i)].category", s.category), ("skills[\(i)].proficiency", s.proficiency)]
                    .map { ($0.0, $0.1, CardField.skills.row.maximumCharacters) }
            }
        for (key, value, limit) in strings {
            guard let value else { continue }
            // Characters are Unicode scalar values (docs/PROTOCOL.md §1), never grapheme clusters: one
            // "character" of thousands of combining marks is thousands of characters here.
            let length = value.unicodeScalars.count
            if length > limit {
                throw ModelError(
                    .limitExceeded, Phrase("\"%1$@\" is %2$@ characters; at most %3$@ (Unicode code points)", key, String(length), String(limit)))
            }
            if let control = value.unicodeScalars.first(where: \.isControl) {
                let problem =
                    switch control {
                    case "\n", "\r": Phrase("\"%1$@\" contains a line break; a card's text is one line without control characters", key)
                    case "\t": Phrase("\"%1$@\" contains a tab; a card's text is one line without control characters", key)
                    default:
                        Phrase(
                            "\"%1$@\" contains a control character (U+%2$@); a card's text is one line without control characters", key,
                            String(format: "%04X", control.value))
                    }
                throw ModelError(.invalidCard, problem)
            }
            if let bidi = value.unicodeScalars.first(where: \.isBidiControl) {
                throw ModelError(
                    .invalidCard,
                    Phrase(
                        "\"%1$@\" contains a bidirectional control (U+%2$@), which would reorder the text around it", key,
                        String(bidi.value, radix: 16, uppercase: true)))
            }
        }
        if socialNetworks.count > Limits.socialNetworks {
            throw ModelError(.limitExceeded, Phrase("a card has at most %1$@ social profiles", String(Limits.socialNetworks)))
        }
        if let photo {
            // The cheap checks here (every card read from the book passes them); a received photo is
            // also decoded (`ProximityPayload.verify`).
            if photo.count > Photo.maximumBytes {
                throw ModelError(.limitExceeded, Phrase("\"photo\" is %1$@ bytes; at most %2$@", String(photo.count), String(Photo.maximumBytes)))
            }
            if let why = Photo.metadataProblem(photo) { throw ModelError(.invalidCard, "\"photo\" \(why)") }
        }
        if skills.count > Limits.skills { throw ModelError(.limitExceeded, Phrase("a card has at most %1$@ skills", String(Limits.skills))) }
    }
}

/// Which fields every exchange discloses: chosen once (`nearcard share --fields`), reused for every
/// exchange. The name is always disclosed.
public struct SharingPolicy: Sendable, Equatable {
    public private(set) var fields: Set<CardField>

    public init(fields: Set<CardField>) { self.fields = fields.union([.name]) }

    /// Until the user chooses: the fields the table shares by default (name, company and title).
    public static let `default` = SharingPolicy(fields: CardField.sharedByDefault)

    /// The chosen fields in the card's order (name, email, phone, company, title, socialNetworks, skills).
    public var orderedFieldNames: [String] { CardField.allCases.filter { fields.contains($0) }.map(\.rawValue) }
}

extension Unicode.Scalar {
    /// A control character (general category Cc, docs/PROTOCOL.md §1): U+0000–U+001F and
    /// U+007F–U+009F. Unicode's stability policy fixes that set for good, so this is the category
    /// lookup without the lookup (it runs on every scalar of every card a peer sends).
    @inlinable public var isControl: Bool { value < 0x20 || (value >= 0x7F && value <= 0x9F) }

    /// An explicit bidirectional embedding, override or isolate (docs/PROTOCOL.md §1): U+202A–U+202E and
    /// U+2066–U+2069. In a name they reverse or reorder whatever is printed after it ("Dora\u{202E}XoR").
    @inlinable public var isBidiControl: Bool { (0x202A...0x202E).contains(value) || (0x2066...0x2069).contains(value) }
}
