import Foundation
import NearcardCrypto

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

    /// Why `proto`/`port` may go unanswered, and the command that lets it in, from what the ruleset says.
    /// `elsewhere` is the fix when the packet filter is not the cause.
    static func verdict(_ state: State, proto: String, port: Int, elsewhere: String) -> (cause: String, fix: String) {
        switch state {
        case .unreadable(let why) where why == "no nft here":
            return ("no packet filter tool (nft) is installed, so a firewall is unlikely to be the cause", elsewhere)
        case .unreadable(let why):
            return (
                "a firewall may drop \(proto.uppercased()) port \(port) (the packet filter's rules were not read: \(why))",
                asRoot("nft list ruleset") + "   (shows whether an input chain drops \(proto) port \(port); nearcard doctor run as root names the rule to add)"
            )
        case .inputChains(let chains):
            let dropping = chains.filter(\.drops)
            if dropping.isEmpty {
                let what =
                    chains.isEmpty ? "there is no packet filter here (nft list ruleset has no rules)" : "no input chain of the packet filter drops anything"
                return ("\(what), so it is not a firewall", elsewhere)
            }
            if dropping.contains(where: { $0.table.contains("ufw") || $0.name.contains("ufw") }) {
                return ("the packet filter (ufw) drops it", asRoot("ufw allow \(port)/\(proto)"))
            }
            let named = dropping.map { "\($0.family) \($0.table) \($0.name)" }
            return (
                "the packet filter's input chain\(named.count == 1 ? "" : "s") \(named.joined(separator: ", ")) drop\(named.count == 1 ? "s" : "") it",
                dropping.map { asRoot("nft insert rule \($0.family) \($0.table) \($0.name) \(proto) dport \(port) accept") }.joined(separator: " && ")
            )
        }
    }
}
