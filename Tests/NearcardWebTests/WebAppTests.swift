import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NearcardCrypto
import NearcardNode
import NearcardStore
import Testing

@testable import NearcardWeb

/// The web app in-process (HummingbirdTesting: no socket, no browser): the assets the binary embeds, the
/// guard in front of every route, and the API's answers. The live pages in Chromium are WebUITests.
@Suite struct WebAppTests {
    /// A node runtime on a throw-away home, and the web app over it.
    struct Page {
        let dir: String
        let web: WebUI
        let token = WebUI.newToken()
        static let port = 7448

        init() throws {
            dir = FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-web-\(UUID().uuidString)").path
            let keys = IdentityKeys.generate()
            let db = try NearcardDatabase(path: dir + "/nearcard.sqlite")
            let context = NodeContext(
                keys: keys, identity: keys.publicIdentity(name: "Ada Lovelace"), database: db,
                consent: DecidedByCommand(decisions: PendingDecisions(), message: nil))
            web = WebUI(runtime: NodeRuntime.open(context: context), options: .init(port: Self.port, token: token))
        }

        func cleanUp() { try? FileManager.default.removeItem(atPath: dir) }

        /// Runs `body` with a client whose requests carry the session cookie and name this server (the
        /// router test client always says "localhost": `Authority` puts the `x-authority` header in its place,
        /// in front of the same guard and routes `run` serves).
        func test(_ body: @escaping @Sendable (any TestClientProtocol, HTTPFields) async throws -> Void) async throws {
            let router = Router()
            router.add(middleware: Authority())
            router.add(middleware: WebGuard(token: token, port: Self.port))
            web.routes(router)
            let app = Application(router: router)
            var headers = HTTPFields()
            headers[Authority<BasicRequestContext>.header] = "127.0.0.1:\(Self.port)"
            headers[.cookie] = "nearcard_ui=\(token)"
            let fields = headers
            try await app.test(.router) { client in try await body(client, fields) }
        }
    }

    struct Authority<Context: RequestContext>: RouterMiddleware {
        static var header: HTTPField.Name { HTTPField.Name("x-authority")! }
        func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
            var head = request.head
            head.authority = request.headers[Self.header]
            return try await next(Request(head: head, body: request.body), context)
        }
    }

    @Test func theEmbeddedAssetsAreServedWithTheirTypes() async throws {
        let page = try Page()
        defer { page.cleanUp() }
        try await page.test { client, headers in
            for (path, type, needle) in [
                ("/", "text/html", "<script type=\"module\" src=\"/app.js\"></script>"), ("/app.js", "text/javascript", "EventSource(\"/api/events\")"),
                ("/app.css", "text/css", "{"), ("/icon.svg", "image/svg+xml", "<svg"),
            ] {
                try await client.execute(uri: path, method: .get, headers: headers) { response in
                    #expect(response.status == .ok, "\(path)")
                    #expect(response.headers[.contentType]?.hasPrefix(type) == true, "\(path): \(response.headers[.contentType] ?? "")")
                    #expect(String(buffer: response.body).contains(needle), "\(path) is the file under Assets/")
                    #expect(response.headers[.contentSecurityPolicy]?.contains("default-src 'self'") == true)
                }
            }
        }
    }

    @Test func everyRouteIsBehindTheGuard() async throws {
        let page = try Page()
        defer { page.cleanUp() }
        try await page.test { client, headers in
            var noCookie = headers
            noCookie[.cookie] = nil
            try await client.execute(uri: "/api/state", method: .get, headers: noCookie) { response in
                #expect(response.status == .unauthorized)
                #expect(String(buffer: response.body).contains("open the address nearcard ui printed"))
            }
            // An old tab or bookmark (after a restart the key is another): a page that says how to open
            // the app again, not JSON; the API still answers JSON.
            var oldTab = noCookie
            oldTab[.accept] = "text/html,application/xhtml+xml"
            try await client.execute(uri: "/", method: .get, headers: oldTab) { response in
                #expect(response.status == .unauthorized)
                #expect(response.headers[.contentType]?.hasPrefix("text/html") == true)
                #expect(String(buffer: response.body).contains("Open the address <code>nearcard ui</code> printed"))
            }
            try await client.execute(uri: "/?token=an-old-one", method: .get, headers: oldTab) { response in
                #expect(response.status == .forbidden && String(buffer: response.body).contains("run <code>nearcard ui</code> again"))
            }
            var elsewhere = headers
            elsewhere[Authority<BasicRequestContext>.header] = "attacker.example:\(Page.port)"
            try await client.execute(uri: "/app.js", method: .get, headers: elsewhere) { response in
                #expect(response.status == .misdirectedRequest)
            }
            try await client.execute(uri: "/api/card", method: .put, headers: headers, body: ByteBuffer(string: "{}")) { response in
                #expect(response.status == .forbidden, "a change without this page's Origin")
            }
            var offered = headers
            offered[.cookie] = nil
            try await client.execute(uri: "/?token=\(page.token)", method: .get, headers: offered) { response in
                #expect(response.status == .seeOther)
                #expect(response.headers[.setCookie]?.contains("HttpOnly") == true)
            }
        }
    }

    /// The card form: saved as typed, its field words from the card field table; an email, phone or
    /// profile URL without its shape is refused naming the field, and nothing changes.
    /// Issue 52: the page in the language the browser asks for, or the one chosen on the page (its
    /// cookie), with `lang` and `dir` set, the menu showing the choice and the script's words inlined.
    @Test func thePageSpeaksTheLanguageAskedFor() async throws {
        let page = try Page()
        defer { page.cleanUp() }
        try await page.test { client, headers in
            func get(accept: String?, chosen: String? = nil) async throws -> (String, HTTPFields) {
                var h = headers
                if let accept { h[.acceptLanguage] = accept }
                if let chosen { h[.cookie] = "nearcard_ui=\(page.token); nearcard-lang=\(chosen)" }
                return try await client.execute(uri: "/", method: .get, headers: h) { response in
                    #expect(response.status == .ok)
                    return (String(buffer: response.body), response.headers)
                }
            }
            let (french, frenchHeaders) = try await get(accept: "fr-CA, fr;q=0.9, en;q=0.5")
            #expect(french.contains("<html lang=\"fr\" dir=\"ltr\">") && french.contains(">À proximité<") && french.contains(">Enregistrer la carte<"))
            #expect(french.contains("aria-label=\"Sections\"") && french.contains("alt=\"Votre carte en code QR\""), "attributes are translated")
            #expect(french.contains("<script type=\"application/json\" id=\"words\">") && french.contains("Cartes échangées avec %1$@ (%2$@)"))
            #expect(!french.contains("<!-- words -->") && !french.contains("<!-- languages -->"))
            #expect(frenchHeaders[.vary]?.contains("Accept-Language") == true)
            let (arabic, _) = try await get(accept: "fr", chosen: "ar")
            #expect(arabic.contains("<html lang=\"ar\" dir=\"rtl\">") && arabic.contains(">بالقرب<"), "the page's choice wins over the browser's")
            #expect(arabic.contains("<option value=\"ar\" lang=\"ar\" selected>العربية</option>"))
            let (english, _) = try await get(accept: "en-GB, de;q=0.8")
            #expect(english.contains("<html lang=\"en-GB\" dir=\"ltr\">") && english.contains(">Nearby<"), "English asked first is English")
            let (german, _) = try await get(accept: "de-AT")
            #expect(german.contains("<html lang=\"de\" dir=\"ltr\">") && german.contains(">Meine Karte<") && german.contains(">E-Mail<"))
        }
    }

    @Test func theCardFormChecksWhatWasTyped() async throws {
        let page = try Page()
        defer { page.cleanUp() }
        try await page.test { client, headers in
            var change = headers
            change[.origin] = "http://127.0.0.1:\(Page.port)"
            change[.contentType] = "application/json"
            let good =
                #"{"name":"Ada Lovelace","email":"ada@example.org","phone":"+44 20 7946 0000","socialNetworks":["mastodon:ada:https://example.social/@ada"]}"#
            try await client.execute(uri: "/api/card", method: .put, headers: change, body: ByteBuffer(string: good)) { response in
                #expect(response.status == .ok, "\(String(buffer: response.body))")
            }
            for (body, error) in [
                (#"{"name":"Ada","email":"not an email"}"#, #"Email "not an email" is not an email address (NAME@DOMAIN, e.g. ada@example.org)"#),
                (#"{"name":"Ada","phone":"call me"}"#, #"Phone "call me" is not a phone number"#),
                (#"{"name":"Ada","socialNetworks":["x:ada:ftp://example.org"]}"#, #"Social "x:ada:ftp://example.org": the URL is not a web address"#),
            ] {
                try await client.execute(uri: "/api/card", method: .put, headers: change, body: ByteBuffer(string: body)) { response in
                    #expect(response.status == .badRequest)
                    let answer = try JSONParser.parse(String(buffer: response.body))
                    #expect(answer["error"]?.stringValue?.hasPrefix(error) == true, "\(answer)")
                }
            }
            try await client.execute(uri: "/api/card", method: .get, headers: headers) { response in
                let state = try JSONParser.parse(String(buffer: response.body))
                #expect(state["card"]?["email"] == "ada@example.org", "refused changes changed nothing: \(state)")
                #expect(state["labels"]?["socialNetworks"] == "Social" && state["labels"]?["email"] == "Email", "the table's words: \(state)")
            }
        }
    }

    /// A photo of this person's own code on the Scan page: "your own card", and nothing is stored.
    @Test func scanningYourOwnCodeStoresNothing() async throws {
        let page = try Page()
        defer { page.cleanUp() }
        try await page.test { client, headers in
            var change = headers
            change[.origin] = "http://127.0.0.1:\(Page.port)"
            change[.contentType] = "application/json"
            try await client.execute(
                uri: "/api/card", method: .put, headers: change, body: ByteBuffer(string: #"{"name":"Ada Lovelace","title":"Programmer"}"#)
            ) {
                #expect($0.status == .ok)
            }
            for format in ["zk", "did-signed", "plaintext"] {
                let png = try await client.execute(uri: "/api/card/qr.png?format=\(format)&frame=0", method: .get, headers: headers) { $0.body }
                var photo = change
                photo[.contentType] = "image/png"
                try await client.execute(uri: "/api/scan", method: .post, headers: photo, body: png) { response in
                    #expect(response.status == .ok)
                    let report = try JSONParser.parse(String(buffer: response.body)).arrayValue?.first
                    #expect(report?["result"] == "own-card" && report?["name"] == "Ada Lovelace", "\(format): \(report ?? .null)")
                }
            }
            try await client.execute(uri: "/api/contacts", method: .get, headers: headers) { response in
                let contacts = try JSONParser.parse(String(buffer: response.body))
                #expect(contacts.arrayValue?.isEmpty == true, "nothing was stored: \(contacts)")
            }
        }
    }

    @Test func theStateNamesThisNode() async throws {
        let page = try Page()
        defer { page.cleanUp() }
        try await page.test { client, headers in
            try await client.execute(uri: "/api/state", method: .get, headers: headers) { response in
                #expect(response.status == .ok)
                let state = try JSONParser.parse(String(buffer: response.body))
                #expect(state["me"]?["name"] == "Ada Lovelace" && state["peers"]?.arrayValue?.isEmpty == true, "\(state)")
            }
            try await client.execute(uri: "/no/such/page", method: .get, headers: headers) { response in
                #expect(response.status == .notFound)
                #expect(String(buffer: response.body).contains("no such page"))
            }
        }
    }
}

/// The page's script passes ESLint with the repository's configuration (make lint runs the same).
@Suite struct WebScriptLintTests {
    @Test func theScriptPassesESLint() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let assets = root.appendingPathComponent("Sources/NearcardWeb/Assets")
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = [
            "NODE_PATH=/usr/share/nodejs:/usr/lib/nodejs", "eslint", "--no-eslintrc", "-f", "unix", "-c", assets.appendingPathComponent(".eslintrc.json").path,
            assets.appendingPathComponent("app.js").path,
        ]
        let out = Pipe()
        p.standardOutput = out
        p.standardError = out
        try p.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        #expect(p.terminationStatus == 0, "eslint: \(text)")
    }
}
