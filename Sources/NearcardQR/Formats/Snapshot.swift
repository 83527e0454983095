public import Foundation
public import NearcardCrypto
public import NearcardModel

/// The iOS app's `BusinessCardSnapshot` (reference/solidarity-ios-formats.md), to and from a Card.
public enum Snapshot {
    /// Skill fields the iOS app requires; used when a Nearcard skill has none.
    public static let defaultSkillCategory = "Other"
    public static let defaultProficiency = "intermediate"

    public static func json(_ card: Card, cardId: String, updatedAt: Date, sealedRoute: String? = nil) -> JSONValue {
        var o = JSONObject()
        o["cardId"] = .string(cardId.uppercased())
        o["name"] = .string(card.name)
        o["nameType"] = "display_name"
        for field in CardField.displayOrder where field != .name {
            guard let (key, isList) = field.snapshotMember else { continue }
            switch field.kind {
            case .text:
                let value = card[text: field]
                if isList {
                    o[key] = .array(value.map { [.string($0)] } ?? [])
                } else if let value {
                    o[key] = .string(value)
                }
            case .skills:
                o[key] = .array(
                    card.skills.map { s in
                        [
                            "name": .string(s.name), "category": .string(s.category ?? defaultSkillCategory),
                            "proficiency": .string(s.proficiency ?? defaultProficiency),
                        ]
                    })
            case .socialProfiles:
                o[key] = .array(
                    card.socialNetworks.map { s in
                        var p: JSONObject = ["platform": .string(s.platform), "username": .string(s.username)]
                        if let u = s.url { p["url"] = .string(u) }
                        return .object(p)
                    })
            case .photo:
                continue // the iOS formats carry no photo (the table gives it no snapshot member)
            }
        }
        o["categories"] = []
        o["updatedAt"] = .string(ISO8601.string(updatedAt))
        if let r = sealedRoute { o["sealedRoute"] = .string(r) }
        return .object(o)
    }

    /// Reads a snapshot as the iOS app writes it. Errors name the member at fault.
    public static func card(from json: JSONValue) throws(QRError) -> (card: Card, cardId: String?) {
        guard let o = json.objectValue else { throw QRError(.malformed, Phrase("the snapshot is not a JSON object")) }
        guard let name = o["name"]?.stringValue, !name.isEmpty else { throw QRError(.malformed, Phrase("the snapshot has no \"name\"")) }
        for field in CardField.allCases {
            guard let (key, isList) = field.snapshotMember, isList else { continue }
            guard o[key]?.arrayValue != nil else { throw QRError(.malformed, Phrase("the snapshot's \"%1$@\" is missing or not an array", key)) }
        }
        func strings(_ k: String) throws(QRError) -> [String] {
            var out: [String] = []
            for v in o[k]?.arrayValue ?? [] {
                guard let s = v.stringValue else { throw QRError(.malformed, Phrase("the snapshot's \"%1$@\" holds a non-string", k)) }
                out.append(s)
            }
            return out
        }
        var card = Card(name: name)
        for field in CardField.allCases where field != .name {
            guard let (key, isList) = field.snapshotMember else { continue }
            switch field.kind {
            case .text:
                card[text: field] = isList ? try strings(key).first : o[key]?.stringValue
            case .skills:
                for (i, s) in (o[key]?.arrayValue ?? []).prefix(Card.Limits.skills).enumerated() {
                    guard let n = s["name"]?.stringValue else { throw QRError(.malformed, Phrase("the snapshot's %1$@[%2$@] has no name", key, String(i))) }
                    card.skills.append(Skill(name: n, category: s["category"]?.stringValue, proficiency: s["proficiency"]?.stringValue))
                }
            case .socialProfiles:
                for (i, s) in (o[key]?.arrayValue ?? []).prefix(Card.Limits.socialNetworks).enumerated() {
                    guard let p = s["platform"]?.stringValue, let u = s["username"]?.stringValue else {
                        throw QRError(.malformed, Phrase("the snapshot's %1$@[%2$@] needs platform and username", key, String(i)))
                    }
                    card.socialNetworks.append(SocialProfile(platform: p, username: u, url: s["url"]?.stringValue))
                }
            case .photo:
                continue
            }
        }
        do { try card.validate() } catch { throw QRError(.malformed, Phrase("the snapshot: %1$@", error.phrase)) }
        return (card, o["cardId"]?.stringValue)
    }
}
