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
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? "/root"
        return NearcardHome(path: home + "/.local/share/nearcard")
    }

    public var identityPath: String { path + "/identity.json" }
    public var secretKeysPath: String { path + "/secret-keys.json" }
    public var databasePath: String { path + "/nearcard.sqlite" }
}
