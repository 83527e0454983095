public import NearcardCrypto

/// One finding of `nearcard doctor`: what was checked, how it stands, and the command that fixes it.
public struct DoctorCheck: Sendable, Equatable {
    public enum Status: String, Sendable {
        /// Works.
        case ok
        /// Works, but something may bite (another user can read the home, an interface left out).
        case warning
        /// Would stop an exchange.
        case problem
        /// Not checked: something it needs failed first.
        case skipped
    }

    /// Which check: `home`, `identity`, `database`, `clock`, `addressbook` (one per CardDAV account), `dbus`,
    /// `avahi`, `privacy`, `interfaces`, `port`, `announce`, `tcp`, `mdns`.
    public let name: String
    public let status: Status
    /// The finding in English (`phrase.english`): what `--json` says.
    public let message: String
    /// The exact command (or step) that fixes it, in English; nil when nothing needs fixing.
    public let fix: String?
    /// The finding, to be said in the person's language.
    public let phrase: Phrase
    /// The fix, to be said in the person's language (a bare command is a verbatim phrase).
    public let fixPhrase: Phrase?

    package init(_ name: String, _ status: Status, _ phrase: Phrase, fix: Phrase? = nil) {
        self.name = name
        self.status = status
        self.message = phrase.english
        self.fix = fix?.english
        self.phrase = phrase
        self.fixPhrase = fix
    }

    /// Two findings are the same when their names, statuses and English sentences are.
    public static func == (a: Self, b: Self) -> Bool {
        a.name == b.name && a.status == b.status && a.message == b.message && a.fix == b.fix
    }

    /// `{"check", "status", "message", "fix"}` (`nearcard doctor --json`).
    public var json: JSONValue {
        ["check": .string(name), "status": .string(status.rawValue), "message": .string(message), "fix": fix.map { .string($0) } ?? .null]
    }
}
