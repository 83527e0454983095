import ArgumentParser
import Foundation
import NearcardCrypto
import NearcardModel
import NearcardNode
import NearcardSemaphore
import NearcardStore

/// `nearcard group …`: the Semaphore groups (issuers' member lists, by Merkle root) the user trusts.
struct Group: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Manage the Semaphore groups you trust (a card proving membership of one is verified).",
        discussion: """
        A group is named by its Merkle root, which its issuer publishes ("the attendees of X"). A card \
        that carries a Semaphore proof for a trusted root, bound to the card's DID, is verified and shows \
        "member of NAME"; a valid proof for a root you do not trust leaves the card unverified.
        """,
        subcommands: [TrustGroup.self, List.self, Remove.self], defaultSubcommand: List.self)

    struct TrustGroup: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "trust", abstract: "Trust a group root.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The group's Merkle root (decimal, or 0x-prefixed hex), below the BN254 scalar modulus.") var root: String
        @Option(help: "What the group is (shown beside its members' cards).") var name: String
        @Option(help: ArgumentHelp("Accept only proofs made with this tree depth (1…32).", valueName: "D")) var depth: Int?

        func validate() throws {
            if let depth, !(1...32).contains(depth) { throw ValidationError("--depth must be between 1 and 32") }
            if name.trimmingCharacters(in: .whitespaces).isEmpty { throw ValidationError("--name cannot be empty") }
        }

        func run() async throws {
            let value = try GroupRoots.parse(root)
            let db = try global.database()
            try db.trustGroup(root: value.description, name: name.trimmingCharacters(in: .whitespaces), depth: depth)
            Console.out("Trusted the group “\(name)” (root \(value))" + (depth.map { ", depth \($0)" } ?? ""))
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the groups you trust.")
        @OptionGroup var global: GlobalOptions
        @Flag(help: "Print as JSON.") var json = false
        func run() async throws {
            let groups = try global.database().trustedGroups()
            if json {
                Console.json(.array(groups.map {
                    ["root": .string($0.root), "name": .string($0.name), "depth": $0.depth.map { .number(Double($0)) } ?? .null,
                     "addedAt": .string(ISO8601.string($0.addedAt))]
                }))
            } else if groups.isEmpty {
                Console.out("No trusted groups. Add one with: nearcard group trust ROOT --name NAME")
            } else {
                ContactDisplay.columns(["NAME", "DEPTH", "ROOT"], groups.map { [$0.name, $0.depth.map(String.init) ?? "any", $0.root] })
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Stop trusting a group.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The group's Merkle root.") var root: String
        func run() async throws {
            let value = try GroupRoots.parse(root)
            guard try global.database().untrustGroup(root: value.description) else {
                throw CLIError(.notFound, "root \(value) is not a group you trust (see: nearcard group list)")
            }
            Console.out("No longer trusted: root \(value)")
        }
    }
}

enum GroupRoots {
    /// A root as typed: decimal or 0x-hex, below r.
    static func parse(_ text: String) throws -> UInt256 {
        let t = text.trimmingCharacters(in: .whitespaces)
        var value: UInt256?
        if t.hasPrefix("0x") || t.hasPrefix("0X") {
            let hex = String(t.dropFirst(2))
            if hex.count <= 64, let bytes = try? Hex.decode(String(repeating: "0", count: 64 - hex.count) + hex) {
                value = UInt256(bigEndian: bytes)
            }
        } else {
            value = UInt256(decimal: t)
        }
        guard let value else { throw CLIError(.malformedInput, "\"\(text)\" is not a group root (a decimal number, or 0x followed by hex)") }
        guard value < Groth16.scalarModulus else { throw CLIError(.malformedInput, "\(text) is not below the BN254 scalar modulus, so it is no Semaphore root") }
        return value
    }
}

/// `nearcard semaphore …`: check Semaphore proofs; show the binding a proof for your card must use.
struct Semaphore: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Verify Semaphore v4 group proofs, or show the message and scope a proof for your card needs.",
        subcommands: [Verify.self, Binding.self])

    struct Verify: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
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
            let db = FileManager.default.fileExists(atPath: home.databasePath) ? try global.database() : nil
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
                Console.table([
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
                    throw CLIError(.malformedInput, "cannot read \(file): no such file, or not readable")
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
            abstract: "Print the message and scope a Semaphore proof for a card must use (docs/PROTOCOL.md §18).",
            discussion: "Give these to the prover (e.g. generateProof(identity, group, message, scope) in @semaphore-protocol/proof).")
        @OptionGroup var global: GlobalOptions
        @Option(help: ArgumentHelp("The card holder (default: your own DID).", valueName: "DID")) var did: String?
        @Flag(help: "Print as JSON.") var json = false
        func run() async throws {
            let holder = try did ?? global.identityStore.loadPublic().did
            _ = try DIDKey(parsing: holder)
            let message = SemaphoreBinding.message(holderDID: holder), scope = SemaphoreBinding.scope(holderDID: holder)
            if json {
                Console.json(["did": .string(holder), "message": .string(message.description), "scope": .string(scope.description)])
            } else {
                Console.table([("DID", holder), ("Message", message.description), ("Scope", scope.description)])
            }
        }
    }
}

/// Explains the group proof a stored contact's card carried: the verdict made when it arrived (a
/// contact stored before verdicts were kept shows its group, if it proved one).
enum GroupNote {
    static func note(for contact: Contact) -> String? {
        contact.groupVerdict ?? contact.memberOf.map { "a member of the trusted group “\($0)” (Semaphore proof verified)" }
    }
}

/// The group proof a user puts on their own card: it must verify and be bound to their DID, or
/// every recipient would mark the card failed.
enum IssuerProofs {
    static func checked(_ file: String, holderDID: String) throws -> SemaphoreProof {
        let text = try Semaphore.Verify.read(file)
        let proof: SemaphoreProof
        do { proof = try SemaphoreProof(json: text) } catch { throw CLIError(.malformedInput, "\(file): \(error.description)") }
        guard SemaphoreBinding.isBound(proof, to: holderDID) else {
            throw CLIError(.checkFailed, """
                \(file): the proof is not bound to your DID, so recipients would refuse it; make it with the message \
                and scope from: nearcard semaphore binding
                """)
        }
        if case .failure(let f) = SemaphoreVerifier.verify(proof) { throw CLIError(.checkFailed, "\(file): \(f.description)") }
        return proof
    }
}
