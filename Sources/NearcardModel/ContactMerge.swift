public import Foundation

/// The one rule for a card that arrives for someone already in the contact book (the same DID): what
/// the contact keeps, what the new card may change, and what changed. Used by the store for every
/// way a card arrives other than an exchange (QR codes, `contacts add`, `contacts import`).
///
/// - The contact keeps its id, source (an in-person contact stays `proximity`), messages, exchange
///   signatures, sealed route, keys, tags, notes and first-received time, and every field the new card
///   does not carry.
/// - A `verified` card adds fields and refreshes the ones it carries; an `unverified` one only fills
///   fields the contact lacks; a `failed` one changes nothing.
/// - The status never goes down: verified > unverified > pending > failed.
public enum ContactMerge {
    /// The contact after the merge, and the fields the incoming card added or changed (in card order).
    public struct Result: Sendable, Equatable {
        public var contact: Contact
        public var changed: [CardField]
    }

    public static func merge(existing: Contact, incoming: Contact, now: Date) -> Result {
        var merged = existing
        merged.lastInteraction = now
        var changed: [CardField] = []
        guard incoming.verificationStatus != .failed else { return Result(contact: merged, changed: []) }
        let refresh = incoming.verificationStatus == .verified
        var card = existing.card
        for field in CardField.allCases {
            switch field.kind {
            case .text:
                guard let new = incoming.card[text: field], new != card[text: field] else { continue }
                // The name is always there, so an unverified card never changes it.
                guard refresh || (field != .name && card[text: field] == nil) else { continue }
                card[text: field] = new
            // Lists: a verified card replaces a profile on the same platform (a skill of the same name)
            // and adds new ones; an unverified one only adds to an empty list.
            case .socialProfiles:
                guard
                    let list = mergeList(
                        card.socialNetworks, incoming.card.socialNetworks, refresh: refresh, key: \.platform, limit: Card.Limits.socialNetworks)
                else { continue }
                card.socialNetworks = list
            case .skills:
                guard let list = mergeList(card.skills, incoming.card.skills, refresh: refresh, key: \.name, limit: Card.Limits.skills) else { continue }
                card.skills = list
            // A photo as a text field: a verified card replaces it, an unverified one only fills its absence.
            case .photo:
                guard let new = incoming.card.photo, new != card.photo, refresh || card.photo == nil else { continue }
                card.photo = new
            }
            changed.append(field)
        }
        merged.card = card
        if rank(incoming.verificationStatus) > rank(existing.verificationStatus) { merged.verificationStatus = incoming.verificationStatus }
        if merged.cardId == nil { merged.cardId = incoming.cardId }
        merged.credentialIds = Array(Set(existing.credentialIds + incoming.credentialIds)).sorted()
        // A group proof the new card carries is the newer verdict; none leaves the last one.
        if incoming.groupVerdict != nil {
            merged.memberOf = incoming.memberOf
            merged.groupVerdict = incoming.groupVerdict
        }
        if merged.notes == nil { merged.notes = incoming.notes }
        // The version of the latest exchange (a code or a file has none and leaves it).
        if let version = incoming.exchangeVersion { merged.exchangeVersion = version }
        return Result(contact: merged, changed: changed)
    }

    /// Whether two cards without a DID look like the same person: the same name (ignoring case and
    /// accents), or the same email address or phone number.
    public static func looksAlike(_ a: Card, _ b: Card) -> Bool {
        if a.name.compare(b.name, options: [.caseInsensitive, .diacriticInsensitive]) == .orderedSame { return true }
        if let x = a.email, let y = b.email, x.caseInsensitiveCompare(y) == .orderedSame { return true }
        if let x = a.phone, let y = b.phone, digits(x) == digits(y), digits(x).count >= 6 { return true }
        return false
    }

    /// The merged list, or nil when it does not change: items whose key (any case) matches are replaced,
    /// others appended, up to `limit`; without `refresh`, only an empty list takes the new items.
    static func mergeList<T: Equatable>(_ old: [T], _ new: [T], refresh: Bool, key: KeyPath<T, String>, limit: Int) -> [T]? {
        guard !new.isEmpty, refresh || old.isEmpty else { return nil }
        var list = old
        for item in new {
            if let i = list.firstIndex(where: { $0[keyPath: key].caseInsensitiveCompare(item[keyPath: key]) == .orderedSame }) {
                list[i] = item
            } else {
                list.append(item)
            }
        }
        list = Array(list.prefix(limit))
        return list == old ? nil : list
    }

    static func digits(_ s: String) -> String { String(s.unicodeScalars.filter { ("0"..."9").contains($0) }.map(Character.init)) }

    static func rank(_ s: VerificationStatus) -> Int {
        switch s {
        case .failed: 0
        case .pending: 1
        case .unverified: 2
        case .verified: 3
        }
    }
}
