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
    public let message: String
    /// The exact command (or step) that fixes it; nil when nothing needs fixing.
    public let fix: String?

    package init(_ name: String, _ status: Status, _ message: String, fix: String? = nil) {
        self.name = name
        self.status = status
        self.message = message
        self.fix = fix
    }

    /// `{"check", "status", "message", "fix"}` (`nearcard doctor --json`).
    public var json: JSONValue {
        ["check": .string(name), "status": .string(status.rawValue), "message": .string(message), "fix": fix.map { .string($0) } ?? .null]
    }
}
