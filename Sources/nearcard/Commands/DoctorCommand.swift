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
        discussion: """
            One line per check: your home's permissions, the identity and the contact database, the clock, \
            the D-Bus system bus, avahi-daemon, the network interfaces discovery can use, the TCP port; then \
            an end-to-end test: a probe announced through avahi-daemon (as _nearcard-probe._tcp, which other \
            Nearcard nodes do not list), seen back, connected to at each address, and asked for by mDNS on \
            each interface (a firewall dropping UDP 5353 or the port shows here). Each problem comes with the \
            command that fixes it. Exit 0 when nothing would stop an exchange (warnings allowed), 1 when \
            something would.
            """)

    @OptionGroup var global: GlobalOptions

    @Option(parsing: .unconditional, help: "The TCP port nearcard listen would use.")
    var port: Int = NearcardNode.defaultPort

    @Option(name: .customLong("interface"), help: ArgumentHelp("Check only this interface; repeatable.", valueName: "IF"))
    var interfaces: [String] = []

    @Option(name: .customLong("exclude-interface"), help: ArgumentHelp("Leave out this interface; repeatable.", valueName: "IF"))
    var excluded: [String] = []

    @Option(parsing: .unconditional, help: "Seconds to wait for the test announcement to be seen back.")
    var timeout: Double = 5

    @Flag(help: "Print the checks as JSON: {ok, checks: [{check, status, message, fix}]}.")
    var json = false

    func validate() throws {
        if !(1...65535).contains(port) { throw ValidationError("--port must be 1…65535") }
        if !(timeout > 0 && timeout <= 120) { throw ValidationError("--timeout must be more than 0 and at most 120 seconds") }
    }

    func run() async throws {
        let options = try Doctor.Options(
            home: global.homeAsFound, port: port, filter: InterfaceFilter(allow: interfaces, deny: InterfaceFilter.defaultDeny + excluded), seconds: timeout)
        let json = self.json
        let checks = await Doctor.run(options) { check in
            guard !json else { return }
            Console.out(Self.line(check))
            if let fix = check.fix, check.status != .ok { Console.out("                      fix: \(fix)") }
        }
        let ok = !checks.contains { $0.status == .problem }
        if json {
            Console.json(["ok": .bool(ok), "checks": .array(checks.map(\.json))])
        } else {
            let problems = checks.filter { $0.status == .problem }.count
            let warnings = checks.filter { $0.status == .warning }.count
            Console.out(
                ok
                    ? (warnings == 0 ? "Nothing here stops an exchange." : "Nothing here stops an exchange (\(warnings) warning\(warnings == 1 ? "" : "s")).")
                    : "\(problems) problem\(problems == 1 ? "" : "s") would stop an exchange: fix \(problems == 1 ? "it" : "them") as shown, then run nearcard doctor again."
            )
        }
        if !ok { throw ExitCode(Exit.checkFailed.rawValue) }
    }

    static func line(_ c: DoctorCheck) -> String {
        let mark: String
        switch c.status {
        case .ok: mark = "ok     "
        case .warning: mark = "warning"
        case .problem: mark = "PROBLEM"
        case .skipped: mark = "skipped"
        }
        return "\(mark)  \(c.name.padding(toLength: 11, withPad: " ", startingAt: 0)) \(c.message)"
    }
}
