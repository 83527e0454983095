public import Foundation
import NearcardProcess
import NearcardSimulation

#if canImport(Glibc)
    import Glibc
#endif

/// The people the tests play are ordinary users, never root. When the test run has root (as CI here
/// does), every `nearcard` the tests start runs as a dedicated unprivileged account, created on first use
/// (or reused) and entered with `setpriv` through a small wrapper; without root the tests already run
/// unprivileged and start the binary directly. Root remains for building the stage: namespaces, daemons,
/// accounts.
public enum TestAccount {
    /// The account the tests' nodes run as.
    public static let name = "nearcard-test"
    /// Another account, for checking that one user cannot read another's files.
    public static let stranger = "nobody"

    public static var isRoot: Bool { geteuid() == 0 }

    /// uid and gid of `user`, or nil when there is no such account.
    public static func ids(_ user: String) -> (uid: uid_t, gid: gid_t, home: String)? {
        guard let pw = getpwnam(user) else { return nil }
        return (pw.pointee.pw_uid, pw.pointee.pw_gid, String(cString: pw.pointee.pw_dir))
    }

    /// Creates the account unless it exists (a concurrent creator is fine: the account then exists).
    static func ensure(_ user: String) throws -> (uid: uid_t, gid: gid_t, home: String) {
        if let found = ids(user) { return found }
        let r = try ChildProcess.capture(
            ["/usr/sbin/useradd"] + [
                "--create-home", "--user-group", "--shell", "/bin/sh",
                "--comment", "Nearcard tests (unprivileged)", user,
            ],
            environment: ProcessInfo.processInfo.environment)
        guard let found = ids(user) else {
            throw LabError("cannot create the test account \(user): \(String(decoding: r.stderr, as: UTF8.self))")
        }
        return found
    }

    /// The command that runs `nearcard` for the tests: a wrapper that drops to the test account when
    /// we are root (the binary is copied next to it if the account cannot reach the build folder),
    /// the binary itself otherwise. Made once per test process and removed when it exits.
    static let nearcardCommand: String = {
        let binary = CLI.builtExecutable.path
        guard isRoot else { return binary }
        do {
            let account = try ensure(name)
            let dir = "/tmp/nearcard-tests-bin-\(getpid())"
            try? FileManager.default.removeItem(atPath: dir)
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
            var target = binary
            let probe = try ChildProcess.capture(
                ["/usr/bin/setpriv"] + dropArguments(account) + ["/usr/bin/test", "-x", binary],
                environment: ProcessInfo.processInfo.environment)
            if probe.code != 0 {
                target = dir + "/nearcard.bin"
                try FileManager.default.copyItem(atPath: binary, toPath: target)
                chmod(target, 0o755)
            }
            let wrapper = dir + "/nearcard"
            let script = """
                #!/bin/sh
                # Runs nearcard as the unprivileged test account (made by Tests/Support/Accounts.swift).
                HOME='\(account.home)' USER='\(name)' LOGNAME='\(name)'
                export HOME USER LOGNAME
                exec /usr/bin/setpriv \(dropArguments(account).joined(separator: " ")) '\(target)' "$@"

                """
            try script.write(toFile: wrapper, atomically: true, encoding: .utf8)
            chmod(wrapper, 0o755)
            atexit { try? FileManager.default.removeItem(atPath: "/tmp/nearcard-tests-bin-\(getpid())") }
            return wrapper
        } catch {
            fatalError("the tests run as root but cannot set up the unprivileged account \(name): \(error)")
        }
    }()

    /// setpriv's arguments to become `account` (all capabilities go with the uid change).
    static func dropArguments(_ account: (uid: uid_t, gid: gid_t, home: String)) -> [String] {
        ["--reuid=\(account.uid)", "--regid=\(account.gid)", "--init-groups", "--"]
    }

    /// Runs `program` as `user` (root only): to check what another account can and cannot do.
    public static func run(as user: String, _ program: String, _ args: [String]) throws -> CLI.Result {
        guard let account = ids(user) else { throw LabError("no account \(user)") }
        let o = try ChildProcess.capture(
            ["/usr/bin/setpriv"] + dropArguments(account) + [program] + args,
            environment: ProcessInfo.processInfo.environment)
        return CLI.Result(code: o.code, stdout: String(decoding: o.stdout, as: UTF8.self), stderr: String(decoding: o.stderr, as: UTF8.self))
    }

    /// Hands a folder the tests made to the test account, so the nodes may write there.
    public static func give(_ path: String) {
        guard isRoot, let account = try? ensure(name) else { return }
        chown(path, account.uid, account.gid)
    }

    /// The uid a running process has (from /proc), or nil when it is gone.
    public static func uid(ofProcess pid: pid_t) -> uid_t? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Uid:") }),
            let first = line.split(whereSeparator: { $0 == "\t" || $0 == " " }).dropFirst().first
        else { return nil }
        return uid_t(first)
    }
}
