import Foundation
import NearcardCrypto
import NearcardDiscovery
import NearcardModel
import NearcardNode
import NearcardStore

#if canImport(Glibc)
    import Glibc
#endif

/// How a contact from an exchange is shown.
enum ExchangeDisplay {
    static func completed(_ contact: Contact, myMessage: String?, theirMessage: String?, database: NearcardDatabase) {
        Console.out("✔ Exchanged cards with \(contact.name) — contact \(contact.id.prefix(8)) (\(contact.verificationStatus.rawValue))")
        ContactDisplay.show(contact, database: database)
    }
}
