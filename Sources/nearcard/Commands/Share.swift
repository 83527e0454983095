import ArgumentParser
import NearcardCrypto
import NearcardModel
import NearcardNode

/// `nearcard share [--fields …]`: which fields every exchange discloses.
struct Share: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "share",
        abstract: t("Show or set which card fields every exchange discloses (name is always included)."),
        discussion: t("Fields: %1$@. The choice is kept and reused for every exchange.", CardField.allCases.map(\.rawValue).joined(separator: ", ")))

    @OptionGroup var global: GlobalOptions

    @Option(help: ArgumentHelp(t("Comma-separated fields to disclose, e.g. name,company,title."), valueName: "FIELDS"))
    var fields: String?

    @Option(
        help: ArgumentHelp(
            t(
                "Learn the contacts you have in common with the people you exchange with, privately (on/off; off by default): each side learns only which of its own contacts the other also holds, and only when both turned it on (docs/PROTOCOL.md §22)."
            ),
            valueName: "on|off"))
    var commonContacts: String?

    @Flag(help: ArgumentHelp(t("Print the selection as JSON."))) var json = false

    func validate() throws {
        if let commonContacts, !["on", "off"].contains(commonContacts) {
            throw ValidationError(t("--common-contacts is on or off, not \"%1$@\"", commonContacts))
        }
    }

    func run() async throws {
        let db = try global.database()
        if let fields {
            try db.saveSharingPolicy(SharingPolicy(fields: try CardField.parseList(fields)))
        }
        if let commonContacts { try db.setCommonContacts(enabled: commonContacts == "on") }
        // A node running on this home sends what it now shares from its next session.
        if fields != nil || commonContacts != nil { try await RunningNode.changed(global, ["card"]) }
        let policy = try db.sharingPolicy()
        let common = try db.commonContactsEnabled()
        if json {
            Console.json(["fields": .array(policy.orderedFieldNames.map { .string($0) }), "commonContacts": .bool(common)])
        } else {
            Console.out(t("Exchanges disclose: %1$@", policy.orderedFieldNames.joined(separator: ", ")))
            let hidden = CardField.allCases.filter { !policy.fields.contains($0) }.map(\.rawValue)
            if !hidden.isEmpty { Console.out(t("Kept private:       %1$@", hidden.joined(separator: ", "))) }
            Console.out(t("Common contacts:    %1$@", common ? t("on — learnt privately with people who turned it on too") : t("off")))
        }
    }
}
