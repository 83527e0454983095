import Foundation
import NearcardCrypto
import NearcardProcess
import NearcardSimulation
import NearcardTestSupport
import Testing

/// `nearcard doctor` in network namespaces, each cause of "I can't see the other laptop" broken on purpose:
/// the doctor names that cause with its fix, and no other problem.
@Suite struct DoctorTests {
    func log(_ name: String) -> URL { FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-\(UUID().uuidString)-\(name).log") }

    /// The doctor's findings: exit code, and the problems by check name with their fixes.
    func doctor(_ lab: Lab, _ person: TestPerson, env: [String: String] = [:], _ extra: [String] = []) throws -> (
        code: Int32, problems: [String: String], all: [JSONValue]
    ) {
        let r = try lab.run([CLI.executable.path, "doctor", "--json", "--home", person.home.path] + extra, env: env)
        let checks = r.json["checks"]?.arrayValue ?? []
        var problems: [String: String] = [:]
        for c in checks where c["status"] == "problem" {
            problems[c["check"]?.stringValue ?? ""] = (c["message"]?.stringValue ?? "") + " | fix: " + (c["fix"]?.stringValue ?? "")
        }
        #expect(r.json["ok"]?.boolValue == problems.isEmpty, "\(r.stdout) \(r.stderr)")
        return (r.code, problems, checks)
    }

    @Test func namesEachBrokenCauseAndNothingElse() throws {
        let lab = try Lab("dr")
        let ada = try TestPerson(name: "Ada")
        defer { ada.cli.cleanUp() }

        // Healthy: every end-to-end step passes.
        let healthy = try doctor(lab, ada)
        #expect(healthy.code == 0 && healthy.problems.isEmpty, "\(healthy.problems)")
        for name in ["announce", "tcp", "mdns", "avahi", "dbus"] {
            #expect(healthy.all.first { $0["check"]?.stringValue == name }?["status"] == "ok", "\(name): \(healthy.all)")
        }

        // A firewall in the namespace dropping mDNS, then one dropping the TCP port.
        let nft = ["nft", "add table inet t; add chain inet t input { type filter hook input priority 0; }"]
        #expect(try lab.run(nft).code == 0)
        #expect(try lab.run(["nft", "add rule inet t input udp dport 5353 drop"]).code == 0)
        let udp = try doctor(lab, ada, ["--timeout", "2"])
        #expect(udp.code == 1 && Set(udp.problems.keys) == ["mdns"], "\(udp.problems)")
        // A person cannot read the packet filter: said so, with how to look. Root reads it: the verdict
        // names the chain that drops it and the fix is a rule for that very chain, which, run as printed,
        // makes mDNS answer.
        #expect(udp.problems["mdns"]?.contains("rules were not read") == true || TestAccount.isRoot == false, "\(udp.problems)")
        func rootsFix(_ check: String) throws -> String? {
            let r = try lab.run([CLI.builtExecutable.path, "doctor", "--json", "--timeout", "2", "--home", ada.home.path])
            return r.json["checks"]?.arrayValue?.first { $0["check"]?.stringValue == check && $0["status"] == "problem" }?["fix"]?.stringValue
        }
        if TestAccount.isRoot {
            let mdnsFix = try #require(try rootsFix("mdns"))
            #expect(mdnsFix == "nft insert rule inet t input udp dport 5353 accept")
            #expect(try lab.run(mdnsFix.split(separator: " ").map(String.init)).code == 0)
            #expect(try doctor(lab, ada, ["--timeout", "2"]).problems.isEmpty, "the printed fix fixed it")
        }
        #expect(try lab.run(["nft", "flush chain inet t input"]).code == 0)
        #expect(try lab.run(["nft", "add rule inet t input tcp dport 7447 drop"]).code == 0)
        let tcp = try doctor(lab, ada)
        #expect(tcp.code == 1 && Set(tcp.problems.keys) == ["tcp"], "\(tcp.problems)")
        if TestAccount.isRoot {
            let tcpFix = try #require(try rootsFix("tcp"))
            #expect(tcpFix == "nft insert rule inet t input tcp dport 7447 accept")
            #expect(try lab.run(tcpFix.split(separator: " ").map(String.init)).code == 0)
            #expect(try doctor(lab, ada).problems.isEmpty, "the printed fix fixed it")
        }
        // No packet filter at all: not called a firewall.
        #expect(try lab.run(["nft", "flush ruleset"]).code == 0)
        if TestAccount.isRoot {
            let r = try lab.run([CLI.builtExecutable.path, "doctor", "--json", "--timeout", "2", "--home", ada.home.path])
            #expect(!r.stdout.contains("a firewall may"), "\(r.stdout)")
        }
        #expect(try lab.run(["nft", "add table inet t"]).code == 0)
        #expect(try lab.run(["nft", "delete table inet t"]).code == 0)

        // Another program on the port.
        let squatter = try lab.spawn(
            [
                "python3", "-c",
                "import socket,time;s=socket.socket(socket.AF_INET6);s.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1);s.bind(('::',7447));s.listen();print('up',flush=True);time.sleep(120)",
            ], log: log("squatter"))
        var held = false
        for _ in 0..<50 where !held {
            held = (try? String(contentsOfFile: squatter.log, encoding: .utf8))?.contains("up") == true
            if !held { usleep(100_000) }
        }
        let taken = try doctor(lab, ada)
        #expect(taken.code == 1 && Set(taken.problems.keys) == ["port"], "\(taken.problems)")
        #expect(taken.problems["port"]?.contains("ss -ltnp") == true && taken.problems["port"]?.contains("--port") == true)
        // The port it suggests is free, and not the web app's (7448).
        #expect(taken.problems["port"]?.contains("--port 7449") == true, "\(taken.problems)")
        squatter.kill(SIGKILL)
        squatter.wait()

        // The user's own node on the port is not a problem.
        _ = try lab.listen(home: ada.home, ["--accept", "all", "--port", "7447"], log: log("ada"))
        let own = try doctor(lab, ada)
        #expect(own.problems.isEmpty, "\(own.problems)")
        #expect(own.all.first { $0["check"] == "port" }?["message"]?.stringValue?.contains("your node") == true, "\(own.all)")

        // A home anyone can write to.
        #expect(chmod(ada.home.path, 0o777) == 0)
        let open = try doctor(lab, ada)
        #expect(open.code == 1 && Set(open.problems.keys) == ["home"], "\(open.problems)")
        #expect(open.problems["home"]?.contains("chmod 700 \(ada.home.path)") == true)
        // A home its user cannot write: nothing could be stored (as the unprivileged account; root writes anything).
        if TestAccount.isRoot {
            #expect(chmod(ada.home.path, 0o500) == 0)
            let locked = try doctor(lab, ada)
            #expect(locked.code == 1 && locked.problems["home"]?.contains("cannot be written by you (mode 0500)") == true, "\(locked.problems)")
        }
        #expect(chmod(ada.home.path, 0o700) == 0)

        // No system bus, then no avahi-daemon.
        let noBus = try doctor(lab, ada, env: ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/nonexistent/nearcard-bus"])
        #expect(noBus.code == 1 && Set(noBus.problems.keys) == ["dbus"], "\(noBus.problems)")
        #expect(noBus.problems["dbus"]?.contains("systemctl start dbus") == true)
        try lab.kill(named: "avahi-daemon")
        usleep(300_000)
        let noAvahi = try doctor(lab, ada)
        #expect(noAvahi.code == 1 && Set(noAvahi.problems.keys) == ["avahi"], "\(noAvahi.problems)")
        #expect(noAvahi.problems["avahi"]?.contains("systemctl start avahi-daemon") == true)
    }

    /// Issue 51, point 9: with the privacy fix applied (avahi-daemon publishing no address of the
    /// machine's own name) the doctor's test announcement is still seen back, as nodes' are; its
    /// privacy warning names the host name avahi-daemon publishes (the lab's), not the kernel's.
    @Test func theDoctorsOwnFixLeavesItsChecksPassing() throws {
        let lab = try Lab("dp", publishesAddresses: false)
        let ada = try TestPerson(name: "Ada")
        defer { ada.cli.cleanUp() }
        let fixed = try doctor(lab, ada, ["--timeout", "5"])
        for name in ["announce", "tcp", "mdns"] {
            #expect(fixed.all.first { $0["check"]?.stringValue == name }?["status"] == "ok", "\(name): \(fixed.all)")
        }
        let privacy = fixed.all.first { $0["check"] == "privacy" }
        if privacy?["status"] == "warning" {
            let said = privacy?["message"]?.stringValue ?? ""
            #expect(said.contains("(\(lab.space.name).local)"), "the name avahi-daemon publishes: \(said)")
        }
    }

    /// A damaged contact database, and a machine with no identity yet.
    @Test func aTruncatedDatabaseAndAMissingHome() throws {
        let lab = try Lab("dd")
        let grace = try TestPerson(name: "Grace")
        defer { grace.cli.cleanUp() }
        try grace.cli.run(["contacts", "add", "--name", "Ada Lovelace"])
        // A deletion folds the WAL a command leaves (its synced commits) into the file and empties it:
        // then the file alone is the book, and it is cut short.
        try grace.cli.run(["contacts", "add", "--name", "Alan Turing"])
        #expect(try grace.cli.run(["contacts", "delete", "Alan Turing", "--yes"]).code == 0)
        let db = grace.home.appendingPathComponent("nearcard.sqlite").path
        #expect((try? FileManager.default.attributesOfItem(atPath: db + "-wal")[.size] as? Int) ?? 0 == 0)
        #expect(truncate(db, 1000) == 0)
        let damaged = try doctor(lab, grace)
        #expect(damaged.code == 1 && Set(damaged.problems.keys) == ["database"], "\(damaged.problems)")
        #expect(damaged.problems["database"]?.contains("mv \(db) \(db).damaged") == true)

        let fresh = try CLI()
        defer { fresh.cleanUp() }
        let r = try lab.run([CLI.executable.path, "doctor", "--json", "--home", fresh.home.path])
        let problems = (r.json["checks"]?.arrayValue ?? []).filter { $0["status"] == "problem" }.compactMap { $0["check"]?.stringValue }
        #expect(r.code == 1 && problems == ["home"], "\(r.stdout)")
        #expect(r.stdout.contains("nearcard init --name"))
        #expect(!FileManager.default.fileExists(atPath: fresh.home.path), "the doctor creates nothing")
    }

    /// An interface without the MULTICAST flag: avahi leaves it out, and the doctor says how to turn it on.
    @Test func anInterfaceWithoutMulticast() throws {
        let (a, _) = try Lab.pair()
        let ada = try TestPerson(name: "Ada")
        defer { ada.cli.cleanUp() }
        let interface = a.space.interface
        #expect(try a.run(["ip", "link", "set", interface, "multicast", "off"]).code == 0)
        let r = try doctor(a, ada)
        #expect(r.code == 1 && Set(r.problems.keys) == ["interfaces"], "\(r.problems)")
        #expect(r.problems["interfaces"]?.contains("sudo ip link set \(interface) multicast on") == true)
        // An interface named that does not exist is named back, not "no network interface is up".
        let typo = try doctor(a, ada, ["--interface", "nosuch0"])
        #expect(typo.code == 1 && typo.problems["interfaces"]?.contains("no such network interface: nosuch0") == true, "\(typo.problems)")
    }
}
