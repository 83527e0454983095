import Foundation
import Testing

/// docs/PROTOCOL.md's conformance tables (§19, §20) name the test behind each rule: every name must be
/// a test that exists, in a suite that exists, so the table cannot drift from the suite.
@Suite struct SpecTableTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test func everyTestTheConformanceTablesNameExists() throws {
        let spec = try String(contentsOf: Self.root.appendingPathComponent("docs/PROTOCOL.md"), encoding: .utf8)
        var sources = ""
        let tests = Self.root.appendingPathComponent("Tests")
        for case let url as URL in FileManager.default.enumerator(at: tests, includingPropertiesForKeys: nil)! where url.pathExtension == "swift" {
            sources += try String(contentsOf: url, encoding: .utf8)
        }
        let tableRows = spec.split(separator: "\n").filter { $0.hasPrefix("| ") && $0.contains("Tests") }
        let pattern = try NSRegularExpression(pattern: #"\b([A-Z][A-Za-z]*Tests)\.([a-zA-Z][A-Za-z0-9]*)\b"#)
        var named = 0
        for row in tableRows {
            let line = String(row)
            for m in pattern.matches(in: line, range: NSRange(line.startIndex..., in: line)) {
                let suite = String(line[Range(m.range(at: 1), in: line)!]), test = String(line[Range(m.range(at: 2), in: line)!])
                named += 1
                #expect(sources.contains("struct \(suite)") || sources.contains("class \(suite)"), "no suite \(suite) (\(line.prefix(60)))")
                #expect(sources.contains("func \(test)("), "no test \(suite).\(test)")
            }
        }
        #expect(named > 150, "the tables name \(named) tests")
    }
}
