import Foundation
import Hummingbird
import NearcardControl
import NearcardCrypto
import NearcardNode
import NearcardQR
import NearcardScan

/// The "Scan" page's API: an image (PNG or JPEG, as uploaded) or pasted text, read by the same router and
/// kept by the same rule as `nearcard qr scan`.
extension WebUI {
    /// The largest image taken (a phone photo is a few MB).
    public static let maximumImageLength = 16 << 20

    func scanRoutes(_ router: Router<BasicRequestContext>) {
        router.post("/api/scan") { request, _ in
            var request = request
            let type = request.headers[.contentType]?.lowercased() ?? ""
            let texts: [String]
            if type.hasPrefix("image/") {
                let buffer: ByteBuffer
                do { buffer = try await request.collectBody(upTo: Self.maximumImageLength) } catch {
                    return Self.error(.contentTooLarge, Phrase("the image is larger than %1$@ MB", String(Self.maximumImageLength >> 20)))
                }
                do { texts = try ScanSession.texts(inImage: Array(buffer.readableBytesView)) } catch let e as QRError {
                    return Self.error(.badRequest, e.phrase)
                }
            } else {
                let body = try await Self.body(request)
                texts = (body["text"]?.stringValue ?? "").split(whereSeparator: \.isNewline).map(String.init).filter { !$0.isEmpty }
                guard !texts.isEmpty else { return Self.error(.badRequest, Phrase("paste the text of a code, or drop an image")) }
            }
            var session = self.app.scanSession()
            var reports: [JSONValue] = []
            for text in texts { reports.append(Self.said(try session.scan(text).report)) }
            return Self.json(.array(reports))
        }
    }

    /// A scan's report for the page: a failed code's message in the request's language, said from its phrase.
    static func said(_ report: JSONValue) -> JSONValue {
        guard var o = report.objectValue, let phrase = o["phrase"] else { return report }
        o["phrase"] = nil
        if let p = Phrase(json: phrase) { o["message"] = .string(WebLanguage.current.say(p)) }
        return .object(o)
    }
}
