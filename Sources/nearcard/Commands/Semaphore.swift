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
            abstract: t("Check a Semaphore v4 proof (the export JSON, or the iOS app's wrapper around it)."),
            discussion: t(
                """
                Says whether the proof verifies, for which group root (and whether you trust it), and with \
                which nullifier. With --holder it also checks that the proof is bound to that DID as a card's \
                group proof must be (docs/PROTOCOL.md §18). Exit 0 valid · 1 does not verify (or not bound, \
                or, with --require-trusted, not a trusted group) · 2 malformed, out-of-range values, or \
                points not on the curve.
                """
            ))
        @OptionGroup var global: GlobalOptions
        @Argument(help: ArgumentHelp(t("The proof file; - reads stdin."))) var file: String
        @Option(help: ArgumentHelp(t("The card holder the proof must be bound to."), valueName: "DID")) var holder: String?
        @Flag(help: ArgumentHelp(t("Fail unless the root is a group you trust."))) var requireTrusted = false
        @Flag(help: ArgumentHelp(t("Print the result as JSON."))) var json = false

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
            var said: String? // the problem as the person reads it (the JSON's reason stays English)
            if case .failed(let why) = verdict { problem = why }
            report["valid"] = .bool(problem == nil)
            if problem == nil, requireTrusted, case .untrustedGroup = verdict {
                problem = "the proof verifies, but root \(proof.root) is not a group you trust"
                said = t("the proof verifies, but root %1$@ is not a group you trust", "\(proof.root)")
            }
            if let problem { report["reason"] = .string(problem) }
            if json {
                Console.json(.object(report))
            } else if problem == nil {
                Console.out(t("✔ Valid Semaphore proof (tree depth %1$@)", String(proof.depth)))
                Console.table(
                    [
                        (
                            t("Group"),
                            group.map { t("“%1$@” (trusted)", $0.name) } ?? t("not a group you trust (add it: nearcard group trust ROOT --name …)")
                        ),
                        (t("Root"), proof.root.description), (t("Nullifier"), proof.nullifier.description),
                        (t("Message"), proof.message.description), (t("Scope"), proof.scope.description),
                    ] + (holder.map { [(t("Bound to"), $0)] } ?? []))
            }
            if let problem { throw CLIError(.checkFailed, "\(file): \(said ?? problem)") }
        }

        static func read(_ file: String) throws -> String {
            let data: Data
            if file == "-" {
                data = Data(try Console.readStdin(limit: SemaphoreProof.maximumLength + 1, what: "Semaphore proof"))
            } else {
                guard let d = FileManager.default.contents(atPath: file) else {
                    throw CLIError(.malformedInput, t("cannot read %1$@: %2$@", file, PrivateFiles.unreadable(file)))
                }
                data = d
            }
            guard data.count <= SemaphoreProof.maximumLength else {
                throw CLIError(
                    .malformedInput,
                    t.plural(
                        "%1$@ is larger than %2$@ byte; it is no Semaphore proof", "%1$@ is larger than %2$@ bytes; it is no Semaphore proof",
                        count: SemaphoreProof.maximumLength, file, String(SemaphoreProof.maximumLength)))
            }
            guard let text = String(data: data, encoding: .utf8) else { throw CLIError(.malformedInput, t("%1$@ is not UTF-8 text", file)) }
            return text
        }
    }

    struct Binding: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "binding",
            abstract: t("Print the message and scope a Semaphore proof for a card must use (docs/PROTOCOL.md §18)."),
            discussion: t("Give these to the prover (e.g. generateProof(identity, group, message, scope) in @semaphore-protocol/proof)."))
        @OptionGroup var global: GlobalOptions
        @Option(help: ArgumentHelp(t("The card holder (default: your own DID)."), valueName: "DID")) var did: String?
        @Flag(help: ArgumentHelp(t("Print as JSON."))) var json = false
        func run() async throws {
            let holder = try did ?? global.identity().did
            _ = try DIDKey(parsing: holder)
            let message = SemaphoreBinding.message(holderDID: holder)
            let scope = SemaphoreBinding.scope(holderDID: holder)
            if json {
                Console.json(["did": .string(holder), "message": .string(message.description), "scope": .string(scope.description)])
            } else {
                Console.table([("DID", holder), (t("Message"), message.description), (t("Scope"), scope.description)])
            }
        }
    }
}
