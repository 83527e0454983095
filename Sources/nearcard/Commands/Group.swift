import ArgumentParser
import Foundation
import NearcardCrypto
import NearcardModel
import NearcardNode
import NearcardSemaphore

/// `nearcard group …`: the Semaphore groups (issuers' member lists, by Merkle root) the user trusts.
struct Group: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "group",
        abstract: t("Manage the Semaphore groups you trust (a card proving membership of one is verified)."),
        discussion: t(
            """
            A group is named by its Merkle root, which its issuer publishes ("the attendees of X"). A card \
            that carries a Semaphore proof for a trusted root, bound to the card's DID, is verified and shows \
            "member of NAME"; a valid proof for a root you do not trust leaves the card unverified.
            """
        ),
        subcommands: [TrustGroup.self, List.self, Remove.self], defaultSubcommand: List.self)

    struct TrustGroup: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "trust", abstract: t("Trust a group root."))
        @OptionGroup var global: GlobalOptions
        @Argument(help: ArgumentHelp(t("The group's Merkle root (decimal, or 0x-prefixed hex), below the BN254 scalar modulus."))) var root: String
        @Option(help: ArgumentHelp(t("What the group is (shown beside its members' cards)."))) var name: String
        @Option(parsing: .unconditional, help: ArgumentHelp(t("Accept only proofs made with this tree depth (1…32)."), valueName: "D")) var depth: Int?

        func validate() throws {
            if let depth, !(1...32).contains(depth) { throw ValidationError(t("--depth must be between 1 and 32")) }
            if name.trimmingCharacters(in: .whitespaces).isEmpty { throw ValidationError(t("--name cannot be empty")) }
        }

        func run() async throws {
            let value = try GroupRoots.parse(root)
            let db = try global.database()
            let before = try db.trustedGroups().first { $0.root == value.description }
            try db.trustGroup(root: value.description, name: name.trimmingCharacters(in: .whitespaces), depth: depth)
            if let before {
                // Trusting a root again updates it: say what it was, so a rename is never silent.
                let root = "\(value)"
                switch (before.depth, depth) {
                case (let old?, let new?):
                    Console.out(
                        t(
                            "The group with root %1$@ was trusted already as “%2$@”, depth %3$@; it is now “%4$@”, depth %5$@", root, before.name, String(old),
                            name, String(new)))
                case (let old?, nil):
                    Console.out(
                        t(
                            "The group with root %1$@ was trusted already as “%2$@”, depth %3$@; it is now “%4$@”, any depth", root, before.name, String(old),
                            name))
                case (nil, let new?):
                    Console.out(t("The group with root %1$@ was trusted already as “%2$@”; it is now “%3$@”, depth %4$@", root, before.name, name, String(new)))
                case (nil, nil):
                    Console.out(t("The group with root %1$@ was trusted already as “%2$@”; it is now “%3$@”, any depth", root, before.name, name))
                }
            } else {
                Console.out(
                    depth.map { t("Trusted the group “%1$@” (root %2$@), depth %3$@", name, "\(value)", String($0)) }
                        ?? t("Trusted the group “%1$@” (root %2$@)", name, "\(value)"))
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: t("List the groups you trust."))
        @OptionGroup var global: GlobalOptions
        @Flag(help: ArgumentHelp(t("Print as JSON."))) var json = false
        func run() async throws {
            let groups = try global.existingDatabase().trustedGroups()
            if json {
                Console.json(
                    .array(
                        groups.map {
                            [
                                "root": .string($0.root), "name": .string($0.name), "depth": $0.depth.map { .number(Double($0)) } ?? .null,
                                "addedAt": .string(ISO8601.string($0.addedAt)),
                            ]
                        }))
            } else if groups.isEmpty {
                Console.out(t("No trusted groups. Add one with: nearcard group trust ROOT --name NAME"))
            } else {
                ContactDisplay.columns(
                    [t("NAME"), t("DEPTH"), t("ROOT")], groups.map { [$0.name, $0.depth.map(String.init) ?? t("any", context: "depth"), $0.root] })
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "remove", abstract: t("Stop trusting a group."))
        @OptionGroup var global: GlobalOptions
        @Argument(help: ArgumentHelp(t("The group's Merkle root."))) var root: String
        func run() async throws {
            let value = try GroupRoots.parse(root)
            guard try global.database().untrustGroup(root: value.description) else {
                throw CLIError(.notFound, t("root %1$@ is not a group you trust (see: nearcard group list)", "\(value)"))
            }
            Console.out(t("No longer trusted: root %1$@", "\(value)"))
        }
    }
}

enum GroupRoots {
    /// A root as typed: decimal or 0x-hex, below r.
    static func parse(_ text: String) throws -> UInt256 {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        var value: UInt256?
        if trimmed.hasPrefix("0x") || trimmed.hasPrefix("0X") {
            let hex = String(trimmed.dropFirst(2))
            if !hex.isEmpty, hex.count <= 64, let bytes = try? Hex.decode(String(repeating: "0", count: 64 - hex.count) + hex) {
                value = UInt256(bigEndian: bytes)
            }
        } else {
            value = UInt256(decimal: trimmed)
        }
        guard let value else { throw CLIError(.malformedInput, t("\"%1$@\" is not a group root (a decimal number, or 0x followed by hex)", text)) }
        guard value < Groth16.scalarModulus else {
            throw CLIError(.malformedInput, t("%1$@ is not below the BN254 scalar modulus, so it is no Semaphore root", text))
        }
        return value
    }
}
