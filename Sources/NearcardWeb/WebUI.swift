import Dispatch
import Foundation
import Hummingbird
import Logging
import NearcardControl
import NearcardCrypto
import NearcardDiscovery
import NearcardModel
public import NearcardNode
import Synchronization

/// `nearcard ui`: the node's pages and API on loopback (docs/WEBUI.md). Everything goes through the
/// node's facade (`NodeRuntime`): the same peers, the same sessions, the same store as every face.
public final class WebUI: Sendable {
    public struct Options: Sendable {
        public var address: String
        public var port: Int
        /// The session token: in the printed address once, then a cookie.
        public var token: String
        /// Where a password typed into the page for an address book is kept (a 0600 file; the home).
        public var secretsDirectory: String?

        public init(address: String = "127.0.0.1", port: Int = WebUI.defaultPort, token: String, secretsDirectory: String? = nil) {
            self.address = address
            self.port = port
            self.token = token
            self.secretsDirectory = secretsDirectory
        }
    }

    public static let defaultPort = 7448
    /// The largest request body read (an exchange request, an answer): a few hundred bytes are needed.
    public static let maximumBodyLength = 16 * 1024

    let runtime: NodeRuntime
    /// What the pages do with the home: the facade over the node (never the book directly).
    let app: NearcardApp
    let options: Options
    let feed = Feed()
    let pending = Mutex<[String: JSONValue]>([:])
    /// The page in the person's language (docs/TRANSLATING.md).
    let language = WebLanguage()

    public init(runtime: NodeRuntime, options: Options) {
        self.runtime = runtime
        self.app = NearcardApp(runtime: runtime)
        self.options = options
    }

    /// How many pages are open now (event streams connected): a request then waits on a page; with
    /// none open, the CLI shows it as a desktop notification.
    public var openPages: Int { feed.count }

    /// Whether a web app with this token serves at `address`:`port` (another `nearcard ui` of the same
    /// home): its state answers 200 to the token's cookie within a second.
    public static func answers(address: String, port: Int, token: String) async -> Bool {
        let host = address == "::1" ? "[::1]" : address
        let request =
            "GET /api/state HTTP/1.1\r\nHost: \(host):\(port)\r\nCookie: \(WebGuard<BasicRequestContext>.cookieName)=\(token)\r\nConnection: close\r\n\r\n"
        return await withCheckedContinuation { (done: CheckedContinuation<Bool, Never>) in
            DispatchQueue.global().async {
                done.resume(returning: statusLine(address: address, port: port, request: request)?.hasPrefix("HTTP/1.1 200") == true)
            }
        }
    }

    /// The first line of the answer to `request`, over a plain blocking socket with one-second timeouts.
    static func statusLine(address: String, port: Int, request: String) -> String? {
        let v6 = address.contains(":")
        let fd = socket(v6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 1, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var connected: Int32 = -1
        if v6 {
            var a = sockaddr_in6()
            a.sin6_family = sa_family_t(AF_INET6)
            a.sin6_port = in_port_t(UInt16(port).bigEndian)
            guard inet_pton(AF_INET6, address, &a.sin6_addr) == 1 else { return nil }
            connected = withUnsafePointer(to: &a) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
            }
        } else {
            var a = sockaddr_in()
            a.sin_family = sa_family_t(AF_INET)
            a.sin_port = in_port_t(UInt16(port).bigEndian)
            guard inet_pton(AF_INET, address, &a.sin_addr) == 1 else { return nil }
            connected = withUnsafePointer(to: &a) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        }
        guard connected == 0 else { return nil }
        let bytes = Array(request.utf8)
        guard send(fd, bytes, bytes.count, 0) == bytes.count else { return nil }
        var buffer = [UInt8](repeating: 0, count: 256)
        let n = recv(fd, &buffer, buffer.count, 0)
        guard n > 0 else { return nil }
        return String(decoding: buffer[0..<n], as: UTF8.self).split(separator: "\r\n").first.map(String.init)
    }

    /// A fresh session token: 128 random bits, hex.
    public static func newToken() -> String { Hex.encode(Sodium.randomBytes(16)) }

    /// The address to open: it carries the token once; the page trades it for a cookie.
    public var address: String { "http://\(options.address == "::1" ? "[::1]" : options.address):\(options.port)/?token=\(options.token)" }

    /// Ends every open page's event stream cleanly before the server stops: a last `stopped` event (the
    /// page says the node stopped instead of reconnecting for ever), then the stream's end, waiting up
    /// to a second for them to be written.
    public func closeStreams() async {
        feed.send(JSONLines.line("stopped"))
        feed.finish()
        let deadline = ContinuousClock.now + .seconds(1)
        while feed.streams > 0, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(10)) }
    }

    /// Serves until the task running it is cancelled. `onRunning` is called once the port is bound.
    public func run(onRunning: @escaping @Sendable () -> Void = {}) async throws {
        let identity = runtime.identity
        let events = runtime.events.subscribe()
        let follower = Task { [feed] in
            for await event in events {
                guard let line = JSONLines.encode(event, identity: identity) else { continue }
                switch event {
                case .exchangeRequested(let id, _, _, _, true, _):
                    var o = line.objectValue ?? [:]
                    o["deadline"] = .string(ISO8601.string(Date().addingTimeInterval(self.runtime.limits.consentTimeout)))
                    self.pending.withLock { $0[id] = .object(o) }
                    feed.send(.object(o))
                    continue
                case .exchangeCompleted(let id, _, _, _, _), .exchangeFailed(let id, _, _, _), .exchangeAbandoned(let id, _, _):
                    _ = self.pending.withLock { $0.removeValue(forKey: id) }
                default:
                    break
                }
                feed.send(line)
            }
        }
        defer { follower.cancel() }
        // While a page is open, the peers it shows are offered: each is checked when due (at most every
        // 20 s), so one that went away without a goodbye leaves the list within that time. A node with no
        // page open checks no one.
        let offering = Task { [feed, runtime] in
            while !Task.isCancelled {
                try? await Task.sleep(nanoseconds: 2_000_000_000)
                if feed.count > 0 { _ = runtime.peersToOffer() }
            }
        }
        defer { offering.cancel() }
        let router = makeRouter()
        // The server's own log stays quiet (the CLI prints what people need; requests are not logged).
        // Stopping cancels open event streams, which the server reports as errors: not for people.
        var logger = Logger(label: "nearcard.ui")
        logger.logLevel = .critical
        let app = Application(
            router: router, configuration: .init(address: .hostname(options.address, port: options.port), serverName: nil),
            onServerRunning: { _ in onRunning() }, logger: logger)
        try await app.run()
    }

    // MARK: routes

    /// Every page and API route behind the guard (token, Host, Origin, security headers): what `run` serves.
    func makeRouter() -> Router<BasicRequestContext> {
        let router = Router()
        router.add(middleware: WebGuard(token: options.token, port: options.port))
        router.add(middleware: Speaking(language: language))
        routes(router)
        return router
    }

    func routes(_ router: Router<BasicRequestContext>) {
        router.get("/") { request, _ in
            var r = Self.asset(
                self.language.page(self.language.translator(for: request), chosen: WebLanguage.chosen(request)), type: "text/html; charset=utf-8")
            // The page differs by the language the browser asks for and the one chosen on it.
            r.headers[.vary] = "Accept-Language, Cookie"
            return r
        }
        router.get("/app.js") { _, _ in Self.asset(WebAssets.script, type: "text/javascript; charset=utf-8") }
        router.get("/app.css") { _, _ in Self.asset(WebAssets.style, type: "text/css; charset=utf-8") }
        router.get("/icon.svg") { _, _ in Self.asset(WebAssets.icon, type: "image/svg+xml") }

        cardRoutes(router)
        messageRoutes(router)
        scanRoutes(router)
        addressBookRoutes(router)
        router.get("/api/state") { _, _ in Self.json(self.state()) }
        router.get("/api/events") { _, _ in self.events() }
        router.get("/api/contacts") { _, _ in
            Self.json(.array(try self.app.contacts().map(\.json)))
        }
        router.get("/api/contacts/:id") { _, context in
            let id = try context.parameters.require("id")
            guard let contact = try self.app.contact(id: id) else { return Self.error(.notFound, Phrase("no contact %1$@", id)) }
            return Self.json(contact.json)
        }
        router.get("/api/contacts/:id/photo") { _, context in
            let id = try context.parameters.require("id")
            guard let photo = try self.app.contact(id: id)?.card.photo else { return Self.error(.notFound, Phrase("no photo for contact %1$@", id)) }
            return Self.jpeg(photo)
        }
        router.get("/api/contacts/:id/vcard") { _, context in
            let id = try context.parameters.require("id")
            guard let c = try self.app.contact(id: id) else { return Self.error(.notFound, Phrase("no contact %1$@", id)) }
            return Self.download(NearcardApp.vCard(c), type: NearcardApp.ExportFormat.vcard.mediaType, name: Self.fileName(c.name) + ".vcf")
        }
        router.get("/api/export/:format") { _, context in
            guard let format = NearcardApp.ExportFormat(rawValue: try context.parameters.require("format")) else {
                return Self.error(.notFound, Phrase("export as vcard, json or graph"))
            }
            return Self.download(try self.app.export(format), type: format.mediaType, name: format.fileName)
        }
        router.delete("/api/contacts/:id") { _, context in
            let id = try context.parameters.require("id")
            guard try self.app.deleteContact(id: id) else { return Self.error(.notFound, Phrase("no contact %1$@", id)) }
            return Self.json(["ok": true])
        }
        router.post("/api/exchange") { request, _ in
            let body = try await Self.body(request)
            guard let peer = body["peer"]?.stringValue, !peer.isEmpty else { return Self.error(.badRequest, Phrase("say whom to exchange with (\"peer\")")) }
            // An address that cannot be one (a port out of range, IPv6 without brackets) is refused here,
            // as the CLI refuses it; only the search for a name or the dial goes on after the answer.
            if case .malformed(_, let reason) = PeerQuery(parsing: peer) { return Self.error(.badRequest, reason) }
            let message = body["message"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
            if let message, let problem = ProximityPayload.messageProblemPhrase(message) { return Self.error(.badRequest, problem) }
            let runtime = self.runtime
            let feed = self.feed
            // The exchange runs on; its steps come as events (the code to compare, then the outcome).
            Task {
                // A session's failure comes as exchange.failed; one before any session (nobody of that
                // name, unreachable) only here.
                do {
                    _ = try await runtime.exchange(with: peer, message: message, confirm: true)
                } catch let error as NodeError {
                    feed.send(JSONLines.line("exchange.error", ["peer": .string(peer), "reason": .string(error.message)]))
                } catch {
                    feed.send(JSONLines.line("exchange.error", ["peer": .string(peer), "reason": .string("\(error)")]))
                }
            }
            return Self.json(["ok": true], status: .accepted)
        }
        router.post("/api/requests/:id") { request, context in
            let id = try context.parameters.require("id")
            let body = try await Self.body(request)
            guard let accept = body["accept"]?.boolValue else { return Self.error(.badRequest, Phrase("say whether to accept (\"accept\": true or false)")) }
            let message = body["message"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
            // A decline may say why ("the check codes differ"): kept in this node's events; the peer reads only "the peer declined".
            let reason = body["reason"]?.stringValue.flatMap { $0.isEmpty ? nil : String($0.prefix(140)) }
            do {
                try self.runtime.answer(request: id, accept: accept, message: message, reason: reason)
            } catch let error as NodeError {
                return Self.error(error.kind == .notFound ? .notFound : .badRequest, error.phrase)
            }
            return Self.json(["ok": true])
        }
    }

    /// Who this node is, whom it sees, and the requests waiting for an answer.
    func state() -> JSONValue {
        let identity = runtime.identity
        let peers = runtime.peersToOffer().sorted { $0.instanceName.localizedCaseInsensitiveCompare($1.instanceName) == .orderedAscending }
        var me: JSONObject = ["did": .string(identity.did), "fingerprint": .string(identity.fingerprint)]
        me["name"] = runtime.displayName.map { .string($0) } ?? .null
        return [
            "me": .object(me),
            "peers": .array(peers.map(\.json)),
            "requests": .array(pending.withLock { Array($0.values) }),
            "consentTimeout": .number(runtime.limits.consentTimeout),
            "discovers": .bool(runtime.discovers),
        ]
    }

    /// Server-sent events: every node event as the JSON-lines interface writes it, one per `data:` line.
    func events() -> Response {
        let stream = feed.subscribe()
        let feed = self.feed
        let body = ResponseBody { writer in
            feed.streaming(+1)
            defer { feed.streaming(-1) }
            try await writer.write(ByteBuffer(string: ": nearcard\n\n"))
            for await line in stream {
                try await writer.write(ByteBuffer(string: "data: \(line.compactText)\n\n"))
            }
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: [.contentType: "text/event-stream"], body: body)
    }

    // MARK: responses

    static func asset(_ text: String, type: String) -> Response {
        Response(status: .ok, headers: [.contentType: type], body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    /// A file to save (Content-Disposition: attachment).
    static func download(_ text: String, type: String, name: String) -> Response {
        var r = asset(text, type: type)
        r.headers[.contentDisposition] = "attachment; filename=\"\(name)\""
        return r
    }

    /// A contact's name as a file name: letters, digits, spaces, dots and dashes only.
    static func fileName(_ name: String) -> String {
        let kept = String(name.unicodeScalars.filter { CharacterSet.alphanumerics.contains($0) || " .-_".unicodeScalars.contains($0) }.prefix(60))
        return kept.trimmingCharacters(in: .whitespaces).isEmpty ? "contact" : kept
    }

    static func json(_ value: JSONValue, status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: value.compactText)))
    }

    /// `{"error": …}`: why, in the request's language (`WebLanguage.current`).
    static func error(_ status: HTTPResponse.Status, _ why: Phrase) -> Response {
        json(["error": .string(WebLanguage.current.say(why))], status: status)
    }

    static func body(_ request: Request) async throws -> JSONValue {
        var request = request
        let buffer = try await request.collectBody(upTo: maximumBodyLength)
        guard let parsed = try? JSONParser.parse(Array(buffer.readableBytesView)), parsed.objectValue != nil else {
            throw HTTPError(.badRequest, message: "the request body must be a JSON object")
        }
        return parsed
    }
}

/// Fans JSON lines out to the open event streams.
final class Feed: Sendable {
    private let subscribers = Mutex<[Int: AsyncStream<JSONValue>.Continuation]>([:])
    private let next = Mutex(0)

    func subscribe() -> AsyncStream<JSONValue> {
        let (stream, continuation) = AsyncStream.makeStream(of: JSONValue.self, bufferingPolicy: .bufferingNewest(256))
        let id = next.withLock { n in
            n += 1
            return n
        }
        // (Checked under the subscribers' lock, as finish() sets it: no stream is added after the last finish.)
        let added = subscribers.withLock { subscribers -> Bool in
            if finished.withLock({ $0 }) { return false }
            subscribers[id] = continuation
            return true
        }
        if !added {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in _ = self?.subscribers.withLock { $0.removeValue(forKey: id) } }
        return stream
    }

    var count: Int { subscribers.withLock { $0.count } }

    /// Event-stream responses still being written (a finished feed ends them).
    private let open = Mutex(0)
    var streams: Int { open.withLock { $0 } }
    func streaming(_ change: Int) { open.withLock { $0 += change } }

    /// Ends every subscriber's stream; later subscribers get an ended one.
    func finish() {
        let all = subscribers.withLock { subscribers in
            finished.withLock { $0 = true }
            return Array(subscribers.values)
        }
        for c in all { c.finish() }
    }
    private let finished = Mutex(false)

    func send(_ line: JSONValue) {
        for c in subscribers.withLock({ Array($0.values) }) { c.yield(line) }
    }
}
