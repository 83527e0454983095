import Foundation
import NearcardControl
import NearcardCrypto
import NearcardNode

/// The node running on a command's home (`listen`, `ui`, `bot`), reached through its control socket
/// (docs/JSONL.md): one process decides for a home. A command that changes what the node does or talks
/// to peers goes through it; with no node running, the command works alone.
enum RunningNode {
    /// The link to the node serving this home, or nil when none does.
    static func link(_ global: GlobalOptions) -> NodeLink? {
        NodeLink.connect(home: global.homePath)
    }

    /// Tells the running node (if any) what this command changed in the book, and returns once the
    /// node has applied it: a new name announced, a deleted contact no longer recognised.
    static func changed(_ global: GlobalOptions, _ what: [String]) async throws {
        guard let node = link(global) else { return }
        try check(try await call(node, ["cmd": "changed", "what": .array(what.map { .string($0) })]))
    }

    /// A call to the node, its failure to answer said as an environment error.
    static func call(
        _ node: NodeLink, _ command: JSONObject, event: (JSONValue) async -> Void = { _ in }
    ) async throws -> JSONValue {
        do { return try await node.call(command, event: event) } catch {
            throw CLIError(.environment, t("%1$@; try again (with no node running, the command works on its own)", error.description))
        }
    }

    /// Throws the reply's failure, if it is one.
    static func check(_ reply: JSONValue) throws {
        guard reply["ok"] != true else { return }
        throw failure(reply)
    }

    /// A failed reply as this process would have failed: the node error's kind decides the exit code,
    /// and its sentence is the one line said.
    static func failure(_ reply: JSONValue) -> CLIError {
        if let kind = reply["failure"]?["kind"]?.stringValue.flatMap(NodeError.Kind.init(rawValue:)),
            let message = reply["failure"]?["message"]?.stringValue
        {
            return CLIError(exit(for: kind), reply["failure"]?["phrase"].flatMap(Phrase.init(json:)) ?? Phrase(verbatim: message))
        }
        return CLIError(.software, reply["error"]?["message"]?.stringValue ?? t("the running node did not say why it failed"))
    }
}
