import Foundation
internal import NIOConcurrencyHelpers
import NearcardCrypto
import NearcardDiscovery
import NearcardModel
import NearcardNode
import NearcardProtocol

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

    /// A control-socket connection's (nil for stdin's `listen --jsonl`): the events of the exchanges it
    /// dials reach it, and its own `confirm` dials wait for its own accept/decline.
    let scope: ControlScope?
    /// The requests this connection's `confirm` dials wait on (the node's own policy decides the rest).
    let decisions: PendingDecisions?

    /// Accept and decline go to the runtime (refused when the node's policy decides).
    init(
        runtime: NodeRuntime, output: @escaping @Sendable (JSONValue) -> Void, quit: @escaping @Sendable () -> Void,
        scope: ControlScope? = nil
    ) {
        self.runtime = runtime
        self.output = output
        self.quit = quit
        self.scope = scope
        self.decisions = scope == nil ? nil : PendingDecisions()
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
        case .exchange(let peer, let message, let confirm, let wait):
            if let message, let problem = ProximityPayload.messageProblem(message) {
                return failure(command, ref: ref, code: "invalid", problem)
            }
            if confirm && runtime.pendingDecisions == nil && decisions == nil {
                return failure(
                    command, ref: ref, code: "invalid", "confirm needs accept/decline commands (listen --jsonl --accept ask); this node's policy decides")
            }
            // On the control socket, the dial's consent is this connection's, and so are its events.
            let consent: (any ConsentProvider)? = scope.map { scope in
                scope.consent(
                    confirm ? DecidedByCommand(decisions: decisions ?? PendingDecisions(), message: message) : AcceptAll(message: message))
            }
            spawn(command, ref: ref) { [runtime, scope] answer in
                scope?.dialling(true)
                defer { scope?.dialling(false) }
                do {
                    let result =
                        if let consent {
                            try await runtime.exchange(with: peer, message: message, consent: consent, wait: wait ?? 5)
                        } else {
                            try await runtime.exchange(with: peer, message: message, confirm: confirm)
                        }
                    switch result {
                    case .completed(let contact, let outcome):
                        answer(true, Self.completed(contact, outcome))
                    case .unconfirmed(let contact, let outcome, let error):
                        var members = Self.completed(contact, outcome)
                        members["unconfirmed"] = .bool(true)
                        members["reason"] = .string(error.message)
                        answer(true, members)
                    case .failed(let error, _, _, _):
                        var members = Self.error(error.code.rawValue, error.message)
                        if let failure = result.failure { members["failure"] = Self.described(failure) }
                        answer(false, members)
                    }
                } catch let e as NodeError {
                    var members = Self.error(Self.code(e, lookingFor: "unreachable"), e.message)
                    members["failure"] = Self.described(e)
                    answer(false, members)
                } catch {
                    answer(false, Self.error("internal_error", "\(error)"))
                }
            }
        case .accept(let id, let message):
            if decisions?.resolve(id, ConsentAnswer(accept: true, message: message)) == true { return reply(command, ref: ref, ok: true, ["id": .string(id)]) }
            decide(command, id: id, ref: ref) { () throws(NodeError) in try runtime.answer(request: id, accept: true, message: message) }
        case .decline(let id, let reason):
            if decisions?.resolve(id, .decline(reason)) == true { return reply(command, ref: ref, ok: true, ["id": .string(id)]) }
            decide(command, id: id, ref: ref) { () throws(NodeError) in try runtime.answer(request: id, accept: false, reason: reason) }
        case .rotatePresence:
            spawn(command, ref: ref) { [runtime] answer in
                do throws(NodeError) {
                    try await runtime.rotatePresence()
                    answer(true, [:])
                } catch {
                    var members = Self.error(Self.code(error, lookingFor: "not_found"), error.message)
                    members["failure"] = Self.described(error)
                    answer(false, members)
                }
            }
        case .changed(let what):
            spawn(command, ref: ref) { [runtime] answer in
                do throws(NodeError) {
                    var renamed = false
                    for w in what {
                        switch w {
                        case .card: renamed = try await runtime.cardChanged() || renamed
                        case .contacts: runtime.contactsChanged()
                        case .addressbooks: await runtime.addressBooksChanged()
                        }
                    }
                    answer(true, ["renamed": .bool(renamed)])
                } catch {
                    var members = Self.error(Self.code(error, lookingFor: "not_found"), error.message)
                    members["failure"] = Self.described(error)
                    answer(false, members)
                }
            }
        case .message(let contact, let text, let wait, let lifetime):
            spawn(command, ref: ref) { [runtime] answer in
                do {
                    let item = try await runtime.send(message: text, to: contact, wait: wait ?? 5, expiresIn: lifetime)
                    if item.state == .failed {
                        // The recipient's node refused it (an unknown mailbox token: it withdrew or deleted us).
                        var members = Self.error("refused", item.lastError ?? "the recipient's node refused the message")
                        members["message"] = item.json
                        answer(false, members)
                    } else {
                        answer(true, ["message": item.json])
                    }
                } catch let e as NodeError {
                    var members = Self.error(Self.code(e, lookingFor: "not_found"), e.message)
                    members["failure"] = Self.described(e)
                    answer(false, members)
                } catch {
                    // The book's own failure (no such contact, a full disk), in its words.
                    if let e = NodeError(below: error) {
                        answer(false, Self.error(e.kind == .notFound || e.kind == .missing ? "not_found" : "storage", e.message))
                    } else {
                        answer(false, Self.error("internal_error", "\(error)"))
                    }
                }
            }
        case .outboxSend:
            spawn(command, ref: ref) { [runtime] answer in
                // The exchanges settled on this pass are said in the reply, as `outbox --send` says them.
                let settled = NIOLockedValueBox<[JSONValue]>([])
                let token = runtime.events.observe { event in
                    if case .exchangeSettled(_, let name, let kept) = event {
                        settled.withLockedValue { $0.append(["name": .string(name), "kept": .bool(kept)]) }
                    }
                }
                let sent = await runtime.deliverQueued(wait: 0)
                runtime.events.stopObserving(token)
                answer(true, ["messages": .array(sent.map(\.json)), "settled": .array(settled.withLockedValue { $0 })])
            }
        case .addressBookSync(let url, let mirrorDeletes):
            spawn(command, ref: ref) { [runtime] answer in
                do throws(NodeError) {
                    let books = try await runtime.syncAddressBooks(url: url, mirrorDeletes: mirrorDeletes)
                    answer(true, ["books": .array(books.map(\.json))])
                } catch {
                    var members = Self.error(Self.code(error, lookingFor: "not_found"), error.message)
                    members["failure"] = Self.described(error)
                    answer(false, members)
                }
            }
        case .invite(let ttl, let uses):
            do throws(NodeError) {
                let port = runtime.port ?? NearcardNode.defaultPort
                let invitation = try runtime.invite(ttl: ttl, uses: uses, port: port)
                reply(
                    command, ref: ref, ok: true,
                    [
                        "invitation": [
                            "text": .string(invitation.text), "expires": .string(ISO8601.string(invitation.expires)),
                            "name": invitation.name.map { .string($0) } ?? .null, "fingerprint": .string(invitation.fingerprint),
                            "addresses": .array(invitation.addresses.map { .string($0) }), "port": .number(Double(port)),
                            "uses": .number(Double(uses)),
                        ]
                    ])
            } catch {
                var members = Self.error(Self.code(error, lookingFor: "not_found"), error.message)
                members["failure"] = Self.described(error)
                reply(command, ref: ref, ok: false, members)
            }
        case .peers:
            reply(command, ref: ref, ok: true, ["peers": .array(runtime.peersToOffer().sorted { $0.instanceName < $1.instanceName }.map(\.json))])
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

    /// A completed exchange's reply: the contact, the check code, and the common contacts when that step ran.
    static func completed(_ contact: Contact, _ outcome: ExchangeSummary) -> JSONObject {
        var o: JSONObject = ["contact": contact.json, "sas": .string(outcome.sas)]
        if let common = outcome.commonContacts {
            o["commonContacts"] = .array(common.common.sorted().map { .string($0) })
            o["peerSetBound"] = .number(Double(common.peerSetBound))
        }
        return o
    }

    /// A node error as a face reports it: its kind (which decides the exit code) and its sentence.
    static func described(_ e: NodeError) -> JSONValue {
        ["kind": .string(e.kind.rawValue), "message": .string(e.message), "phrase": e.phrase.json]
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
        case .storage, .identity: "storage"
        case .missing: "not_found"
        case .internalError: "internal_error"
        }
    }
}
