public import NearcardCrypto

#if canImport(Glibc)
    public import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Small POSIX file helpers with the guarantees key files and the database directory need.
public enum FileIO {
    static func errnoText(_ code: Int32 = errno) -> String { String(cString: strerror(code)) }

    public static func exists(_ path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) == 0
    }

    /// Creates `path` (and missing parents) as directories; new ones get `mode`.
    package static func makeDirectory(_ path: String, mode: mode_t = 0o700) throws(StoreError) {
        var st = stat()
        if stat(path, &st) == 0 {
            guard st.st_mode & S_IFMT == S_IFDIR else { throw StoreError(.io, Phrase("%1$@ exists and is not a directory", path)) }
            return
        }
        let parent = directoryName(path)
        if parent != path, !parent.isEmpty { try makeDirectory(parent, mode: 0o755) }
        if mkdir(path, mode) != 0, errno != EEXIST {
            throw StoreError(.io, Phrase("cannot create directory %1$@: %2$@", path, errnoText()))
        }
        _ = chmod(path, mode)
    }

    package static func directoryName(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// Writes `bytes` to `path` atomically: a new temporary file (mode `mode`) in the same directory,
    /// written, fsync'd, then moved into place; the directory is fsync'd too. With `replace: false`
    /// the move is a `link`, which fails rather than overwrite an existing file.
    public static func writeAtomically(_ bytes: SecureBytes, to path: String, mode: mode_t = 0o600, replace: Bool) throws(StoreError) {
        let dir = directoryName(path)
        let temp = dir + "/.\(baseName(path)).tmp-\(Hex.encode(Sodium.randomBytes(6)))"
        let fd = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode)
        // Named by the file asked for: the temporary name is ours, not the user's.
        guard fd >= 0 else { throw StoreError(.io, Phrase("cannot create %1$@: %2$@", path, errnoText())) }
        var ok = false
        defer {
            if !ok { unlink(temp) }
        }
        _ = fchmod(fd, mode)
        let writeError: Int32? = bytes.withUnsafeBytes { buf in
            var offset = 0
            while offset < buf.count {
                let n = write(fd, buf.baseAddress! + offset, buf.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                offset += n
            }
            return nil
        }
        if let writeError {
            close(fd)
            throw StoreError(.io, Phrase("cannot write %1$@: %2$@", path, errnoText(writeError)))
        }
        guard fsync(fd) == 0 else {
            let e = errno
            close(fd)
            throw StoreError(.io, Phrase("cannot sync %1$@: %2$@", path, errnoText(e)))
        }
        close(fd)
        if replace {
            guard rename(temp, path) == 0 else { throw StoreError(.io, Phrase("cannot move %1$@ to %2$@: %3$@", temp, path, errnoText())) }
        } else {
            guard link(temp, path) == 0 else {
                if errno == EEXIST { throw StoreError(.identityExists, Phrase("%1$@ already exists; it was not overwritten", path)) }
                throw StoreError(.io, Phrase("cannot create %1$@: %2$@", path, errnoText()))
            }
            unlink(temp)
        }
        ok = true
        let dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dfd >= 0 {
            _ = fsync(dfd)
            close(dfd)
        }
    }

    /// Reads a small regular file (not following a symlink at the last component), at most `limit` bytes.
    /// The mode a new file gets from `open(…, 0666)` under the process's umask (0600 under the 077
    /// every Nearcard process sets at start).
    public static func modeFollowingUmask() -> mode_t {
        let current = umask(0o077)
        umask(current)
        return 0o666 & ~current
    }

    /// With `privateOnly`, refuses a file that group or others can read or write. `what` names the file
    /// in errors ("key file", "password file").
    public static func readSmallFile(_ path: String, limit: Int, privateOnly: Bool = false, what: String = "key file") throws(StoreError) -> SecureBytes {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else {
            let e = errno
            if e == ENOENT { throw StoreError(.noIdentity, Phrase("%1$@ does not exist", path)) }
            if e == ELOOP {
                // Where it points, so the person can give that instead.
                var target = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
                let resolved =
                    realpath(path, &target) != nil ? String(decoding: target.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : nil
                if let resolved {
                    throw StoreError(
                        .keyFile,
                        Phrase(
                            "%1$@ is a symbolic link; Nearcard reads a %2$@ only directly (a link could be pointed elsewhere later): give the file itself, %3$@",
                            path, what, resolved))
                }
                throw StoreError(
                    .keyFile, Phrase("%1$@ is a symbolic link; Nearcard reads a %2$@ only directly (a link could be pointed elsewhere later)", path, what))
            }
            throw StoreError(.io, Phrase("cannot open %1$@: %2$@", path, errnoText(e)))
        }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw StoreError(.io, Phrase("cannot stat %1$@: %2$@", path, errnoText())) }
        guard st.st_mode & S_IFMT == S_IFREG else { throw StoreError(.keyFile, Phrase("%1$@ is not a regular file", path)) }
        if privateOnly, st.st_mode & 0o077 != 0 {
            throw StoreError(.keyFile, Phrase("%1$@ can be read by other users (mode %2$@); run: chmod 600 %1$@", path, String(st.st_mode & 0o777, radix: 8)))
        }
        let size = Int(st.st_size)
        guard size <= limit else {
            throw StoreError(.keyFile, Phrase("%1$@ is %2$@ bytes, larger than the %3$@ bytes a Nearcard %4$@ can be", path, String(size), String(limit), what))
        }
        var readError: Int32?
        var total = 0
        let data = SecureBytes(count: size) { out in
            while total < size {
                let n = read(fd, out.baseAddress! + total, size - total)
                if n < 0 {
                    if errno == EINTR { continue }
                    readError = errno
                    return
                }
                if n == 0 { break }
                total += n
            }
        }
        if let readError { throw StoreError(.io, Phrase("cannot read %1$@: %2$@", path, errnoText(readError))) }
        guard total == size else { throw StoreError(.io, Phrase("%1$@ changed while being read; try again", path)) }
        return data
    }

    /// Why a file given to read could not be: "no such file", "it is a directory", or permissions.
    public static func unreadable(_ path: String) -> String {
        var st = stat()
        guard stat(path, &st) == 0 else { return errno == ENOENT ? "no such file" : String(cString: strerror(errno)).lowercased() }
        if st.st_mode & S_IFMT == S_IFDIR { return "it is a directory; give a file" }
        return access(path, R_OK) != 0 ? "this user may not read it (its permissions)" : "it cannot be read"
    }

    package static func baseName(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return path }
        return String(path[path.index(after: slash)...])
    }

    /// Clears the group and other bits of a regular file (of `owner`'s, when given), never adding any:
    /// a file its owner made read-only stays so.
    package static func takeAwayGroupAndOthers(_ path: String, owner: uid_t? = nil) {
        var st = stat()
        guard lstat(path, &st) == 0, st.st_mode & S_IFMT == S_IFREG, owner.map({ st.st_uid == $0 }) ?? true, st.st_mode & 0o077 != 0 else { return }
        _ = chmod(path, st.st_mode & 0o700)
    }

    /// The file's permission bits, or nil when it does not exist.
    public static func mode(_ path: String) -> mode_t? {
        var st = stat()
        guard lstat(path, &st) == 0 else { return nil }
        return st.st_mode & 0o7777
    }
}
