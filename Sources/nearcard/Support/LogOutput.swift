public import ArgumentParser
import Foundation
import Logging
import NearcardModel

#if canImport(Glibc)
    import Glibc
#endif

/// How a serving node's log records look on stderr (journald keeps them under systemd): one line per
/// record, `TIME LEVEL EVENT key=value …`, values quoted when they hold a space, a quote or `=`.
///   2026-11-25T10:37:30.123Z info exchange.completed contact=… did=did:key:zDn… id=ab12cd34 ms=41 status=verified
struct KeyValueLogHandler: LogHandler {
    var logLevel: Logger.Level
    var metadata: Logger.Metadata = [:]
    let label: String

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var all = metadata
        if let extra = event.metadata { all.merge(extra) { $1 } }
        var line = "\(Self.timestamp(Date())) \(event.level) \(Self.quoted("\(event.message)"))"
        for (key, value) in all.sorted(by: { $0.key < $1.key }) {
            line += " \(key)=\(Self.quoted("\(value)"))"
        }
        line += "\n"
        Console.write(STDERR_FILENO, line)
    }

    static func quoted(_ text: String) -> String {
        let plain = !text.isEmpty && !text.contains { $0 == " " || $0 == "\"" || $0 == "=" || $0.isNewline || $0 == "\\" }
        if plain { return text }
        var out = "\""
        for ch in text {
            switch ch {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            default: out.append(ch)
            }
        }
        return out + "\""
    }

    /// RFC 3339 UTC with milliseconds, `2026-11-25T10:37:30.123Z` (as JSON lines write `time`; not
    /// `String(format:)`, which cost a busy bot more than the rest of its log line).
    static func timestamp(_ date: Date) -> String { ISO8601.millisecondString(date) }

    /// Makes this the process's logging backend at `level` (once per process).
    static func bootstrap(level: Logger.Level) {
        LoggingSystem.bootstrap { label in KeyValueLogHandler(logLevel: level, label: label) }
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
