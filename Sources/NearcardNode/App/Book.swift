public import Foundation
public import NearcardCrypto
public import NearcardModel
package import NearcardStore

/// The book as a face sees it: the card and what it shares, contacts and their history, messages,
/// trust, credentials, address-book accounts. What a face may read or change, and nothing that is
/// the node's alone (an exchange's record and settlement, the mail queue's claims, the presence
/// key's reading): those stay `package` on the store. Every failure is a `NodeError` whose kind
/// decides a face's exit code or status; its message is the store's own line (what failed, what
/// to do).
///
/// A face opens one through `Home.openBook` when no node runs on the home; a running node's is its
/// `NearcardApp.book`.
public final class Book: Sendable {
    package let database: NearcardDatabase

    package init(_ database: NearcardDatabase) { self.database = database }

    /// One store call, its failure as a node error.
    @discardableResult
    func call<T>(_ body: () throws(StoreError) -> T) throws(NodeError) -> T {
        do { return try body() } catch { throw NodeError(book: error) }
    }

    /// The store as a person names it: the SQLite file, or the PostgreSQL URL without its password.
    public var location: String { database.location.description }
    /// A PostgreSQL book a fleet shares (not this node's SQLite file).
    public var isShared: Bool { database.isShared }
    /// Closes the store's connections.
    public func close() { database.close() }
    /// Folds the write-ahead log into the file, so a clean stop leaves none behind.
    public func compact() { database.compact() }
    /// SQLite's or PostgreSQL's own check of the store ("ok" when sound).
    public func integrityCheck() throws(NodeError) -> String { try call { () throws(StoreError) in try database.integrityCheck() } }

    // MARK: the card

    public func myCard() throws(NodeError) -> MyCard? { try call { () throws(StoreError) in try database.myCard() } }
    @discardableResult
    public func saveMyCard(_ card: Card) throws(NodeError) -> MyCard { try call { () throws(StoreError) in try database.saveMyCard(card) } }
    public func sharingPolicy() throws(NodeError) -> SharingPolicy { try call { () throws(StoreError) in try database.sharingPolicy() } }
    public func saveSharingPolicy(_ policy: SharingPolicy) throws(NodeError) {
        try call { () throws(StoreError) in try database.saveSharingPolicy(policy) }
    }
    /// The group proof every exchange carries (a Semaphore membership, `card set --issuer-proof`).
    public func issuerProof() throws(NodeError) -> String? { try call { () throws(StoreError) in try database.issuerProof() } }
    public func setIssuerProof(_ proof: String?) throws(NodeError) { try call { () throws(StoreError) in try database.setIssuerProof(proof) } }
    public func commonContactsEnabled() throws(NodeError) -> Bool { try call { () throws(StoreError) in try database.commonContactsEnabled() } }
    public func setCommonContacts(enabled: Bool) throws(NodeError) {
        try call { () throws(StoreError) in try database.setCommonContacts(enabled: enabled) }
    }
    /// A new presence key (the old one recognised by no contact from now on); its public half.
    @discardableResult
    public func rotatePresenceKey() throws(NodeError) -> [UInt8] { try call { () throws(StoreError) in try database.rotatePresenceKey() } }

    // MARK: contacts

    public func contacts() throws(NodeError) -> [Contact] { try call { () throws(StoreError) in try database.contacts() } }
    public func contact(id: String) throws(NodeError) -> Contact? { try call { () throws(StoreError) in try database.contact(id: id) } }
    public func contact(did: String) throws(NodeError) -> Contact? { try call { () throws(StoreError) in try database.contact(did: did) } }
    /// The one contact a reference names (a whole name, 4+ characters of its id, a DID); none or
    /// several is a `notFound` naming them (docs/DECISIONS.md, one matcher).
    public func findContact(_ reference: String) throws(NodeError) -> Contact {
        try call { () throws(StoreError) in try database.findContact(reference) }
    }
    @discardableResult
    public func deleteContact(id: String) throws(NodeError) -> Bool { try call { () throws(StoreError) in try database.deleteContact(id: id) } }
    /// Keeps a card that arrived outside an exchange (a QR code, `contacts add`, `contacts import`),
    /// by the one rule for people already in the book.
    public func keep(_ incoming: Contact, payloadJSON: String? = nil, credential: StoredCredential? = nil, presenceKey: [UInt8]? = nil) throws(NodeError)
        -> KeptContact
    {
        try call { () throws(StoreError) in try database.keep(incoming, payloadJSON: payloadJSON, credential: credential, presenceKey: presenceKey) }
    }
    /// The exchanges recorded, oldest first; `contactDID` narrows to one contact.
    public func exchanges(contactDID: String? = nil) throws(NodeError) -> [ExchangeRecord] {
        try call { () throws(StoreError) in try database.exchanges(contactDID: contactDID) }
    }
    public func withdrawnExchanges(contactDID: String? = nil, anonymousOnly: Bool = false) throws(NodeError) -> [WithdrawnExchange] {
        try call { () throws(StoreError) in try database.withdrawnExchanges(contactDID: contactDID, anonymousOnly: anonymousOnly) }
    }
    /// Contacts whose exchange the peer has not yet confirmed keeping (docs/PROTOCOL.md §11).
    public func unconfirmedContactDIDs() throws(NodeError) -> Set<String> { try call { () throws(StoreError) in try database.unconfirmedContactDIDs() } }
    /// The contacts held in common with `did`, as the last exchange with them found (nil: never asked).
    public func commonContacts(with did: String) throws(NodeError) -> [String]? {
        try call { () throws(StoreError) in try database.commonContacts(with: did) }
    }
    /// The contacts whose presence key this home holds (who recognises whom on the LAN).
    public func contactPresenceKeys() throws(NodeError) -> [ContactPresence] { try call { () throws(StoreError) in try database.contactPresenceKeys() } }
    /// A contact as `contacts show --json` prints it (and a webhook posts it).
    public static func contactDocument(_ contact: Contact, exchanges: [ExchangeRecord]) -> JSONValue {
        NearcardDatabase.contactDocument(contact, exchanges: exchanges)
    }

    // MARK: messages

    public func inbox(contactDID: String? = nil) throws(NodeError) -> [InboxItem] {
        try call { () throws(StoreError) in try database.inbox(contactDID: contactDID) }
    }
    public func outbox(all: Bool = false) throws(NodeError) -> [OutboxItem] { try call { () throws(StoreError) in try database.outbox(all: all) } }
    public func outboxItem(id: String) throws(NodeError) -> OutboxItem? { try call { () throws(StoreError) in try database.outboxItem(id: id) } }
    /// Deletes received messages (one by id, all from a DID, or all); how many.
    @discardableResult
    public func deleteReceived(id: String? = nil, fromDID: String? = nil) throws(NodeError) -> Int {
        try call { () throws(StoreError) in try database.deleteReceived(id: id, fromDID: fromDID) }
    }

    // MARK: trust

    public func trustedGroups() throws(NodeError) -> [TrustedGroup] { try call { () throws(StoreError) in try database.trustedGroups() } }
    public func trustedGroup(root: String) throws(NodeError) -> TrustedGroup? { try call { () throws(StoreError) in try database.trustedGroup(root: root) } }
    public func trustGroup(root: String, name: String, depth: Int?) throws(NodeError) {
        try call { () throws(StoreError) in try database.trustGroup(root: root, name: name, depth: depth) }
    }
    @discardableResult
    public func untrustGroup(root: String) throws(NodeError) -> Bool { try call { () throws(StoreError) in try database.untrustGroup(root: root) } }
    public func addTrustAnchor(_ did: String, note: String? = nil) throws(NodeError) {
        try call { () throws(StoreError) in try database.addTrustAnchor(did, note: note) }
    }
    @discardableResult
    public func removeTrustAnchor(_ did: String) throws(NodeError) -> Bool { try call { () throws(StoreError) in try database.removeTrustAnchor(did) } }
    public func trustAnchors() throws(NodeError) -> [(did: String, addedAt: Date, note: String?)] {
        try call { () throws(StoreError) in try database.trustAnchors() }
    }
    public func credentials() throws(NodeError) -> [StoredCredential] { try call { () throws(StoreError) in try database.credentials() } }
    public func credential(_ reference: String) throws(NodeError) -> StoredCredential {
        try call { () throws(StoreError) in try database.credential(reference) }
    }

    // MARK: address books

    public func addressBooks() throws(NodeError) -> [AddressBookAccount] { try call { () throws(StoreError) in try database.addressBooks() } }
    public func saveAddressBook(_ account: AddressBookAccount) throws(NodeError) {
        try call { () throws(StoreError) in try database.saveAddressBook(account) }
    }
    @discardableResult
    public func removeAddressBook(url: String) throws(NodeError) -> Bool { try call { () throws(StoreError) in try database.removeAddressBook(url: url) } }
    public func addressBookCards(book: String) throws(NodeError) -> [AddressBookCard] {
        try call { () throws(StoreError) in try database.addressBookCards(book: book) }
    }
    public func addressBookCards(contactID: String) throws(NodeError) -> [AddressBookCard] {
        try call { () throws(StoreError) in try database.addressBookCards(contactID: contactID) }
    }

    // MARK: moving the book

    /// Copies this book into `target` (`store migrate`), table by table with each table's checksum.
    public func copy(to target: Book, merge: Bool, progress: (String) -> Void = { _ in }) throws(NodeError) -> [StoreCopyTable] {
        try call { () throws(StoreError) in try database.copy(to: target.database, merge: merge, progress: progress) }
    }
}
