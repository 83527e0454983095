import ArgumentParser
import Foundation
import NearcardCrypto
import NearcardModel
import NearcardNode
import NearcardSemaphore

/// Explains the group proof a stored contact's card carried: the verdict made when it arrived (a
/// contact stored before verdicts were kept shows its group, if it proved one).
enum GroupNote {
    static func note(for contact: Contact) -> String? {
        contact.groupVerdict ?? contact.memberOf.map { t("a member of the trusted group “%1$@” (Semaphore proof verified)", $0) }
    }
}
