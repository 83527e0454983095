import ArgumentParser
import Foundation
import NearcardCrypto
import NearcardModel
import NearcardNode
import NearcardSemaphore

/// `nearcard semaphore …`: check Semaphore proofs; show the binding a proof for your card must use.
struct Semaphore: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "semaphore",
        abstract: t("Verify Semaphore v4 group proofs, or show the message and scope a proof for your card needs."),
        subcommands: [Verify.self, Binding.self])

    struct Verify: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "verify",
            abstract: "Check a Semaphore v4 proof (the export JSON, or the iOS app's wrapper around it).",
            discussion: """
                Says whether the proof verifies, for which group root (and whether you trust it), and with \
                which nullifier. With --holder it also checks that the proof is bound to that DID as a card's \
                group proof must be (docs/PROTOCOL.md §18). Exit 0 valid · 1 does not verify (or not bound, \
                or, with --require-trusted, not a trusted group) · 2 malformed, out-of-range values, or \
                points not on the curve.
                """)
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The proof file; - reads stdin.") var file: String
        @Option(help: ArgumentHelp("The card holder the proof must be bound to.", valueName: "DID")) var holder: String?
        @Flag(help: "Fail unless the root is a group you trust.") var requireTrusted = false
        @Flag(help: "Print the result as JSON.") var json = false

        func run() async throws {
            let text = try Self.read(file)
            var report: JSONObject = ["file": .string(file)]
            let proof: SemaphoreProof
            do { proof = try SemaphoreProof(json: text) } catch {
                report["valid"] = false
                report["reason"] = .string(error.description)
                if json { Console.json(.object(report)) }
                throw CLIError(.malformedInput, "\(file): \(error.description)")
            }
            report["depth"] = .number(Double(proof.depth))
            report["root"] = .string(proof.root.description)
            report["nullifier"] = .string(proof.nullifier.description)
            report["message"] = .string(proof.message.description)
            report["scope"] = .string(proof.scope.description)
            // The trust list is consulted only when a home exists: verifying needs no identity.
            let home = global.resolvedHome
            let db = home.hasBook ? try global.database() : nil
            let group = try db?.trustedGroup(root: proof.root.description)
            report["group"] = group.map { .string($0.name) } ?? .null
            report["trusted"] = .bool(group != nil)
            if let holder {
                report["holder"] = .string(holder)
                report["bound"] = .bool(SemaphoreBinding.isBound(proof, to: holder))
            }
            // The same check an exchange or a scan makes (binding when a holder is named, the pairing, the
            // trusted group's pinned depth).
            let verdict = SemaphoreBinding.check(proof, holderDID: holder) { _ in
                group.map { SemaphoreBinding.TrustedGroup(name: $0.name, depth: $0.depth) }
            }
            var problem: String?
            if case .failed(let why) = verdict { problem = why }
            report["valid"] = .bool(problem == nil)
            if problem == nil, requireTrusted, case .untrustedGroup = verdict {
                problem = "the proof verifies, but root \(proof.root) is not a group you trust"
            }
            if let problem { report["reason"] = .string(problem) }
            if json {
                Console.json(.object(report))
            } else if problem == nil {
                Console.out("✔ Valid Semaphore proof (tree depth \(proof.depth))")
                Console.table(
                    [
                        ("Group", group.map { "“\($0.name)” (trusted)" } ?? "not a group you trust (add it: nearcard group trust ROOT --name …)"),
                        ("Root", proof.root.description), ("Nullifier", proof.nullifier.description),
                        ("Message", proof.message.description), ("Scope", proof.scope.description),
                    ] + (holder.map { [("Bound to", $0)] } ?? []))
            }
            if let problem { throw CLIError(.checkFailed, "\(file): \(problem)") }
        }

        static func read(_ file: String) throws -> String {
            let data: Data
            if file == "-" {
                data = Data(try Console.readStdin(limit: SemaphoreProof.maximumLength + 1, what: "Semaphore proof"))
            } else {
                guard let d = FileManager.default.contents(atPath: file) else {
                    throw CLIError(.malformedInput, "cannot read \(file): \(PrivateFiles.unreadable(file))")
                }
                data = d
            }
            guard data.count <= SemaphoreProof.maximumLength else {
                throw CLIError(.malformedInput, "\(file) is larger than \(SemaphoreProof.maximumLength) bytes; it is no Semaphore proof")
            }
            guard let text = String(data: data, encoding: .utf8) else { throw CLIError(.malformedInput, "\(file) is not UTF-8 text") }
            return text
        }
    }

    struct Binding: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "binding",
            abstract: "Print the message and scope a Semaphore proof for a card must use (docs/PROTOCOL.md §18).",
            discussion: "Give these to the prover (e.g. generateProof(identity, group, message, scope) in @semaphore-protocol/proof).")
        @OptionGroup var global: GlobalOptions
        @Option(help: ArgumentHelp("The card holder (default: your own DID).", valueName: "DID")) var did: String?
        @Flag(help: "Print as JSON.") var json = false
        func run() async throws {
            let holder = try did ?? global.identity().did
            _ = try DIDKey(parsing: holder)
            let message = SemaphoreBinding.message(holderDID: holder)
            let scope = SemaphoreBinding.scope(holderDID: holder)
            if json {
                Console.json(["did": .string(holder), "message": .string(message.description), "scope": .string(scope.description)])
            } else {
                Console.table([("DID", holder), ("Message", message.description), ("Scope", scope.description)])
            }
        }
    }
}
