import NearcardCrypto

#if canImport(Glibc)
    import Glibc
#endif

/// Where passphrases come from: a file (`--passphrase-file`, `NEARCARD_PASSPHRASE_FILE`) or a
/// prompt on the controlling terminal with echo off. Passphrases live in `SecureBytes` only.
enum Passphrase {
    /// The longest passphrase accepted.
    static let maximumLength = 1024

    /// Reads a passphrase file: its first line (without the newline), which must not be empty.
    static func read(file path: String) throws -> SecureBytes {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw CLIError(.malformedInput, t("cannot read passphrase file %1$@: %2$@", path, String(cString: strerror(errno)))) }
        defer { close(fd) }
        // As ssh refuses a key others can read: a passphrase others can read protects nothing.
        var st = stat()
        if fstat(fd, &st) == 0, st.st_mode & 0o077 != 0 {
            throw CLIError(
                .identity, t("passphrase file %1$@ can be read by other users (mode %2$@); run: chmod 600 %1$@", path, String(st.st_mode & 0o777, radix: 8)))
        }
        var buf = [UInt8](repeating: 0, count: maximumLength + 2)
        defer { buf.wipe() }
        var total = 0
        while total < buf.count {
            let n = Glibc.read(fd, &buf[total], buf.count - total)
            if n < 0 {
                if errno == EINTR { continue }
                throw CLIError(.malformedInput, t("cannot read passphrase file %1$@", path))
            }
            if n == 0 { break }
            total += n
        }
        var end = buf[0..<total].firstIndex(of: UInt8(ascii: "\n")) ?? total
        if end > 0, buf[end - 1] == UInt8(ascii: "\r") { end -= 1 }
        guard end <= maximumLength else { throw CLIError(.malformedInput, t("the passphrase in %1$@ is longer than %2$@ bytes", path, String(maximumLength))) }
        guard end > 0 else { throw CLIError(.malformedInput, t("passphrase file %1$@ is empty; put the passphrase on its first line", path)) }
        return SecureBytes(buf[0..<end])
    }

    /// Asks on /dev/tty with echo off; nil when there is no terminal to ask on.
    static func prompt(_ text: String) -> SecureBytes? {
        let fd = open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var saved = termios()
        guard tcgetattr(fd, &saved) == 0 else { return nil }
        var quiet = saved
        quiet.c_lflag &= ~tcflag_t(ECHO)
        _ = tcsetattr(fd, TCSAFLUSH, &quiet)
        defer {
            _ = tcsetattr(fd, TCSAFLUSH, &saved)
            _ = write(fd, "\n", 1)
        }
        _ = text.withCString { write(fd, $0, strlen($0)) }
        var line = [UInt8]()
        defer { line.wipe() }
        var c: UInt8 = 0
        while line.count <= maximumLength {
            let n = Glibc.read(fd, &c, 1)
            if n < 0, errno == EINTR { continue }
            if n <= 0 || c == UInt8(ascii: "\n") { break }
            line.append(c)
        }
        c = 0
        return SecureBytes(line)
    }

    /// The systemd credential a service's passphrase comes in (`LoadCredential=nearcard-passphrase:FILE`).
    static let credentialName = "nearcard-passphrase"

    /// The passphrase for a sealed identity: `NEARCARD_PASSPHRASE_FILE`, else the systemd credential
    /// `nearcard-passphrase` (`$CREDENTIALS_DIRECTORY`), else a terminal prompt.
    static func forUnlocking(path: String, environment: [String: String]) throws -> SecureBytes? {
        if let file = environment["NEARCARD_PASSPHRASE_FILE"], !file.isEmpty { return try read(file: file) }
        if let dir = environment["CREDENTIALS_DIRECTORY"], !dir.isEmpty, access(dir + "/" + credentialName, F_OK) == 0 {
            return try read(file: dir + "/" + credentialName)
        }
        guard let answer = prompt(t("Passphrase for %1$@: ", path)) else {
            throw CLIError(
                .identity,
                t("the identity's keys are sealed with a passphrase and there is no terminal to ask on; set NEARCARD_PASSPHRASE_FILE to a file holding it"))
        }
        return answer
    }
}
