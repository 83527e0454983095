import Foundation
import Hummingbird
import NearcardText
import Synchronization

/// The page in the person's language (docs/TRANSLATING.md): the language chosen on the page (the
/// `nearcard-lang` cookie its menu sets), else the browser's (`Accept-Language`), else the node's own
/// (its environment, as the CLI reads it), else English. The page is served translated — its text,
/// `lang` and `dir` (right to left for Arabic and Hebrew) — with the words its script needs inlined.
final class WebLanguage: Sendable {
    /// The cookie the page's language menu sets ("auto", or a language with a catalog).
    static let cookieName = "nearcard-lang"

    /// The language of the request being answered (set by `Speaking` for each request): what an API
    /// error is said in.
    @TaskLocal static var current: Translator = .english

    private let node: Translator
    private let pages = Mutex<[String: String]>([:])
    private let translators = Mutex<[String: Translator]>([:])

    init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        node = Catalogs.translator(environment: environment)
    }

    /// The translator for a request.
    func translator(for request: Request) -> Translator {
        if let chosen = Self.chosen(request), chosen != "auto" { return cached([chosen]) }
        if let accept = request.headers[.acceptLanguage], !accept.isEmpty {
            let asked = Languages.accepted(accept)
            let t = cached(asked)
            // English is the source: a browser that asks for it (before any other) gets it.
            if t.language != nil || asked.first.map({ $0 == "en" || $0.hasPrefix("en_") }) == true { return t }
        }
        return node
    }

    /// The language the page's menu chose, when the cookie names one that reads as a language.
    static func chosen(_ request: Request) -> String? {
        guard let v = request.cookies[cookieName]?.value, !v.isEmpty, v.count <= 12, v.allSatisfy({ $0.isASCII && ($0.isLetter || $0 == "_") })
        else { return nil }
        return v
    }

    private func cached(_ languages: [String]) -> Translator {
        let key = languages.joined(separator: ":")
        if let t = translators.withLock({ $0[key] }) { return t }
        let t = Catalogs.translator(languages: languages)
        translators.withLock { if $0.count < 64 { $0[key] = t } }
        return t
    }

    /// The page for `t` (made once a language).
    func page(_ t: Translator, chosen: String?) -> String {
        let key = (t.language ?? "en") + "|" + (chosen ?? "")
        if let p = pages.withLock({ $0[key] }) { return p }
        let p = WebAssets.index(t, chosen: chosen)
        pages.withLock { if $0.count < 64 { $0[key] = p } }
        return p
    }
}

/// Answers each request in its language: `WebLanguage.current` is the request's translator while it is
/// served, so that an API error's sentence (a `Phrase`) is said in the page's language.
struct Speaking<Context: RequestContext>: RouterMiddleware {
    let language: WebLanguage

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        try await WebLanguage.$current.withValue(language.translator(for: request)) { try await next(request, context) }
    }
}
