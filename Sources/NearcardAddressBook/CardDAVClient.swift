import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// CardDAV (RFC 6352) over WebDAV (RFC 4918), as much of it as sync needs: discovery, a listing of
/// hrefs and ETags, and GET / PUT / DELETE with preconditions. HTTPS with the system's trust store
/// (plain http only to this machine); HTTP Basic authentication; redirects followed by hand (at most 5,
/// the method kept); every request bounded in time and every answer in size.
struct CardDAVClient: Sendable {
    /// The account, as errors name it.
    let account: String
    let username: String
    let password: String
    let http: HTTPClient

    /// How long one request may take.
    static let requestTimeout: TimeAmount = .seconds(20)
    /// The largest answer read (a listing of many cards, or one card).
    static let maximumAnswer = 16 << 20
    /// The largest vCard read from the server.
    static let maximumCard = 1 << 20

    struct Answer {
        var status: Int
        var headers: HTTPHeaders
        var body: [UInt8]
        /// Where it came from (after redirects).
        var url: URL
        var text: String { String(decoding: body, as: UTF8.self) }
        var etag: String? { headers.first(name: "ETag") }
    }

    init(account: String, username: String, password: String) {
        self.account = account
        self.username = username
        self.password = password
        var configuration = HTTPClient.Configuration()
        configuration.redirectConfiguration = .disallow
        configuration.timeout = .init(connect: .seconds(10), read: .seconds(20))
        configuration.decompression = .disabled
        http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    func shutdown() async { try? await http.shutdown() }

    /// Only https, or http to this machine (the password travels in every request).
    static func checkScheme(_ url: URL, account: String) throws(AddressBookError) {
        switch url.scheme?.lowercased() {
        case "https": return
        case "http":
            let host = url.host?.lowercased() ?? ""
            if host == "localhost" || host == "127.0.0.1" || host == "::1" || host == "[::1]" { return }
            throw AddressBookError(
                .invalidInput, Phrase("%1$@: Nearcard sends the password only over https (http only to localhost); use the https:// address", account))
        default:
            throw AddressBookError(.invalidInput, Phrase("%1$@ is not an http(s) URL; give the server's https:// address", account))
        }
    }

    /// How long the first connection of a sync may take before the server is called unreachable.
    static let connectTimeout: TimeAmount = .seconds(5)

    /// Whether the server takes a TCP connection, told at once: the HTTP client retries a refused
    /// connection until the request's deadline, so a server that is down would hold a sync for
    /// `requestTimeout` before it is said.
    func checkReachable(_ url: URL) async throws(AddressBookError) {
        guard let host = url.host else { return }
        let port = url.port ?? (url.scheme?.lowercased() == "http" ? 80 : 443)
        do {
            let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).connectTimeout(Self.connectTimeout)
                .connect(host: host, port: port).get()
            try? await channel.close()
        } catch {
            throw AddressBookError(
                .unreachable, Phrase("%1$@: cannot reach %2$@:%3$@ (%4$@); is the server up?", account, host, String(port), Self.reason(error)))
        }
    }

    /// A connection's failure in a few words ("connection refused"), not NIO's nested description.
    static func reason(_ error: any Error) -> Phrase {
        let text = String(describing: error)
        for (needle, words) in [
            ("Connection refused", Phrase("connection refused")), ("No route to host", Phrase("no route to host")),
            ("Network is unreachable", Phrase("network unreachable")), ("connectTimeout", Phrase("no answer within 5 s")), ("timed out", Phrase("timed out")),
            ("Name or service not known", Phrase("no such host name")), ("NXDOMAIN", Phrase("no such host name")),
        ] where text.contains(needle) {
            return words
        }
        return Phrase(verbatim: text.count > 120 ? String(text.prefix(120)) + "…" : text)
    }

    func request(_ method: String, _ url: URL, headers: [(String, String)] = [], body: String? = nil, limit: Int = maximumAnswer)
        async throws(AddressBookError) -> Answer
    {
        var url = url
        for _ in 0...5 {
            try Self.checkScheme(url, account: account)
            var request = HTTPClientRequest(url: url.absoluteString)
            request.method = HTTPMethod(rawValue: method)
            request.headers.add(name: "User-Agent", value: "nearcard-carddav/1")
            let token = Data("\(username):\(password)".utf8).base64EncodedString()
            request.headers.add(name: "Authorization", value: "Basic \(token)")
            for (k, v) in headers { request.headers.add(name: k, value: v) }
            if let body {
                request.body = .bytes(ByteBuffer(string: body))
                request.headers.add(name: "Content-Length", value: String(body.utf8.count))
            }
            let answer: Answer
            do {
                let response = try await http.execute(request, timeout: Self.requestTimeout)
                let bytes: ByteBuffer
                do { bytes = try await response.body.collect(upTo: limit) } catch is NIOTooManyBytesError {
                    throw AddressBookError(
                        .tooLarge,
                        limit == Self.maximumCard
                            ? Phrase(
                                "%1$@: the answer to %2$@ %3$@ was too large (over %4$@ MiB, the limit for one card); no address book needs that much: check the URL and the server",
                                account, method, url.path, String(limit >> 20))
                            : Phrase(
                                "%1$@: the answer to %2$@ %3$@ was too large (over %4$@ MiB, the limit for an answer); no address book needs that much: check the URL and the server",
                                account, method, url.path, String(limit >> 20)))
                }
                answer = Answer(status: Int(response.status.code), headers: response.headers, body: Array(buffer: bytes), url: url)
            } catch let problem as AddressBookError {
                throw problem
            } catch {
                var problem = describe(error, url: url)
                if problem.kind == .certificate, let host = url.host,
                    let dates = await CertificateProbe.dateProblem(host: host, port: url.port ?? 443)
                {
                    problem = AddressBookError(
                        .certificate,
                        Phrase(
                            "%1$@: the TLS certificate of %2$@ was not accepted: %3$@; renew it on the server (or, if this machine's clock is wrong, set it)",
                            account, host, dates))
                }
                throw problem
            }
            if [301, 302, 303, 307, 308].contains(answer.status), let location = answer.headers.first(name: "Location"),
                let next = URL(string: location, relativeTo: url)?.absoluteURL
            {
                url = next
                continue
            }
            if answer.status == 401 {
                throw AddressBookError(
                    .unauthorized,
                    Phrase(
                        "%1$@: the server refused user \"%2$@\" and its password (401); check the password file and run: nearcard addressbook add %1$@ --user NAME --password-file FILE",
                        account, username))
            }
            if answer.status == 507 {
                throw AddressBookError(
                    .serverFull,
                    Phrase(
                        "%1$@: the server is out of space (507 Insufficient Storage on %2$@ %3$@); nothing can be written there until space is freed on it",
                        account, method, url.path))
            }
            if (500..<600).contains(answer.status) {
                throw AddressBookError(
                    .serverFailed,
                    Phrase("%1$@: the server failed (%2$@ on %3$@ %4$@); its own log says why", account, String(answer.status), method, url.path))
            }
            return answer
        }
        throw AddressBookError(.server, Phrase("%1$@: more than 5 redirects from %2$@; give the address book's own URL", account, url.absoluteString))
    }

    /// One line for a failed request: the certificate, the connection, or the transport.
    func describe(_ error: any Error, url: URL) -> AddressBookError {
        let host = url.host ?? url.absoluteString
        let text = String(describing: error)
        // By the TLS library's own error types, never by their words.
        if let e = error as? NIOSSLExtraError, e == .failedToValidateHostname {
            return AddressBookError(
                .certificate,
                Phrase(
                    "%1$@: the TLS certificate of %2$@ was issued for another name; give the address book's URL with a name its certificate names", account,
                    host))
        }
        if error is NIOSSLError || error is NIOSSLExtraError || error is BoringSSLError {
            return AddressBookError(
                .certificate,
                Phrase(
                    "%1$@: the TLS certificate of %2$@ was not accepted (expired, issued for another name, or by a CA this system does not trust): renew it on the server, or add its CA to the system's trust store (update-ca-certificates)",
                    account, host))
        }
        if let e = error as? HTTPClientError, e == .deadlineExceeded || e == .readTimeout || e == .connectTimeout {
            return AddressBookError(.unreachable, Phrase("%1$@: %2$@ did not answer in time; is the server up?", account, host))
        }
        let short = text.count > 160 ? String(text.prefix(160)) + "…" : text
        return AddressBookError(.unreachable, Phrase("%1$@: cannot reach %2$@ (%3$@); is the server up?", account, host, short))
    }

    static let propfindDiscovery = """
        <?xml version="1.0" encoding="utf-8"?>
        <d:propfind xmlns:d="DAV:" xmlns:card="urn:ietf:params:xml:ns:carddav">
          <d:prop><d:resourcetype/><d:current-user-principal/><card:addressbook-home-set/><d:displayname/><d:current-user-privilege-set/></d:prop>
        </d:propfind>
        """

    static let propfindListing = """
        <?xml version="1.0" encoding="utf-8"?>
        <d:propfind xmlns:d="DAV:"><d:prop><d:getetag/><d:resourcetype/></d:prop></d:propfind>
        """

    func propfind(_ url: URL, depth: Int, body: String) async throws(AddressBookError) -> (url: URL, responses: [DAVResponse]) {
        let answer = try await request(
            "PROPFIND", url, headers: [("Depth", String(depth)), ("Content-Type", "application/xml; charset=utf-8")], body: body)
        if answer.status == 403 {
            throw AddressBookError(
                .readOnly, Phrase("%1$@: user \"%2$@\" may not read %3$@ (403); check the account's rights on the server", account, username, url.path))
        }
        if answer.status == 404 || answer.status == 405 {
            throw AddressBookError(
                .notAddressBook,
                Phrase("%1$@: there is nothing at %2$@ (%3$@); give the address book's URL or the server's root", account, url.path, String(answer.status)))
        }
        guard answer.status == 207, let responses = try DAVResponse.multistatus(answer.body) else {
            if answer.status == 207 {
                throw AddressBookError(
                    .server,
                    Phrase(
                        "%1$@: PROPFIND %2$@ answered a body Nearcard does not read (not well-formed XML, a DTD or entities, or no multistatus); is this a CardDAV server?",
                        account, url.path))
            }
            throw AddressBookError(
                .server,
                Phrase("%1$@: PROPFIND %2$@ answered %3$@, not a WebDAV multistatus; is this a CardDAV server?", account, url.path, String(answer.status)))
        }
        return (answer.url, responses)
    }

    /// The absolute URL of an href in an answer from `base`.
    static func resolve(_ href: String, against base: URL) -> URL? { URL(string: href, relativeTo: base)?.absoluteURL }

    /// A resource's path, percent-decoded and without a trailing slash: how hrefs are compared.
    static func key(_ u: URL) -> String {
        var p = u.path.removingPercentEncoding ?? u.path
        while p.hasSuffix("/") && p.count > 1 { p.removeLast() }
        return p
    }

    /// Whether the same resource.
    static func same(_ a: URL, _ b: URL) -> Bool { key(a) == key(b) }

    static func isAddressBook(_ r: DAVResponse) -> Bool {
        r.property(DAVElement.dav, "resourcetype")?.child(DAVElement.carddav, "addressbook") != nil
    }

    /// The address book a URL leads to: the URL itself when it is one; else, from the URL or the
    /// server's `/.well-known/carddav`, the current user's principal, its addressbook-home-set and the
    /// first address book there (RFC 6764 §6, RFC 6352 §7.1).
    func discover(_ start: URL) async throws(AddressBookError) -> URL {
        var principal: URL?
        var tried: [URL] = [start]
        if let wellKnown = URL(string: "/.well-known/carddav", relativeTo: start)?.absoluteURL, !Self.same(wellKnown, start) { tried.append(wellKnown) }
        var lastProblem: AddressBookError?
        for url in tried {
            let found: (url: URL, responses: [DAVResponse])
            do { found = try await propfind(url, depth: 0, body: Self.propfindDiscovery) } catch {
                if error.kind == .notAddressBook || error.kind == .server {
                    // What the URL the person gave answered, not what the well-known one did.
                    lastProblem = lastProblem ?? error
                    continue
                }
                throw error
            }
            if let me = found.responses.first(where: { Self.same(Self.resolve($0.href, against: found.url) ?? found.url, found.url) }) ?? found.responses.first
            {
                if Self.isAddressBook(me) { return Self.resolve(me.href, against: found.url) ?? found.url }
                if let home = me.property(DAVElement.carddav, "addressbook-home-set")?.hrefs.first {
                    return try await firstAddressBook(in: Self.resolve(home, against: found.url) ?? found.url)
                }
                if let p = me.property(DAVElement.dav, "current-user-principal")?.hrefs.first {
                    principal = Self.resolve(p, against: found.url)
                    break
                }
            }
        }
        guard let principal else {
            throw lastProblem
                ?? AddressBookError(
                    .notAddressBook, Phrase("%1$@: the server names no principal for \"%2$@\"; give the address book's own URL", account, username))
        }
        let home = try await propfind(principal, depth: 0, body: Self.propfindDiscovery)
        guard let homeHref = home.responses.first?.property(DAVElement.carddav, "addressbook-home-set")?.hrefs.first,
            let homeURL = Self.resolve(homeHref, against: home.url)
        else {
            throw AddressBookError(
                .notAddressBook,
                Phrase("%1$@: %2$@ has no CardDAV address book home; is CardDAV enabled for \"%3$@\"?", account, principal.path, username))
        }
        return try await firstAddressBook(in: homeURL)
    }

    func firstAddressBook(in home: URL) async throws(AddressBookError) -> URL {
        let listing = try await propfind(home, depth: 1, body: Self.propfindDiscovery)
        if let book = listing.responses.first(where: Self.isAddressBook), let url = Self.resolve(book.href, against: listing.url) { return url }
        throw AddressBookError(
            .notAddressBook,
            Phrase(
                "%1$@: user \"%2$@\" has no address book under %3$@; create one (in the server's web page or client) and add again", account, username,
                home.path))
    }

    /// The collection's privileges for this user, when the server says (RFC 3744 current-user-privilege-set).
    func mayWrite(_ collection: URL) async throws(AddressBookError) -> Bool? {
        let found = try await propfind(collection, depth: 0, body: Self.propfindDiscovery)
        guard let me = found.responses.first else { return nil }
        guard Self.isAddressBook(me) else {
            throw AddressBookError(
                .notAddressBook,
                Phrase("%1$@: %2$@ is not a CardDAV address book; give the address book's URL or the server's root", account, collection.path))
        }
        guard let set = me.property(DAVElement.dav, "current-user-privilege-set") else { return nil }
        let granted = Set(set.all(DAVElement.dav, "privilege").flatMap(\.children).map(\.name))
        return !granted.isDisjoint(with: ["all", "write", "write-content", "bind"])
    }

    /// The cards in a collection, by `key`: their URL and ETag.
    func list(_ collection: URL) async throws(AddressBookError) -> [String: (url: URL, etag: String)] {
        let found = try await propfind(collection, depth: 1, body: Self.propfindListing)
        var cards: [String: (url: URL, etag: String)] = [:]
        for r in found.responses {
            guard let url = Self.resolve(r.href, against: found.url), !Self.same(url, collection),
                r.property(DAVElement.dav, "resourcetype")?.child(DAVElement.dav, "collection") == nil
            else { continue }
            cards[Self.key(url)] = (url, r.property(DAVElement.dav, "getetag")?.text.trimmingCharacters(in: .whitespacesAndNewlines) ?? "")
        }
        return cards
    }
}
