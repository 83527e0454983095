import Foundation
import Testing

/// docs/PROTOCOL.md's conformance tables (§19, §20) name the test behind each rule: every name must be
/// a test that exists, in a suite that exists, so the table cannot drift from the suite.
@Suite struct SpecTableTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test func everyTestTheConformanceTablesNameExists() throws {
        let spec = try String(contentsOf: Self.root.appendingPathComponent("docs/PROTOCOL.md"), encoding: .utf8)
        // Each test file's text, to look for a suite's tests in the files that declare or extend the suite.
        var files: [String] = []
        let tests = Self.root.appendingPathComponent("Tests")
        for case let url as URL in FileManager.default.enumerator(at: tests, includingPropertiesForKeys: nil)! where url.pathExtension == "swift" {
            files.append(try String(contentsOf: url, encoding: .utf8))
        }
        let tableRows = spec.split(separator: "\n").filter { $0.hasPrefix("| ") && $0.contains("Tests") }
        let pattern = try NSRegularExpression(pattern: #"\b([A-Z][A-Za-z]*Tests)\.([a-zA-Z][A-Za-z0-9]*)\b"#)
        var named = 0
        for row in tableRows {
            let line = String(row)
            for m in pattern.matches(in: line, range: NSRange(line.startIndex..., in: line)) {
                let suite = String(line[Range(m.range(at: 1), in: line)!])
                let test = String(line[Range(m.range(at: 2), in: line)!])
                named += 1
                let suiteFiles = files.filter { $0.contains("struct \(suite) ") || $0.contains("class \(suite) ") || $0.contains("extension \(suite) ") }
                #expect(!suiteFiles.isEmpty, "no suite \(suite) (\(line.prefix(60)))")
                #expect(suiteFiles.contains { $0.contains("func \(test)(") }, "no test \(test) in suite \(suite)")
            }
        }
        #expect(named > 150, "the tables name \(named) tests")
    }
}
