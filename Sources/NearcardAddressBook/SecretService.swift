public import Foundation
import NearcardProcess

/// The desktop's Secret Service (GNOME Keyring, KWallet: org.freedesktop.secrets on the session bus),
/// through libsecret's own `secret-tool` (Debian's libsecret-tools): an address book's password stored
/// and looked up by attributes, never passed on a command line (it goes through a pipe).
public enum SecretService {
    static let tool = "/usr/bin/secret-tool"
    /// How long a lookup may take (a locked keyring may ask the person to unlock it).
    static let timeout: Double = 60

    /// The item's attributes: Nearcard's, the server as it was added, the user.
    static func attributes(server: String, user: String) -> [String] {
        ["application", "nearcard", "service", "carddav", "server", server, "user", user]
    }

    /// The account's `credential` for a password kept in the Secret Service.
    public static func credential(server: String, user: String) -> String { "secret-service:" + server + " " + user }

    /// The server and user a `secret-service:` credential names.
    static func parse(_ credential: String) -> (server: String, user: String)? {
        let rest = credential.dropFirst("secret-service:".count)
        guard let space = rest.firstIndex(of: " ") else { return nil }
        return (String(rest[..<space]), String(rest[rest.index(after: space)...]))
    }

    static func available(environment: [String: String]) -> Phrase? {
        guard FileManager.default.isExecutableFile(atPath: tool) else {
            return Phrase("the Secret Service needs secret-tool (sudo apt install libsecret-tools); or use --password-file")
        }
        guard environment["DBUS_SESSION_BUS_ADDRESS"] != nil || environment["XDG_RUNTIME_DIR"] != nil else {
            return Phrase("there is no desktop session here (no D-Bus session bus) to reach the Secret Service; use --password-file or --credential")
        }
        return nil
    }

    /// Keeps `password` for the account (replacing one kept before).
    public static func store(password: [UInt8], server: String, user: String, environment: [String: String] = ProcessInfo.processInfo.environment)
        throws(AddressBookError)
    {
        if let problem = available(environment: environment) { throw AddressBookError(.credential, Phrase("%1$@: %2$@", server, problem)) }
        let label = "Nearcard: CardDAV password of \(user) at \(server)"
        let result: ChildProcess.Captured
        do {
            result = try ChildProcess.capture(
                [tool, "store", "--label", label] + attributes(server: server, user: user), environment: environment, stdin: password, timeout: timeout)
        } catch {
            throw AddressBookError(.credential, Phrase("%1$@: cannot run secret-tool: %2$@", server, "\(error)"))
        }
        guard result.code == 0 else {
            throw AddressBookError(
                .credential, Phrase("%1$@: the Secret Service did not keep the password (%2$@); use --password-file", server, firstLine(result.stderr)))
        }
    }

    /// The password kept for a `secret-service:` credential.
    static func lookup(_ credential: String, account: String, environment: [String: String]) throws(AddressBookError) -> String {
        guard let (server, user) = parse(credential) else {
            throw AddressBookError(.credential, Phrase("%1$@: the Secret Service entry is not named right; add the account again", account))
        }
        if let problem = available(environment: environment) { throw AddressBookError(.credential, Phrase("%1$@: %2$@", account, problem)) }
        let result: ChildProcess.Captured
        do {
            result = try ChildProcess.capture([tool, "lookup"] + attributes(server: server, user: user), environment: environment, timeout: timeout)
        } catch {
            throw AddressBookError(.credential, Phrase("%1$@: cannot run secret-tool: %2$@", account, "\(error)"))
        }
        let text = String(decoding: result.stdout, as: UTF8.self)
        guard result.code == 0, !text.isEmpty else {
            throw AddressBookError(
                .credential,
                Phrase(
                    "%1$@: the Secret Service holds no password for %2$@ (locked, or removed); add the account again: nearcard addressbook add %3$@ --user %2$@ --secret-service",
                    account, user, server))
        }
        return text
    }

    /// Forgets the account's password (when the account is removed); quiet when there was none.
    public static func clear(_ credential: String, environment: [String: String] = ProcessInfo.processInfo.environment) {
        guard let (server, user) = parse(credential), available(environment: environment) == nil else { return }
        _ = try? ChildProcess.capture([tool, "clear"] + attributes(server: server, user: user), environment: environment, timeout: timeout)
    }

    static func firstLine(_ bytes: [UInt8]) -> String {
        String(decoding: bytes, as: UTF8.self).split(whereSeparator: \.isNewline).first.map(String.init) ?? "no reason given"
    }
}
