public import Foundation
public import NearcardCrypto

/// A verifiable credential (a VC-JWT) as read and checked: from a QR code or a presentation, and as
/// the store keeps it.
public struct Credential: Sendable, Equatable {
    public let id: String
    public let issuer: String
    public let subject: String?
    public let types: [String]
    public let jwt: String
    public let issuedAt: Date?
    public let expiresAt: Date?
    public let status: VerificationStatus
    public let reason: String

    public init(
        id: String, issuer: String, subject: String?, types: [String], jwt: String, issuedAt: Date?, expiresAt: Date?,
        status: VerificationStatus, reason: String
    ) {
        self.id = id
        self.issuer = issuer
        self.subject = subject
        self.types = types
        self.jwt = jwt
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
        self.status = status
        self.reason = reason
    }

    public var json: JSONValue { json(importedAt: nil) }

    /// With `importedAt` when the store holds it (placed before the JWT).
    public func json(importedAt: Date?) -> JSONValue {
        func date(_ d: Date?) -> JSONValue { d.map { .string(ISO8601.string($0)) } ?? .null }
        var o: JSONObject = [
            "id": .string(id), "issuer": .string(issuer), "subject": subject.map { .string($0) } ?? .null,
            "types": .array(types.map { .string($0) }), "issuedAt": date(issuedAt), "expiresAt": date(expiresAt),
            "status": .string(status.rawValue), "reason": .string(reason),
        ]
        if let importedAt { o["importedAt"] = date(importedAt) }
        o["jwt"] = .string(jwt)
        return .object(o)
    }
}
