import Foundation
import Hummingbird
import NearcardControl
import NearcardCrypto
import NearcardImage
import NearcardModel
import NearcardNode
import NearcardQR
import NearcardText

/// The "My card" page's API: the card, what each exchange shares, and the card as QR codes.
extension WebUI {
    /// What the card's routes answer before there is a card (the page shows it in its language).
    static let noCard = N_("no card yet: fill in My card first")

    func cardRoutes(_ router: Router<BasicRequestContext>) {
        router.get("/api/card") { _, _ in Self.json(try self.cardState()) }
        router.put("/api/card") { request, _ in
            let body = try await Self.body(request)
            let card: Card
            do { card = try Self.card(from: body, keeping: try self.app.card().card?.photo) } catch let e as ModelError {
                return Self.error(.badRequest, e.phrase)
            }
            do throws(NodeError) { try await self.app.saveCard(card) } catch { return Self.error(.badRequest, error.phrase) }
            return Self.json(try self.cardState())
        }
        router.put("/api/sharing") { request, _ in
            let body = try await Self.body(request)
            guard let names = body["fields"]?.arrayValue?.compactMap(\.stringValue) else {
                return Self.error(.badRequest, Phrase("say which fields to share (\"fields\": [...])"))
            }
            let fields: Set<CardField>
            do { fields = try CardField.parseList(names.joined(separator: ",")) } catch let e as ModelError { return Self.error(.badRequest, e.phrase) }
            try await self.app.share(fields)
            return Self.json(try self.cardState())
        }
        // The photo (docs/PROTOCOL.md §9): the picture's bytes in, the node makes the square JPEG with
        // nothing else of the file; out, exactly what peers receive.
        router.put("/api/card/photo") { request, _ in
            var request = request
            let buffer: ByteBuffer
            do { buffer = try await request.collectBody(upTo: Photo.maximumInputBytes) } catch {
                return Self.error(.contentTooLarge, Phrase("the picture is larger than %1$@ MB", String(Photo.maximumInputBytes >> 20)))
            }
            guard var card = try self.app.card().card else { return Self.error(.notFound, Phrase(Self.noCard)) }
            do throws(ImageError) { card.photo = try Photo.make(from: Array(buffer.readableBytesView)) } catch {
                return Self.error(.badRequest, Phrase("the picture: %1$@ (give a JPEG or PNG picture)", error.phrase))
            }
            do throws(NodeError) { try await self.app.saveCard(card) } catch { return Self.error(.badRequest, error.phrase) }
            return Self.json(try self.cardState())
        }
        router.delete("/api/card/photo") { _, _ in
            guard var card = try self.app.card().card else { return Self.error(.notFound, Phrase(Self.noCard)) }
            card.photo = nil
            do throws(NodeError) { try await self.app.saveCard(card) } catch { return Self.error(.badRequest, error.phrase) }
            return Self.json(try self.cardState())
        }
        router.get("/api/card/photo") { _, _ in
            guard let photo = try self.app.card().card?.photo else { return Self.error(.notFound, Phrase("your card has no photo")) }
            return Self.jpeg(photo)
        }
        router.get("/api/card/qr") { request, _ in
            let frames: [String]
            do { frames = try self.codeFrames(request) } catch let e as HTTPError { throw e } catch {
                return Self.error(.badRequest, Phrase(verbatim: "\(error)"))
            }
            return Self.json(["frames": .number(Double(frames.count))])
        }
        router.get("/api/card/qr.svg") { request, _ in try self.code(request, png: false) }
        router.get("/api/card/qr.png") { request, _ in try self.code(request, png: true) }
    }

    /// `{card, sharing, preview}`: the card, the fields every exchange discloses, and exactly what a peer receives.
    func cardState() throws -> JSONValue {
        let (mine, policy) = try app.card()
        return [
            "card": mine?.json ?? .null,
            "sharing": .array(policy.orderedFieldNames.map { .string($0) }),
            "preview": mine.map { $0.filtered(to: policy.fields).json } ?? .null,
            "fields": .array(CardField.allCases.map { .string($0.rawValue) }),
            "labels": .object(JSONObject(CardField.allCases.map { ($0.rawValue, .string($0.label)) })),
        ]
    }

    /// A photo as an image response (never cached: it changes with the card).
    static func jpeg(_ bytes: [UInt8]) -> Response {
        Response(status: .ok, headers: [.contentType: "image/jpeg", .cacheControl: "no-store"], body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    /// A card from the page's form: text fields, and social profiles and skills as `card set` takes them;
    /// the photo is not the form's (it is sent on its own, `PUT /api/card/photo`), so the saved one stays.
    static func card(from body: JSONValue, keeping photo: [UInt8]? = nil) throws(ModelError) -> Card {
        // A member of the wrong type is named, not read as empty.
        for field in CardField.textFields where body[field.rawValue] != nil && body[field.rawValue] != .null && body[field.rawValue]?.stringValue == nil {
            throw ModelError(.invalidCard, "\"\(field.rawValue)\" must be a string")
        }
        for key in CardField.allCases.filter({ $0.kind != .text }).map(\.rawValue)
        where body[key] != nil && body[key] != .null
            && body[key]?.arrayValue?.allSatisfy({ $0.stringValue != nil }) != true
        {
            throw ModelError(.invalidCard, "\"\(key)\" must be a list of strings")
        }
        var card = Card(name: "")
        card.photo = photo
        for field in CardField.allCases where field.kind != .photo {
            let typed = body[field.rawValue].map { $0.arrayValue?.compactMap(\.stringValue) ?? $0.stringValue.map { [$0] } ?? [] } ?? []
            try card.set(field, typed: typed)
        }
        try card.validate()
        try card.checkShapes { $0.label }
        return card
    }

    /// The QR frames of the card in the requested format (`format`: plaintext, zk, did-signed).
    func codeFrames(_ request: Request) throws -> [String] {
        guard try app.card().card != nil else { throw HTTPError(.notFound, message: Self.noCard) }
        let name = request.uri.queryParameters.get("format") ?? "zk"
        guard let format = CardCode.Format(rawValue: name) else { throw HTTPError(.badRequest, message: "no QR format \(name)") }
        let now = Date()
        let payload = try app.cardCode(format, now: now, until: now.addingTimeInterval(24 * 3600))
        return try QRFrames.plan(payload)
    }

    func code(_ request: Request, png: Bool) throws -> Response {
        let frames: [String]
        do { frames = try codeFrames(request) } catch let e as HTTPError { throw e } catch { return Self.error(.badRequest, Phrase(verbatim: "\(error)")) }
        let frame = request.uri.queryParameters.get("frame")
        guard let index = frame.map({ Int($0) }) ?? 0 else { return Self.error(.badRequest, Phrase("frame must be a number: 0 for the first")) }
        guard frames.indices.contains(index) else {
            return Self.error(.notFound, Phrase("no frame %1$@ (the code has %2$@)", String(index), String(frames.count)))
        }
        let matrix = try QRMatrix.encode(Array(frames[index].utf8))
        if png {
            var r = Response(status: .ok, headers: [.contentType: "image/png"], body: .init(byteBuffer: ByteBuffer(bytes: try matrix.png())))
            r.headers[.contentDisposition] = "attachment; filename=\"card-\(index + 1).png\""
            return r
        }
        return Self.asset(matrix.svg(), type: "image/svg+xml")
    }
}
