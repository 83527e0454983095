public import Foundation
public import NearcardAddressBook
public import NearcardModel
import NearcardStore

extension Book {
    // MARK: messages

    /// Removes delivered and failed messages (queued ones stay); how many.
    @discardableResult
    public func clearOutbox() throws(NodeError) -> Int { try call { () throws(StoreError) in try database.clearOutbox() } }

    // MARK: a bot's policy

    /// Counts `did`'s acceptances and everyone's within a bot policy's windows and, under both limits,
    /// records this one, serialised across a fleet sharing the book.
    public func admitAcceptance(did: String, perPeer: AcceptanceLimit?, overall: AcceptanceLimit?, now: Date = Date()) throws(NodeError)
        -> AcceptanceVerdict
    {
        try call { () throws(StoreError) in try database.admitAcceptance(did: did, perPeer: perPeer, overall: overall, now: now) }
    }

    /// Whether `did` is a trust anchor, or issued a credential that one vouches for.
    public func isTrustedIssuer(_ did: String) throws(NodeError) -> Bool { try call { () throws(StoreError) in try database.isTrustedIssuer(did) } }

    // MARK: address books

    /// What the next sync of `account` has to do, told without the server.
    public func pending(_ account: AddressBookAccount) throws(NodeError) -> AddressBookPending {
        try call { () throws(StoreError) in try AddressBookSync.pending(account, database: database) }
    }

    /// The collection `serverURL` leads to, checked writable for `username` and not one of this book's
    /// accounts under another address (`AddressBookSync.connect`); its URL.
    public func connectAddressBook(serverURL: String, username: String, credential: String) async throws(AddressBookError) -> String {
        let configured: [AddressBookAccount]
        do { configured = try database.addressBooks() } catch { throw AddressBookError(.store, error.message) }
        return try await AddressBookSync.connect(
            serverURL: serverURL, username: username, credential: credential, configured: configured, database: database)
    }

    /// Cards deleted in an address book (their contacts kept) or changed on both sides, in every account
    /// (`book`: one); `unsaid`: only those the person has not been told yet as they now stand.
    public func addressBookNotices(book: String? = nil, unsaid: Bool) throws(NodeError) -> [AddressBookNotice] {
        try call { () throws(StoreError) in try database.addressBookNotices(book: book, unsaid: unsaid) }
    }

    /// Records that a face said these to the person: each is said once while it stands.
    public func addressBookNoticesSaid(_ notices: [AddressBookNotice]) throws(NodeError) {
        try call { () throws(StoreError) in try database.addressBookNoticesSaid(notices) }
    }

    /// One sync of `account` here (a running node's own passes are not told; a face asks the node when
    /// one runs). The pass is recorded on the account.
    public func sync(_ account: AddressBookAccount, mirrorDeletes: Bool) async -> Result<AddressBookSyncReport, AddressBookError> {
        do { return .success(try await AddressBookSync.sync(account, database: database, mirrorDeletes: mirrorDeletes)) } catch { return .failure(error) }
    }
}
