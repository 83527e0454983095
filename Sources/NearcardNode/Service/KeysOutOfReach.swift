internal import CLibC
public import NearcardCrypto

/// A node holds its secret keys in memory for as long as it serves: such a process makes itself
/// non-dumpable (no core file; other processes of the same user can neither ptrace it nor read its
/// memory, environment or file descriptors under /proc), as ssh-agent does, and keeps the keys in
/// locked memory (`SecureMemory`: never swapped out, fenced by guard pages).
public enum KeysOutOfReach {
    /// Sets `RLIMIT_CORE` 0 and `PR_SET_DUMPABLE` 0, and prepares locked memory for the keys; true
    /// when the process is non-dumpable. Call before loading the keys.
    @discardableResult
    public static func apply() -> Bool {
        SecureMemory.enable()
        return nearcard_make_undumpable() == 0
    }

    /// The keys as a serving node keeps them: in locked memory once `apply()` prepared it.
    public static func hold(_ keys: IdentityKeys) -> IdentityKeys {
        guard SecureMemory.isEnabled, let locked = try? keys.locked() else { return keys }
        return locked
    }

    /// Whether this process can still be dumped.
    package static var isDumpable: Bool { nearcard_is_dumpable() == 1 }
}
