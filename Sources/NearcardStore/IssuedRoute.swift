public import Foundation

/// A route we issued to a contact in an exchange: the mailbox token it holds.
public struct IssuedRoute: Sendable, Equatable {
    public var mailboxToken: [UInt8]
    public var contactDID: String
    public var issuedAt: Date
    public var expiresAt: Date

    public init(mailboxToken: [UInt8], contactDID: String, issuedAt: Date, expiresAt: Date) {
        self.mailboxToken = mailboxToken
        self.contactDID = contactDID
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
    }
}
