import Foundation

#if canImport(Glibc)
    import Glibc
#endif
/// Where a user's Nearcard data lives: `--home`, else `$NEARCARD_HOME`, else
/// `$XDG_DATA_HOME/nearcard`, else `~/.local/share/nearcard`.
public struct NearcardHome: Sendable, Equatable {
    public let path: String

    public init(path: String) {
        var p = path
        while p.count > 1, p.hasSuffix("/") { p.removeLast() }
        self.path = p
    }

    /// Resolves the home directory from an explicit path or the environment.
    public static func resolve(explicit: String?, environment: [String: String]) -> NearcardHome {
        if let explicit, !explicit.isEmpty { return NearcardHome(path: explicit) }
        if let env = environment["NEARCARD_HOME"], !env.isEmpty { return NearcardHome(path: env) }
        if let xdg = environment["XDG_DATA_HOME"], xdg.hasPrefix("/") { return NearcardHome(path: xdg + "/nearcard") }
        // Without $HOME (a bare service environment), the account's own home directory, not root's.
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? accountHome ?? "/"
        return NearcardHome(path: home + "/.local/share/nearcard")
    }

    /// The running account's home directory from the password database.
    static var accountHome: String? {
        guard let entry = getpwuid(geteuid()), let dir = entry.pointee.pw_dir else { return nil }
        let path = String(cString: dir)
        return path.isEmpty ? nil : path
    }

    public var identityPath: String { path + "/identity.json" }
    public var secretKeysPath: String { path + "/secret-keys.json" }
    public var databasePath: String { path + "/nearcard.sqlite" }
}

#if canImport(Glibc)
    import Glibc
#endif

extension NearcardHome {
    /// Makes an existing home private: a home that group or others can reach is tightened to 0700
    /// (returned: the notice to show), and the database's files (which SQLite made under the umask
    /// of its day) to 0600. Key files are not: one others could read is refused where it is read, as
    /// ssh refuses such a key. A home owned by another user is refused, untouched. Nothing happens when
    /// there is no home yet (it is made 0700), nor to a directory that holds no Nearcard files (a
    /// mistyped `--home ~` is not a home to lock down; the command then says there is no identity).
    public func tighten() throws(StoreError) -> String? {
        var st = stat()
        guard lstat(path, &st) == 0 else { return nil }
        guard st.st_mode & S_IFMT == S_IFDIR else {
            throw StoreError(.io, Phrase("%1$@ is not a directory; give --home a directory", path))
        }
        if st.st_uid != geteuid() && geteuid() != 0 {
            throw StoreError(.io, Phrase("%1$@ belongs to another user (uid %2$@); use a home of your own (--home DIR)", path, String(st.st_uid)))
        }
        let nearcardFiles = [identityPath, secretKeysPath, databasePath]
        guard nearcardFiles.contains(where: { access($0, F_OK) == 0 }) else { return nil }
        var notice: String? = nil
        if st.st_mode & 0o077 != 0 {
            guard chmod(path, 0o700) == 0 else {
                throw StoreError(
                    .io,
                    Phrase(
                        "%1$@ can be reached by other users (mode %2$@) and cannot be tightened: %3$@", path, String(st.st_mode & 0o777, radix: 8),
                        String(cString: strerror(errno))))
            }
            notice = "\(path) could be reached by other users (mode \(String(st.st_mode & 0o777, radix: 8))); it is 0700 now"
        }
        for file in (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [] where file.hasPrefix("nearcard.sqlite") {
            FileIO.takeAwayGroupAndOthers(path + "/" + file, owner: st.st_uid)
        }
        return notice
    }
}
