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
        if let t = card.title { o["title"] = .string(t) }
        if let c = card.company { o["company"] = .string(c) }
        o["emails"] = .array(card.email.map { [.string($0)] } ?? [])
        o["phones"] = .array(card.phone.map { [.string($0)] } ?? [])
        o["skills"] = .array(
            card.skills.map { s in
                ["name": .string(s.name), "category": .string(s.category ?? defaultSkillCategory), "proficiency": .string(s.proficiency ?? defaultProficiency)]
            })
        o["socialProfiles"] = .array(
            card.socialNetworks.map { s in
                var p: JSONObject = ["platform": .string(s.platform), "username": .string(s.username)]
                if let u = s.url { p["url"] = .string(u) }
                return .object(p)
            })
        o["categories"] = []
        o["updatedAt"] = .string(ISO8601.string(updatedAt))
        if let r = sealedRoute { o["sealedRoute"] = .string(r) }
        return .object(o)
    }

    /// Reads a snapshot as the iOS app writes it. Errors name the member at fault.
    public static func card(from json: JSONValue) throws(QRError) -> (card: Card, cardId: String?) {
        guard let o = json.objectValue else { throw QRError(.malformed, "the snapshot is not a JSON object") }
        guard let name = o["name"]?.stringValue, !name.isEmpty else { throw QRError(.malformed, "the snapshot has no \"name\"") }
        for required in ["emails", "phones", "skills", "socialProfiles"] {
            guard o[required]?.arrayValue != nil else { throw QRError(.malformed, "the snapshot's \"\(required)\" is missing or not an array") }
        }
        func strings(_ k: String) throws(QRError) -> [String] {
            var out: [String] = []
            for v in o[k]?.arrayValue ?? [] {
                guard let s = v.stringValue else { throw QRError(.malformed, "the snapshot's \"\(k)\" holds a non-string") }
                out.append(s)
            }
            return out
        }
        var skills: [Skill] = []
        for (i, s) in (o["skills"]?.arrayValue ?? []).enumerated() {
            guard let n = s["name"]?.stringValue else { throw QRError(.malformed, "the snapshot's skills[\(i)] has no name") }
            skills.append(Skill(name: n, category: s["category"]?.stringValue, proficiency: s["proficiency"]?.stringValue))
        }
        var socials: [SocialProfile] = []
        for (i, s) in (o["socialProfiles"]?.arrayValue ?? []).enumerated() {
            guard let p = s["platform"]?.stringValue, let u = s["username"]?.stringValue else {
                throw QRError(.malformed, "the snapshot's socialProfiles[\(i)] needs platform and username")
            }
            socials.append(SocialProfile(platform: p, username: u, url: s["url"]?.stringValue))
        }
        let card = Card(
            name: name, email: try strings("emails").first, phone: try strings("phones").first, company: o["company"]?.stringValue,
            title: o["title"]?.stringValue, socialNetworks: Array(socials.prefix(Card.Limits.socialNetworks)),
            skills: Array(skills.prefix(Card.Limits.skills)))
        do { try card.validate() } catch { throw QRError(.malformed, "the snapshot: \(error.message)") }
        return (card, o["cardId"]?.stringValue)
    }
}
