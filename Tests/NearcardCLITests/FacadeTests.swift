import Foundation
import NearcardCrypto
import NearcardSimulation
import NearcardTestSupport
import Testing

/// The faces (the CLI, the web app) are built without package access: they see NearcardNode's `public`
/// facade and nothing of its `package` machinery. Checked as a face is compiled: a file that names the
/// facade type-checks against the built modules, one that names a piece of machinery does not. And the
/// facade is what docs/ARCHITECTURE.md lists, no more.
@Suite struct FacadeTests {
    /// swiftc's arguments to type-check a file against this build's modules, as a face of the package is.
    func typecheck(_ source: String) throws -> (ok: Bool, errors: String) {
        let build = CLI.builtExecutable.deletingLastPathComponent().resolvingSymlinksInPath().path
        let fm = FileManager.default
        var maps: [String] = []
        // C targets' module maps: the package's own (Sources/C*), SwiftPM's for C targets it built, and the
        // system-library targets of the dependencies.
        for name in (try? fm.contentsOfDirectory(atPath: build)) ?? [] where name.hasSuffix(".build") {
            let map = "\(build)/\(name)/module.modulemap"
            if fm.fileExists(atPath: map) { maps.append(map) }
        }
        let sources = CLI.packageRoot.appendingPathComponent("Sources").path
        for name in (try? fm.contentsOfDirectory(atPath: sources)) ?? [] where fm.fileExists(atPath: "\(sources)/\(name)/module.modulemap") {
            maps.append("\(sources)/\(name)/module.modulemap")
        }
        var includes: [String] = []
        let checkouts = CLI.packageRoot.appendingPathComponent(".build/checkouts").path
        if let walk = fm.enumerator(atPath: checkouts) {
            while let path = walk.nextObject() as? String {
                let parts = path.split(separator: "/")
                if parts.last == "include" { includes.append("\(checkouts)/\(path)") }
                if parts.count == 4, parts[1] == "Sources", parts.last == "module.modulemap" { maps.append("\(checkouts)/\(path)") }
            }
        }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-face-\(UUID().uuidString).swift")
        try source.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let args =
            ["-typecheck", "-I", "\(build)/Modules"] + maps.flatMap { ["-Xcc", "-fmodule-map-file=\($0)"] }
            + includes.flatMap { ["-Xcc", "-I\($0)"] } + [file.path]
        let r = try CLI.run(executable: "/usr/bin/env", ["swiftc"] + args)
        return (r.code == 0, r.stderr)
    }

    @Test func aFaceCompilesAgainstTheFacadeAndNotPastIt() throws {
        let facade = try typecheck(
            """
            import NearcardNode
            func face(_ runtime: NodeRuntime, _ event: NodeEvent) async {
                _ = runtime.nearbyPeers
                _ = NodeLimits().consentTimeout
                let _: any ConsentProvider = AcceptAll(message: nil)
            }
            """)
        #expect(facade.ok, "the facade type-checks from outside: \(facade.errors.prefix(2000))")
        // The node's insides are out of reach: its context (keys, database, live state) and the keys
        // through any door but a signature lent for one call.
        for reach in [
            "runtime.context.keys", "runtime.context", "configuration.context", "NearcardApp(runtime: runtime).runtime.context.keys",
            "configuration.book.database", "NearcardApp(runtime: runtime).book.database", "Home(explicit: nil, store: nil).directory",
        ] {
            let past = try typecheck(
                "import NearcardNode\nfunc face(_ runtime: NodeRuntime, _ configuration: NodeConfiguration) { _ = \(reach) }\n")
            #expect(!past.ok && past.errors.contains("inaccessible due to 'package' protection level"), "\(reach) from a face: \(past.errors.prefix(500))")
        }
        // The book's node-only writes (an exchange's record and settlement, the mail queue's claims, the
        // presence key) are the node's: a face that opens the book cannot call them.
        for write in ["recordExchange", "answerConfirmation", "withdrawExchange", "claimDueMessages", "presenceKey", "createInvitation"] {
            let past = try typecheck("import NearcardStore\nfunc face(_ book: NearcardDatabase) { _ = book.\(write) }\n")
            #expect(!past.ok && past.errors.contains("inaccessible due to 'package' protection level"), "\(write) from a face: \(past.errors.prefix(500))")
        }
        for machinery in ["Dialer", "Listener", "Admission", "PeerTable", "MailSender", "SessionKeys", "OutboxWorker", "PeerBrowser", "NodeContext"] {
            let past = try typecheck("import NearcardNode\nlet _ = \(machinery).self\n")
            #expect(!past.ok && past.errors.contains("cannot find '\(machinery)' in scope"), "\(machinery) reached from a face: \(past.errors.prefix(500))")
        }
    }

    /// The faces reach the home through the facade alone: their files import none of the layers below it
    /// (the book's store, the protocol's state machines, NIO). The book and the home are the facade's
    /// `Book` and `Home` (issue 47).
    @Test func eachFaceImportsOnlyTheFacade() throws {
        let below = ["NearcardStore", "NearcardProtocol", "NIO", "NIOCore", "NIOPosix", "NIOConcurrencyHelpers"]
        func imports(_ folder: String) throws -> [String: Set<String>] {
            var found: [String: Set<String>] = [:]
            let root = CLI.packageRoot.appendingPathComponent("Sources/\(folder)")
            let walk = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)
            while let url = walk?.nextObject() as? URL {
                guard url.pathExtension == "swift" else { continue }
                for line in try String(contentsOf: url, encoding: .utf8).split(separator: "\n") {
                    let words = line.split(separator: " ").map(String.init)
                    guard let i = words.firstIndex(of: "import"), i + 1 < words.count,
                        words[..<i].allSatisfy({ $0.hasPrefix("@") || $0.hasSuffix("public") || $0 == "internal" || $0 == "package" })
                    else { continue }
                    if below.contains(words[i + 1]) { found[url.lastPathComponent, default: []].insert(words[i + 1]) }
                }
            }
            return found
        }
        let web = try imports("NearcardWeb")
        #expect(web.isEmpty, "NearcardWeb reaches below the facade: \(web)")
        // What the facade hands out (records, identities, errors) is NearcardModel's or its own.
        let cli = try imports("nearcard")
        #expect(cli.isEmpty, "the CLI reaches below the facade: \(cli)")
    }

    /// `grep "^public " Sources/NearcardNode` names only the types docs/ARCHITECTURE.md lists as the facade.
    @Test func theFacadeIsWhatArchitectureMdLists() throws {
        let node = CLI.packageRoot.appendingPathComponent("Sources/NearcardNode")
        var declared = Set<String>()
        let walk = FileManager.default.enumerator(at: node, includingPropertiesForKeys: nil)
        while let url = walk?.nextObject() as? URL {
            guard url.pathExtension == "swift" else { continue }
            for line in try String(contentsOf: url, encoding: .utf8).split(separator: "\n") where line.hasPrefix("public ") {
                let words = line.split(whereSeparator: { !($0.isLetter || $0.isNumber || $0 == "_") })
                if let kind = words.firstIndex(where: { ["class", "struct", "enum", "actor", "protocol", "typealias", "let", "var", "func"].contains($0) }),
                    kind + 1 < words.count
                {
                    declared.insert(String(words[kind + 1]))
                }
            }
        }
        let doc = try String(contentsOf: CLI.packageRoot.appendingPathComponent("docs/ARCHITECTURE.md"), encoding: .utf8)
        let section = try #require(
            doc.range(of: "<!-- facade -->").flatMap { start in
                doc.range(of: "<!-- /facade -->", range: start.upperBound..<doc.endIndex).map { doc[start.upperBound..<$0.lowerBound] }
            })
        var listed = Set<String>()
        var rest = section[...]
        while let open = rest.firstIndex(of: "`") {
            let after = rest[rest.index(after: open)...]
            guard let close = after.firstIndex(of: "`") else { break }
            listed.insert(String(after[..<close]))
            rest = after[after.index(after: close)...]
        }
        #expect(
            declared == listed,
            "public in NearcardNode but not listed: \(declared.subtracting(listed).sorted()); listed but not public: \(listed.subtracting(declared).sorted())")
    }

    /// ARCHITECTURE.md's module graph is Package.swift's: each target's dependencies, and which targets are
    /// built without package access.
    @Test func theModuleGraphIsPackageSwifts() throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-dump-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let r = try CLI.run(
            executable: "/usr/bin/env", ["swift", "package", "--package-path", CLI.packageRoot.path, "--scratch-path", scratch, "dump-package"])
        try #require(r.code == 0, "dump-package: \(r.stderr)")
        var graph: [String: Set<String>] = [:]
        for target in r.json["targets"]?.arrayValue ?? [] where target["type"] != "test" && target["type"] != "system" {
            guard let name = target["name"]?.stringValue else { continue }
            var deps = Set<String>()
            for d in target["dependencies"]?.arrayValue ?? [] {
                for kind in ["byName", "product", "target"] {
                    if let first = d[kind]?.arrayValue?.first?.stringValue { deps.insert(first) }
                }
            }
            let faceMark = target["packageAccess"] == false ? " (no package access)" : ""
            graph[name + faceMark] = deps
        }
        let doc = try String(contentsOf: CLI.packageRoot.appendingPathComponent("docs/ARCHITECTURE.md"), encoding: .utf8)
        let block = try #require(
            doc.range(of: "<!-- graph -->").flatMap { start in
                doc.range(of: "<!-- /graph -->", range: start.upperBound..<doc.endIndex).map { doc[start.upperBound..<$0.lowerBound] }
            })
        var drawn: [String: Set<String>] = [:]
        for line in block.split(separator: "\n") where line.contains("──►") {
            let parts = line.components(separatedBy: "──►")
            let deps = parts[1].trimmingCharacters(in: .whitespaces)
            drawn[parts[0].trimmingCharacters(in: .whitespaces)] =
                deps == "(nothing)" ? [] : Set(deps.components(separatedBy: ",").map { $0.trimmingCharacters(in: .whitespaces) })
        }
        #expect(
            drawn == graph,
            "ARCHITECTURE.md's graph differs from Package.swift: drawn \(drawn.filter { graph[$0.key] != $0.value }.keys.sorted()), actual \(graph.filter { drawn[$0.key] != $0.value })"
        )
    }
}
