import Foundation
import HTTPTypes
import Hummingbird
import NearcardCrypto

/// What every request to the web app must pass (docs/SECURITY.md "The local web app"):
/// - the Host header names this server's loopback address (a DNS-rebinding page names its own host);
/// - the session token: `GET /?token=…` (the address `nearcard ui` prints) trades it for an HttpOnly,
///   SameSite=Strict cookie and redirects; every other request needs that cookie;
/// - a request that changes something (any method but GET/HEAD), and any request that carries an
///   Origin, must come from this server's own origin;
/// - every response says `Content-Security-Policy: default-src 'self'` and is not framed or cached.
struct WebGuard<Context: RequestContext>: RouterMiddleware {
    static var cookieName: String { "nearcard_ui" }

    let token: String
    let hosts: Set<String>

    init(token: String, port: Int) {
        self.token = token
        hosts = Set(["127.0.0.1", "localhost", "[::1]"].map { "\($0):\(port)" })
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let host = request.head.authority?.lowercased(), hosts.contains(host) else {
            return Self.refuse(.misdirectedRequest, "this page is only served as http://127.0.0.1 (the Host header names another server)")
        }
        if let origin = request.headers[.origin], !hosts.contains(where: { "http://\($0)" == origin.lowercased() }) {
            return Self.refuse(.forbidden, "a request from another site is refused")
        }
        if request.method != .get && request.method != .head && request.headers[.origin] == nil {
            return Self.refuse(.forbidden, "a request that changes something must come from this page (no Origin header)")
        }
        if request.method == .get, request.uri.path == "/", let offered = request.uri.queryParameters.get("token") {
            guard Self.same(offered, token) else {
                return Self.refuse(.forbidden, "this address's token is not the one nearcard ui printed", page: Self.wantsPage(request))
            }
            var response = Response(status: .seeOther, headers: [.location: "/"])
            response.setCookie(Cookie(name: Self.cookieName, value: token, path: "/", httpOnly: true, sameSite: .strict))
            return Self.secured(response)
        }
        guard let presented = request.cookies[Self.cookieName]?.value, Self.same(presented, token) else {
            return Self.refuse(.unauthorized, "open the address nearcard ui printed (it carries the token)", page: Self.wantsPage(request))
        }
        do {
            return Self.secured(try await next(request, context))
        } catch let error as any HTTPResponseError {
            // What the server or a route refused (no such page, a body too large, a bad value) is answered
            // like everything else: {"error": "…"} with this page's headers.
            return Self.refuse(error.status, Self.reason(error, request))
        }
    }

    /// A refusal's message as a person reads it.
    static func reason(_ error: any HTTPResponseError, _ request: Request) -> String {
        if let body = (error as? HTTPError)?.body, !body.isEmpty { return body }
        switch error.status {
        case .notFound: return "no such page or action: \(request.method) \(request.uri.path)"
        case .contentTooLarge: return "the request body is too large (at most \(WebUI.maximumBodyLength) bytes)"
        default: return error.status.reasonPhrase
        }
    }

    /// Compares without stopping at the first difference.
    static func same(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8)
        let y = Array(b.utf8)
        guard x.count == y.count else { return false }
        var diff: UInt8 = 0
        for i in 0..<x.count { diff |= x[i] ^ y[i] }
        return diff == 0
    }

    /// A browser opening a page (an old tab, a bookmark) rather than the page's script calling the API.
    static func wantsPage(_ request: Request) -> Bool {
        request.method == .get && !request.uri.path.hasPrefix("/api/") && (request.headers[.accept] ?? "").contains("text/html")
    }

    /// `page`: said as a small page a person reads (how to open the app again), not as JSON.
    static func refuse(_ status: HTTPResponse.Status, _ why: String, page: Bool = false) -> Response {
        if page {
            let html = """
                <!doctype html><html lang="en"><head><meta charset="utf-8"><title>Nearcard</title></head>
                <body>
                <h1>Open Nearcard again</h1>
                <p>This address no longer opens Nearcard: the page's key changes each time <code>nearcard ui</code> starts, \
                and this tab or bookmark holds an old one.</p>
                <p>Open the address <code>nearcard ui</code> printed when it started (it carries the key), or run \
                <code>nearcard ui</code> again: it opens the page for you.</p>
                </body></html>
                """
            return secured(Response(status: status, headers: [.contentType: "text/html; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: html))))
        }
        let body = JSONValue.object(["error": .string(why)]).compactText
        return secured(Response(status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: body))))
    }

    static func secured(_ response: Response) -> Response {
        var r = response
        r.headers[.contentSecurityPolicy] = "default-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
        r.headers[.xContentTypeOptions] = "nosniff"
        r.headers[HTTPField.Name("Referrer-Policy")!] = "no-referrer"
        r.headers[HTTPField.Name("X-Frame-Options")!] = "DENY"
        r.headers[.cacheControl] = "no-store"
        return r
    }
}
