import ArgumentParser
import Foundation
import NearcardImage
import NearcardModel
import NearcardNode

/// The card's fields as command-line options, read from the field table (`CardField.table`) rather
/// than declared one by one: `--OPTION VALUE` or `--OPTION=VALUE` sets a field (a list field's option
/// repeats, and the values replace the list), an empty value or `--no-OPTION` removes it. A field
/// added to the table is an option of `card set` (and of `contacts add` when its row says people type
/// it for someone else) with its help, and nothing here changes.
struct FieldOptions {
    /// The fields given, with what was typed for each (several for a list field).
    private(set) var values: [CardField: [String]] = [:]
    /// The fields removed with `--no-OPTION`.
    private(set) var removed: Set<CardField> = []

    var isEmpty: Bool { values.isEmpty && removed.isEmpty }

    /// The options' help, for a command's discussion: one line a field, in the order people read a card.
    static func help(for fields: [CardField], heading: String? = nil) -> String {
        let rows = CardField.displayOrder.filter(fields.contains).map(\.row)
        let lines = rows.map { row in "  --\(row.option) \(row.valueName)\n        \(t(row.help))" }
        let heading = heading ?? t("Card fields (an empty value or --no-FIELD removes one, e.g. --no-%1$@)", rows.last?.option ?? "phone")
        return heading + ":\n" + lines.joined(separator: "\n")
    }

    /// Reads `arguments` (what ArgumentParser left unrecognised) against `fields`; anything else is an
    /// error naming it and the options there are.
    init(_ arguments: [String], fields: [CardField]) throws {
        let known = Dictionary(uniqueKeysWithValues: fields.map { ($0.row.option, $0) })
        let names = fields.map { "--\($0.row.option)" }.joined(separator: ", ")
        var i = 0
        while i < arguments.count {
            let token = arguments[i]
            i += 1
            guard token.hasPrefix("--"), token.count > 2 else {
                throw ValidationError(t("unexpected argument \"%1$@\"; a card field is given as --FIELD VALUE (%2$@)", token, names))
            }
            let body = token.dropFirst(2)
            let (option, inline): (String, String?) =
                if let eq = body.firstIndex(of: "=") { (String(body[..<eq]), String(body[body.index(after: eq)...])) } else { (String(body), nil) }
            if inline == nil, option.hasPrefix("no-"), let field = known[String(option.dropFirst(3))] {
                guard values[field] == nil else { throw ValidationError(t("--%1$@ and --no-%1$@ were both given", field.row.option)) }
                removed.insert(field)
                continue
            }
            guard let field = known[option] else {
                throw ValidationError(t("unknown option \"--%1$@\"; the card's fields are %2$@ (see --help)", option, names))
            }
            let value: String
            if let inline {
                value = inline
            } else {
                guard i < arguments.count else { throw ValidationError(t("--%1$@ needs a value (%2$@)", option, field.row.valueName)) }
                value = arguments[i]
                i += 1
            }
            guard !removed.contains(field) else { throw ValidationError(t("--%1$@ and --no-%1$@ were both given", option)) }
            if field.kind == .text, values[field] != nil {
                throw ValidationError(t("--%1$@ was given twice; a card has one %2$@", option, t(field.label).lowercased()))
            }
            values[field, default: []].append(value)
        }
    }

    /// `card` with the options applied (text trimmed; an empty value removes the field). A photo's value
    /// is a picture file, made into the card's photo (`Photo.make`: its centre square, re-encoded).
    func applied(to card: Card) throws -> Card {
        var card = card
        for field in removed { try card.set(field, typed: []) }
        for (field, typed) in values {
            if field.kind == .photo {
                card.photo = try Self.photo(fromFile: typed.first ?? "", option: field.row.option)
            } else {
                try card.set(field, typed: typed)
            }
        }
        return card
    }

    /// Only what was typed now, on a card of the same name: what must have its field's shape.
    func typed(on card: Card) throws(ModelError) -> Card {
        var out = Card(name: card.name)
        for (field, typed) in values where field != .name && field.kind != .photo { try out.set(field, typed: typed) }
        return out
    }

    /// A card photo from a picture file; an empty path removes it (nil).
    static func photo(fromFile path: String, option: String) throws -> [UInt8]? {
        let path = path.trimmingCharacters(in: .whitespaces)
        guard !path.isEmpty else { return nil }
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path), let size = attributes[.size] as? Int else {
            throw CLIError(.malformedInput, t("--%1$@ %2$@: cannot read it: %3$@", option, path, PrivateFiles.unreadable(path)))
        }
        guard size <= Photo.maximumInputBytes else {
            throw CLIError(
                .malformedInput, t("--%1$@ %2$@: the picture is %3$@ bytes; at most %4$@ are read", option, path, String(size), String(Photo.maximumInputBytes))
            )
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CLIError(.malformedInput, t("--%1$@ %2$@: cannot read it: %3$@", option, path, PrivateFiles.unreadable(path)))
        }
        do { return try Photo.make(from: Array(data)) } catch {
            throw CLIError(.malformedInput, t("--%1$@ %2$@: %3$@ (give a JPEG or PNG picture)", option, path, error.message))
        }
    }
}
