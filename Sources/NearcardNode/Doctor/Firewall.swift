import Foundation
import NearcardCrypto
import NearcardText

/// What this machine's packet filter holds, as `nft -j list ruleset` shows it (iptables-nft and ufw
/// write there too): the doctor's verdict on an unanswered port comes from it, and so does the command
/// it suggests — one that works on this machine (a rule for a chain that exists), never a guess.
struct Firewall: Sendable, Equatable {
    /// An input-hook chain of the ruleset.
    struct Chain: Sendable, Equatable {
        var family: String
        var table: String
        var name: String
        /// Its policy is drop: whatever no rule accepts is dropped.
        var dropsByDefault: Bool
        /// One of its rules drops or rejects.
        var hasDropRules: Bool
        var drops: Bool { dropsByDefault || hasDropRules }
    }

    enum State: Sendable, Equatable {
        /// The ruleset could not be read (`why`: not root, or no `nft` here).
        case unreadable(String)
        /// Rules were read: the input chains (none at all: no packet filter).
        case inputChains([Chain])
    }

    /// The ruleset now (`nft` run as this user: reading it needs root).
    static func read() -> State {
        guard let nft = ["/usr/sbin/nft", "/sbin/nft", "/usr/bin/nft"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            return .unreadable("no nft here")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: nft)
        process.arguments = ["-j", "list", "ruleset"]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { return .unreadable("nft did not run") }
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return .unreadable("reading them needs root") }
        guard let json = try? JSONParser.parse(String(decoding: data, as: UTF8.self)) else { return .unreadable("nft's answer is not JSON") }
        return parse(json)
    }

    /// `nft -j list ruleset`'s document, reduced to its input chains.
    static func parse(_ json: JSONValue) -> State {
        var chains: [Chain] = []
        let items = json["nftables"]?.arrayValue ?? []
        for item in items {
            guard let c = item["chain"], c["hook"] == "input", let family = c["family"]?.stringValue, let table = c["table"]?.stringValue,
                let name = c["name"]?.stringValue
            else { continue }
            chains.append(Chain(family: family, table: table, name: name, dropsByDefault: c["policy"] == "drop", hasDropRules: false))
        }
        for item in items {
            guard let r = item["rule"], let expr = r["expr"]?.arrayValue,
                expr.contains(where: { $0["drop"] != nil || $0["reject"] != nil }),
                let i = chains.firstIndex(where: {
                    $0.family == r["family"]?.stringValue && $0.table == r["table"]?.stringValue && $0.name == r["chain"]?.stringValue
                })
            else { continue }
            chains[i].hasDropRules = true
        }
        return .inputChains(chains)
    }

    /// `command` as this user can run it with root's rights: as it is for root, after sudo where sudo is
    /// installed, else through su (a stock Debian without sudo).
    static func asRoot(_ command: String) -> String {
        if getuid() == 0 { return command }
        if ["/usr/bin/sudo", "/bin/sudo"].contains(where: { FileManager.default.isExecutableFile(atPath: $0) }) { return "sudo " + command }
        return "su -c '\(command)'"
    }

    /// Why `proto`/`port` may go unanswered, and the command that lets it in, from what the ruleset says,
    /// in English. `elsewhere` is the fix when the packet filter is not the cause.
    static func verdict(_ state: State, proto: String, port: Int, elsewhere: String) -> (cause: String, fix: String) {
        let v = verdict(state, proto: proto, port: port, elsewhere: Phrase(verbatim: elsewhere))
        return (v.cause.english, v.fix.english)
    }

    /// Why `proto`/`port` may go unanswered, and the command that lets it in, from what the ruleset says.
    /// `elsewhere` is the fix when the packet filter is not the cause.
    static func verdict(_ state: State, proto: String, port: Int, elsewhere: Phrase) -> (cause: Phrase, fix: Phrase) {
        switch state {
        case .unreadable(let why) where why == "no nft here":
            return (Phrase("no packet filter tool (nft) is installed, so a firewall is unlikely to be the cause"), elsewhere)
        case .unreadable(let why):
            return (
                Phrase("a firewall may drop %1$@ port %2$@ (the packet filter's rules were not read: %3$@)", proto.uppercased(), String(port), reason(why)),
                Phrase(
                    "%1$@   (shows whether an input chain drops %2$@ port %3$@; nearcard doctor run as root names the rule to add)", asRoot("nft list ruleset"),
                    proto, String(port))
            )
        case .inputChains(let chains):
            let dropping = chains.filter(\.drops)
            if dropping.isEmpty {
                return (
                    chains.isEmpty
                        ? Phrase("there is no packet filter here (nft list ruleset has no rules), so it is not a firewall")
                        : Phrase("no input chain of the packet filter drops anything, so it is not a firewall"),
                    elsewhere
                )
            }
            if dropping.contains(where: { $0.table.contains("ufw") || $0.name.contains("ufw") }) {
                return (Phrase("the packet filter (ufw) drops it"), Phrase(verbatim: asRoot("ufw allow \(port)/\(proto)")))
            }
            let named = dropping.map { "\($0.family) \($0.table) \($0.name)" }.joined(separator: ", ")
            return (
                dropping.count == 1
                    ? Phrase("the packet filter's input chain %1$@ drops it", named) : Phrase("the packet filter's input chains %1$@ drop it", named),
                Phrase(
                    verbatim: dropping.map { asRoot("nft insert rule \($0.family) \($0.table) \($0.name) \(proto) dport \(port) accept") }.joined(
                        separator: " && "))
            )
        }
    }

    /// Why the ruleset could not be read (`State.unreadable`), to be said in the person's language.
    static func reason(_ why: String) -> Phrase {
        switch why {
        case "nft did not run": Phrase("nft did not run")
        case "reading them needs root": Phrase("reading them needs root")
        case "nft's answer is not JSON": Phrase("nft's answer is not JSON")
        default: Phrase(verbatim: why)
        }
    }
}
