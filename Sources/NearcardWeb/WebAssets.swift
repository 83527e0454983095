/// The web app's page, script, style and icon: real files under Assets/ (index.html, app.js, app.css,
/// icon.svg), embedded in the binary when it is built (SwiftPM's `embedInCode`), served from memory: no
/// CDN, no build step, nothing read from disk at run time. Card fields are only ever put on the page as
/// text (`textContent`), never as HTML; `make lint` checks app.js with ESLint.
import Foundation
import NearcardCrypto
import NearcardModel
import NearcardText

enum WebAssets {
    /// The page in English, its card form's fields filled in from the field table (`cardFormRows`).
    static let index = index(.english, chosen: nil)

    /// The page in `t`'s language (`WebLanguage`): its text and its labels' attributes translated, `lang`
    /// and `dir` set, the language menu filled (`chosen`: the language picked there), and the words
    /// the script needs inlined (a JSON script element, which runs nothing: the policy allows no inline
    /// script).
    static func index(_ t: Translator, chosen: String?) -> String {
        var html = translated(template, t)
            .replacingOccurrences(of: "<!-- card fields: the field table (WebAssets.cardFormRows) -->", with: cardFormRows(t))
            .replacingOccurrences(of: "<html lang=\"en\">", with: "<html lang=\"\(t.languageTag)\" dir=\"\(t.isRightToLeft ? "rtl" : "ltr")\">")
        var options =
            "<option value=\"auto\"\(chosen == nil || chosen == "auto" ? " selected" : "")>\(escape(t("Automatic (the browser's language)")))</option>"
        for (code, name) in [("en", "English")] + Catalogs.embeddedLanguages.sorted().map({ ($0, Languages.autonym($0)) }) {
            let lang = code.replacingOccurrences(of: "_", with: "-")
            options += "<option value=\"\(code)\" lang=\"\(lang)\"\(chosen == code ? " selected" : "")>\(escape(name))</option>"
        }
        html = html.replacingOccurrences(of: "<!-- languages -->", with: options)
        let words = JSONValue.object(JSONObject(t.words.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) })).compactText
            .replacingOccurrences(of: "</", with: "<\\/")
        return html.replacingOccurrences(of: "<!-- words -->", with: "<script type=\"application/json\" id=\"words\">\(words)</script>")
    }

    static let template = String(decoding: PackageResources.index_html, as: UTF8.self)

    /// `html` with each text between tags, and each `aria-label`, `placeholder`, `alt` and `title`, that
    /// the catalog translates replaced by its translation (scripts/po-extract.py collects them from
    /// index.html the same way).
    static func translated(_ html: String, _ t: Translator) -> String {
        guard t.language != nil else { return html }
        var out = ""
        var rest = Substring(html)
        while let open = rest.firstIndex(of: "<") {
            out += translatedText(rest[..<open], t)
            guard let close = rest[open...].firstIndex(of: ">") else {
                rest = rest[open...]
                break
            }
            out += translatedAttributes(rest[open...close], t)
            rest = rest[rest.index(after: close)...]
        }
        return out + rest
    }

    private static func translatedText(_ text: Substring, _ t: Translator) -> String {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty, trimmed.contains(where: \.isLetter) else { return String(text) }
        let translation = t(trimmed)
        guard translation != trimmed, let range = text.range(of: trimmed) else { return String(text) }
        return String(text[..<range.lowerBound]) + escape(translation) + String(text[range.upperBound...])
    }

    private static func translatedAttributes(_ tag: Substring, _ t: Translator) -> String {
        var out = String(tag)
        for name in ["aria-label", "placeholder", "alt", "title"] {
            guard let start = out.range(of: " \(name)=\""), let end = out[start.upperBound...].firstIndex(of: "\"") else { continue }
            let value = String(out[start.upperBound..<end])
            guard value.contains(where: \.isLetter) else { continue }
            out.replaceSubrange(start.upperBound..<end, with: escape(t(value)))
        }
        return out
    }
    static let script = String(decoding: PackageResources.app_js, as: UTF8.self)
    static let style = String(decoding: PackageResources.app_css, as: UTF8.self)
    static let icon = String(decoding: PackageResources.icon_svg, as: UTF8.self)

    /// The My card form's fields: one row a field of the table, in the order people read a card, each
    /// with its "share" box (the name's always checked). A text field is an input (its row's limit as
    /// `maxlength`), a list field a textarea of one item a line. app.js reads the form.
    static func cardFormRows(_ t: Translator) -> String {
        CardField.displayOrder.map { field in
            let row = field.row
            let id = [.socialProfiles, .skills].contains(field.kind) ? "f-\(field.rawValue)-list" : "f-\(field.rawValue)"
            let words: String =
                switch field.kind {
                case .text: label(field, t)
                case .photo: t("%1$@ (JPEG or PNG; its centre square is kept, nothing else of the file)", label(field, t))
                case .socialProfiles, .skills: t("%1$@ (one per line: %2$@)", label(field, t), row.valueName.lowercased())
                }
            let label = escape(words)
            let input =
                switch field.kind {
                case .text:
                    "<input id=\"\(id)\" name=\"\(field.rawValue)\"\(field == .name ? " required" : "") maxlength=\"\(row.maximumCharacters)\"\(autocomplete(field))>"
                case .socialProfiles, .skills:
                    "<textarea id=\"\(id)\" data-list=\"\(field.rawValue)\" rows=\"3\"></textarea>"
                case .photo:
                    // Sent on its own (PUT /api/card/photo) when chosen; the node makes the square photo.
                    "<span class=\"photo-field\"><img id=\"\(id)-preview\" class=\"avatar large\" alt=\"\(escape(t("Your photo, as peers receive it")))\" width=\"96\" height=\"96\" hidden>"
                        + "<input id=\"\(id)\" type=\"file\" accept=\"image/jpeg,image/png\" data-photo=\"\(field.rawValue)\">"
                        + "<button type=\"button\" id=\"\(id)-remove\" hidden>\(escape(t("Remove photo")))</button></span>"
                }
            let share =
                field == .name
                ? "<label class=\"share\"><input type=\"checkbox\" data-share=\"name\" checked disabled> \(escape(t("always shared")))</label>"
                : "<label class=\"share\"><input type=\"checkbox\" data-share=\"\(field.rawValue)\"> \(escape(t("share")))</label>"
            return "<div class=\"field\"><label for=\"\(id)\">\(label)</label>\(input)\(share)</div>"
        }.joined(separator: "\n      ")
    }

    /// A card field's label in `t`'s language (the field table's words are English).
    static func label(_ field: CardField, _ t: Translator) -> String {
        switch field {
        case .name: t("Name")
        case .email: t("Email")
        case .phone: t("Phone")
        case .company: t("Company")
        case .title: t("Title")
        case .socialNetworks: t("Social")
        case .skills: t("Skills")
        case .pronouns: t("Pronouns")
        case .photo: t("Photo")
        }
    }

    /// The browser's autofill hint for a field whose shape says what it is.
    static func autocomplete(_ field: CardField) -> String {
        if field == .name { return " autocomplete=\"name\"" }
        switch field.row.shape {
        case .emailAddress: return " autocomplete=\"email\""
        case .phoneNumber: return " autocomplete=\"tel\""
        case .webAddress, .free: return ""
        }
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
            .replacingOccurrences(of: "\"", with: "&quot;")
    }
}
