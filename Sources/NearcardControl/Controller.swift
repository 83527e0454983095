import Foundation
internal import NIOConcurrencyHelpers
import NearcardCrypto
import NearcardDiscovery
import NearcardModel
import NearcardNode
import NearcardProtocol
import NearcardStore

/// Runs JSON-lines commands against a running node and writes one `reply` line per command
/// (docs/JSONL.md). Commands that take time (exchange, message) run concurrently; their replies come
/// when they finish, carrying the caller's `ref`.
final class Controller: Sendable {
    let runtime: NodeRuntime
    let output: @Sendable (JSONValue) -> Void
    let quit: @Sendable () -> Void
    /// Commands still at work (an exchange, a message), each to be answered once: by its own reply, or
    /// by `drain` when the node stops first.
    private let running = NIOLockedValueBox<[UUID: Running]>([:])

    private struct Running {
        var task: Task<Void, Never>?
        let command: ControlCommand
        let ref: JSONValue?
    }

    /// Accept and decline go to the runtime (refused when the node's policy decides).
    init(runtime: NodeRuntime, output: @escaping @Sendable (JSONValue) -> Void, quit: @escaping @Sendable () -> Void) {
        self.runtime = runtime
        self.output = output
        self.quit = quit
    }

    /// Handles one input line; a line that cannot be read gets an `error` event and nothing else happens.
    func handle(line: String) {
        guard let parsed = ControlCommand.parse(line) else { return }
        switch parsed {
        case .failure(let e):
            output(JSONLines.line("error", ["message": .string(e.message), "ref": e.ref ?? .null]))
        case .success(let p):
            run(p.command, ref: p.ref)
        }
    }

    func reply(_ command: ControlCommand, ref: JSONValue?, ok: Bool, _ members: JSONObject = [:]) {
        var o = members
        o["cmd"] = .string(command.name)
        o["ref"] = ref ?? .null
        o["ok"] = .bool(ok)
        output(JSONLines.line("reply", o))
    }

    func failure(_ command: ControlCommand, ref: JSONValue?, code: String, _ message: String) {
        reply(command, ref: ref, ok: false, Self.error(code, message))
    }

    func run(_ command: ControlCommand, ref: JSONValue?) {
        switch command {
        case .exchange(let peer, let message, let confirm):
            if let message, let problem = ProximityPayload.messageProblem(message) {
                return failure(command, ref: ref, code: "invalid", problem)
            }
            if confirm && runtime.context.pendingDecisions == nil {
                return failure(
                    command, ref: ref, code: "invalid", "confirm needs accept/decline commands (listen --jsonl --accept ask); this node's policy decides")
            }
            spawn(command, ref: ref) { [runtime] answer in
                do {
                    switch try await runtime.exchange(with: peer, message: message, confirm: confirm) {
                    case .completed(let contact, let outcome):
                        answer(true, ["contact": contact.json, "sas": .string(outcome.sas)])
                    case .unconfirmed(let contact, let outcome, let error):
                        answer(true, ["contact": contact.json, "sas": .string(outcome.sas), "unconfirmed": .bool(true), "reason": .string(error.message)])
                    case .failed(let error, _, _):
                        answer(false, Self.error(error.code.rawValue, error.message))
                    }
                } catch let e as NodeError {
                    answer(false, Self.error(Self.code(e, lookingFor: "unreachable"), e.message))
                } catch {
                    answer(false, Self.error("internal_error", "\(error)"))
                }
            }
        case .accept(let id, let message):
            decide(command, id: id, ref: ref) { () throws(NodeError) in try runtime.answer(request: id, accept: true, message: message) }
        case .decline(let id, let reason):
            decide(command, id: id, ref: ref) { () throws(NodeError) in try runtime.answer(request: id, accept: false, reason: reason) }
        case .message(let contact, let text):
            spawn(command, ref: ref) { [runtime] answer in
                do {
                    let item = try await runtime.send(message: text, to: contact)
                    if item.state == .failed {
                        // The recipient's node refused it (an unknown mailbox token: it withdrew or deleted us).
                        var members = Self.error("refused", item.lastError ?? "the recipient's node refused the message")
                        members["message"] = item.json
                        answer(false, members)
                    } else {
                        answer(true, ["message": item.json])
                    }
                } catch let e as StoreError {
                    answer(false, Self.error(e.kind == .notFound || e.kind == .unmatched ? "not_found" : "storage", e.message))
                } catch let e as NodeError {
                    answer(false, Self.error(Self.code(e, lookingFor: "not_found"), e.message))
                } catch {
                    answer(false, Self.error("internal_error", "\(error)"))
                }
            }
        case .peers:
            reply(command, ref: ref, ok: true, ["peers": .array(runtime.livePeers.sorted { $0.instanceName < $1.instanceName }.map(\.json))])
        case .quit:
            reply(command, ref: ref, ok: true)
            quit()
        }
    }

    func decide(_ command: ControlCommand, id: String, ref: JSONValue?, _ answer: () throws(NodeError) -> Void) {
        do throws(NodeError) {
            try answer()
            reply(command, ref: ref, ok: true, ["id": .string(id)])
        } catch {
            failure(command, ref: ref, code: error.kind == .notFound ? "not_found" : "invalid", error.message)
        }
    }

    /// `{"error": {code, message}}`, a failed reply's members.
    static func error(_ code: String, _ message: String) -> JSONObject {
        ["error": ["code": .string(code), "message": .string(message)]]
    }

    /// Runs a command that takes time; `body` answers it once through the function it is given. An
    /// answer that comes after `drain` has answered for it (the node stopped first) is dropped.
    private func spawn(
        _ command: ControlCommand, ref: JSONValue?,
        _ body: @escaping @Sendable (_ answer: @escaping @Sendable (Bool, JSONObject) -> Void) async -> Void
    ) {
        let id = UUID()
        running.withLockedValue { $0[id] = Running(task: nil, command: command, ref: ref) }
        let answer: @Sendable (Bool, JSONObject) -> Void = { [running] ok, members in
            guard running.withLockedValue({ $0.removeValue(forKey: id) }) != nil else { return }
            self.reply(command, ref: ref, ok: ok, members)
        }
        let task = Task { await body(answer) }
        running.withLockedValue { if $0[id] != nil { $0[id]?.task = task } }
    }

    /// Waits up to `timeout` for the commands still running, so their replies are written at quit; then
    /// answers each one left — `stopped`: the node stopped before it finished — and cancels it. Every
    /// command gets its one reply before `stopped`.
    func drain(timeout: TimeInterval) async {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline, !running.withLockedValue({ $0.isEmpty }) {
            try? await Task.sleep(nanoseconds: 20_000_000)
        }
        let left = running.withLockedValue { r in
            defer { r.removeAll() }
            return Array(r.values)
        }
        for r in left {
            failure(r.command, ref: r.ref, code: "stopped", "the node stopped before this \(r.command.name) finished")
            r.task?.cancel()
        }
    }

    /// A reply's error code for a node error (docs/JSONL.md): a name that matches no one or several is
    /// `lookingFor` (`unreachable` for a peer, `not_found` for a contact).
    static func code(_ e: NodeError, lookingFor: String) -> String {
        switch e.kind {
        case .refused, .declined: e.code ?? "declined"
        case .unreachable, .environment, .connectionLost, .timedOut: e.code ?? "unreachable"
        case .notFound, .ambiguous: lookingFor
        case .invalidInput, .noRoute: "invalid"
        case .storage: "storage"
        case .internalError: "internal_error"
        }
    }
}
