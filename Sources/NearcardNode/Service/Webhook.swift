import Foundation
import NearcardCrypto

/// Where a bot posts each completed exchange (docs/OPERATIONS.md "Webhooks"): an http(s) URL and the
/// secret its deliveries are signed with (HMAC-SHA256 over `TIMESTAMP.BODY`).
public struct Webhook: Sendable, Equatable, CustomStringConvertible {
    public let url: String
    let secret: [UInt8]

    /// The shortest secret accepted (bytes): a guessable secret signs nothing.
    public static let minimumSecretLength = 16

    public init(url: String, secret: [UInt8]) {
        self.url = url
        self.secret = secret
    }

    /// The URL only: the secret is never shown.
    public var description: String { url }

    /// The `X-Nearcard-Signature` value for `body` sent at `timestamp` (Unix seconds).
    package func signature(body: [UInt8], timestamp: Int64) -> String {
        "sha256=" + Hex.encode(HMACSHA256.authenticate(key: secret, message: Array("\(timestamp).".utf8) + body))
    }
}
