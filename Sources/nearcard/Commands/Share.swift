import ArgumentParser
import NearcardCrypto
import NearcardModel

/// `nearcard share [--fields …]`: which fields every exchange discloses.
struct Share: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show or set which card fields every exchange discloses (name is always included).",
        discussion: "Fields: \(CardField.allCases.map(\.rawValue).joined(separator: ", ")). The choice is kept and reused for every exchange.")

    @OptionGroup var global: GlobalOptions

    @Option(help: ArgumentHelp("Comma-separated fields to disclose, e.g. name,company,title.", valueName: "FIELDS"))
    var fields: String?

    @Flag(help: "Print the selection as JSON.") var json = false

    func run() async throws {
        let db = try global.database()
        if let fields {
            try db.saveSharingPolicy(SharingPolicy(fields: try CardField.parseList(fields)))
        }
        let policy = try db.sharingPolicy()
        if json {
            Console.json(["fields": .array(policy.orderedFieldNames.map { .string($0) })])
        } else {
            Console.out("Exchanges disclose: \(policy.orderedFieldNames.joined(separator: ", "))")
            let hidden = CardField.allCases.filter { !policy.fields.contains($0) }.map(\.rawValue)
            if !hidden.isEmpty { Console.out("Kept private:       \(hidden.joined(separator: ", "))") }
        }
    }
}
