/// The web app's page, script, style and icon: real files under Assets/ (index.html, app.js, app.css,
/// icon.svg), embedded in the binary when it is built (SwiftPM's `embedInCode`), served from memory: no
/// CDN, no build step, nothing read from disk at run time. Card fields are only ever put on the page as
/// text (`textContent`), never as HTML; `make lint` checks app.js with ESLint.
import Foundation
import NearcardModel

enum WebAssets {
    /// The page, its card form's fields filled in from the field table (`cardFormRows`).
    static let index = String(decoding: PackageResources.index_html, as: UTF8.self)
        .replacingOccurrences(of: "<!-- card fields: the field table (WebAssets.cardFormRows) -->", with: cardFormRows)
    static let script = String(decoding: PackageResources.app_js, as: UTF8.self)
    static let style = String(decoding: PackageResources.app_css, as: UTF8.self)
    static let icon = String(decoding: PackageResources.icon_svg, as: UTF8.self)

    /// The My card form's fields: one row a field of the table, in the order people read a card, each
    /// with its "share" box (the name's always checked). A text field is an input (its row's limit as
    /// `maxlength`), a list field a textarea of one item a line. app.js reads the form.
    static var cardFormRows: String {
        CardField.displayOrder.map { field in
            let row = field.row
            let id = [.socialProfiles, .skills].contains(field.kind) ? "f-\(field.rawValue)-list" : "f-\(field.rawValue)"
            let words: String =
                switch field.kind {
                case .text: row.label
                case .photo: "\(row.label) (JPEG or PNG; its centre square is kept, nothing else of the file)"
                case .socialProfiles, .skills: "\(row.label) (one per line: \(row.valueName.lowercased()))"
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
                    "<span class=\"photo-field\"><img id=\"\(id)-preview\" class=\"avatar large\" alt=\"Your photo, as peers receive it\" width=\"96\" height=\"96\" hidden>"
                        + "<input id=\"\(id)\" type=\"file\" accept=\"image/jpeg,image/png\" data-photo=\"\(field.rawValue)\">"
                        + "<button type=\"button\" id=\"\(id)-remove\" hidden>Remove photo</button></span>"
                }
            let share =
                field == .name
                ? "<label class=\"share\"><input type=\"checkbox\" data-share=\"name\" checked disabled> always shared</label>"
                : "<label class=\"share\"><input type=\"checkbox\" data-share=\"\(field.rawValue)\"> share</label>"
            return "<div class=\"field\"><label for=\"\(id)\">\(label)</label>\(input)\(share)</div>"
        }.joined(separator: "\n      ")
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
