import Foundation
import FuzzSupport

/// The QR scan router: any text a camera could read (envelopes, chunks, compressed envelopes, JWTs,
/// presentations) is routed to a contact, a credential, a chunk, or a one-line error.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzQR(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let text = String(decoding: Fuzz.bytes(data, size), as: UTF8.self)
    var router = ScanRouter()
    let context = ScanContext(now: Date(timeIntervalSince1970: Double(Fuzz.now)), isTrustedIssuer: { _ in true })
    // Lines are scanned one after another, as a scanner would feed chunks.
    for line in text.split(separator: "\n", maxSplits: 8) {
        _ = try? router.scan(String(line), context: context)
    }
    return 0
}
