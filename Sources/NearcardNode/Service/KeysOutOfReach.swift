internal import CLibC

/// A node holds its secret keys in memory for as long as it serves: such a process makes itself
/// non-dumpable (no core file; other processes of the same user can neither ptrace it nor read its
/// memory, environment or file descriptors under /proc), as ssh-agent does.
public enum KeysOutOfReach {
    /// Sets `RLIMIT_CORE` 0 and `PR_SET_DUMPABLE` 0; true when both held.
    @discardableResult
    public static func apply() -> Bool { nearcard_make_undumpable() == 0 }

    /// Whether this process can still be dumped.
    public static var isDumpable: Bool { nearcard_is_dumpable() == 1 }
}
