import ArgumentParser
import Foundation
import NearcardCrypto
import NearcardDiscovery
import NearcardNode

/// `nearcard doctor`: why this laptop may not see others, or they it.
struct DoctorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract: t("Check what an exchange needs here, and say how to fix what is wrong."),
        discussion: t(
            """
            One line per check: your home's permissions, the identity and the contact database, the clock, \
            the D-Bus system bus, avahi-daemon, the network interfaces discovery can use, the TCP port; then \
            an end-to-end test: a probe announced through avahi-daemon (as _nearcard-probe._tcp, which other \
            Nearcard nodes do not list), seen back, connected to at each address, and asked for by mDNS on \
            each interface (a firewall dropping UDP 5353 or the port shows here). Each problem comes with the \
            command that fixes it. Exit 0 when nothing would stop an exchange (warnings allowed), 1 when \
            something would.
            """
        ))

    @OptionGroup var global: GlobalOptions

    @Option(parsing: .unconditional, help: ArgumentHelp(t("The TCP port nearcard listen would use.")))
    var port: Int = NearcardNode.defaultPort

    @Option(name: .customLong("interface"), help: ArgumentHelp(t("Check only this interface; repeatable."), valueName: "IF"))
    var interfaces: [String] = []

    @Option(name: .customLong("exclude-interface"), help: ArgumentHelp(t("Leave out this interface; repeatable."), valueName: "IF"))
    var excluded: [String] = []

    @Option(parsing: .unconditional, help: ArgumentHelp(t("Seconds to wait for the test announcement to be seen back.")))
    var timeout: Double = 5

    @Flag(help: ArgumentHelp(t("Print the checks as JSON: {ok, checks: [{check, status, message, fix}]}.")))
    var json = false

    func validate() throws {
        if !(1...65535).contains(port) { throw ValidationError(t("--port must be 1…65535")) }
        if !(timeout > 0 && timeout <= 120) { throw ValidationError(t("--timeout must be more than 0 and at most 120 seconds")) }
    }

    func run() async throws {
        let options = try Doctor.Options(
            home: global.homeAsFound, port: port, filter: InterfaceFilter(allow: interfaces, deny: InterfaceFilter.defaultDeny + excluded), seconds: timeout)
        let json = self.json
        let checks = await Doctor.run(options) { check in
            guard !json else { return }
            Console.out(Self.line(check))
            if let fix = check.fixPhrase.map(t.say), check.status != .ok {
                Console.out(String(repeating: " ", count: Self.markWidth + 15) + t("fix: %1$@", fix))
            }
        }
        let ok = !checks.contains { $0.status == .problem }
        if json {
            Console.json(["ok": .bool(ok), "checks": .array(checks.map(\.json))])
        } else {
            let problems = checks.filter { $0.status == .problem }.count
            let warnings = checks.filter { $0.status == .warning }.count
            Console.out(
                ok
                    ? (warnings == 0
                        ? t("Nothing here stops an exchange.")
                        : t.plural(
                            "Nothing here stops an exchange (%1$ld warning).", "Nothing here stops an exchange (%1$ld warnings).", count: warnings,
                            String(warnings)))
                    : t.plural(
                        "%1$ld problem would stop an exchange: fix it as shown, then run nearcard doctor again.",
                        "%1$ld problems would stop an exchange: fix them as shown, then run nearcard doctor again.", count: problems, String(problems))
            )
        }
        if !ok { throw ExitCode(Exit.checkFailed.rawValue) }
    }

    static func line(_ c: DoctorCheck) -> String {
        let mark: String
        switch c.status {
        case .ok: mark = t("ok", context: "doctor")
        case .warning: mark = t("warning", context: "doctor")
        case .problem: mark = t("PROBLEM", context: "doctor")
        case .skipped: mark = t("skipped", context: "doctor")
        }
        return "\(mark.padding(toLength: markWidth))  \(c.name.padding(toLength: 11, withPad: " ", startingAt: 0)) \(t.say(c.phrase))"
    }

    /// Every mark as wide as the widest, in the person's language as in English ("ok     "); a fix lines up
    /// one column after the message.
    static var markWidth: Int {
        [t("ok", context: "doctor"), t("warning", context: "doctor"), t("PROBLEM", context: "doctor"), t("skipped", context: "doctor")].map(\.count).max()!
    }
}
