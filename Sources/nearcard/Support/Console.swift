import Foundation
import NearcardControl
import NearcardCrypto
import NearcardModel
import NearcardNode

#if canImport(Glibc)
    import Glibc
#endif

/// The CLI's only way to print: stdout for results, stderr for diagnostics.
enum Console {
    static func out(_ text: String) { write(STDOUT_FILENO, text + "\n") }

    static func err(_ text: String) { write(STDERR_FILENO, text + "\n") }

    /// Writes all of `text` to `fd` (unbuffered: lines from several tasks never interleave mid-line).
    static func write(_ fd: Int32, _ text: String) {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeMutableBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 {
                if errno == EINTR { continue }
                // A diagnostic that cannot be written has nowhere else to go; the exit code still says it.
                guard fd == STDOUT_FILENO else { return }
                // Whoever read our output has gone (`nearcard id | head -3`): stop quietly with 0, so a
                // `set -o pipefail` script (the demo) goes on; a reader that failed says so itself.
                // SIGPIPE is ignored (Main), so this is where a closed pipe shows.
                if errno == EPIPE { Glibc.exit(0) }
                // Output that did not reach its file (a full disk, an I/O error) is a failure, not
                // a success with less in it: a backup to a full disk must not exit 0.
                let reason = String(cString: strerror(errno))
                write(STDERR_FILENO, "nearcard: " + t("cannot write standard output: %1$@", reason) + "\n")
                Glibc.exit(Exit.storage.rawValue)
            }
            offset += n
        }
        bytes.removeAll()
    }

    /// An error line as it may reach a terminal: a control character an input brought into it (an
    /// escape sequence that would retitle the window or recolour it, a line break that would forge a
    /// second line) is shown as its code, `\x1b`, not sent.
    /// A string a peer chose (a name, a card field), isolated for the terminal: when it holds
    /// right-to-left letters it goes between FIRST STRONG ISOLATE and POP DIRECTIONAL ISOLATE, so it
    /// cannot reorder the text around it (docs/PROTOCOL.md §1). Left-to-right text needs nothing, and
    /// is left as it is.
    static func isolated(_ text: String) -> String {
        // Right-to-left letters, or a bidirectional control (an override such as U+202E in a message):
        // inside an isolate, neither can reorder what the line prints around it.
        guard text.unicodeScalars.contains(where: { isRightToLeft($0) || $0.isBidiControl }) else { return text }
        return "\u{2068}" + text + "\u{2069}"
    }

    /// The scripts written right to left (Hebrew, Arabic, Syriac, Thaana, N'Ko and the rest of
    /// U+0590–U+08FF; their presentation forms; the right-to-left planes U+10800–U+10FFF, U+1E800–U+1EFFF).
    static func isRightToLeft(_ s: Unicode.Scalar) -> Bool {
        switch s.value {
        case 0x0590...0x08FF, 0xFB1D...0xFDFF, 0xFE70...0xFEFF, 0x10800...0x10FFF, 0x1E800...0x1EFFF: true
        default: false
        }
    }

    /// How many columns a line takes (the isolates take none).
    static func width(_ text: String) -> Int { text.unicodeScalars.filter { $0.value != 0x2068 && $0.value != 0x2069 }.count }

    /// `text` in lines of at most `width` columns, broken at spaces (a word longer than a line is cut).
    static func wrap(_ text: String, width: Int) -> [String] {
        guard width > 0 else { return [text] }
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ", omittingEmptySubsequences: false).map(String.init) {
            var word = word
            let candidate = line.isEmpty ? word : line + " " + word
            if Self.width(candidate) <= width {
                line = candidate
                continue
            }
            if !line.isEmpty { lines.append(line) }
            while Self.width(word) > width {
                lines.append(String(word.prefix(width)))
                word = String(word.dropFirst(width))
            }
            line = word
        }
        if !line.isEmpty || lines.isEmpty { lines.append(line) }
        return lines
    }

    static func visible(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: \.isControl) else { return text }
        var out = ""
        for scalar in text.unicodeScalars {
            if scalar.isControl {
                let hex = String(scalar.value, radix: 16)
                out += "\\x" + (hex.count < 2 ? "0" + hex : hex)
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// One compact JSON object per line on stdout (JSON-lines output); whole lines, never interleaved.
    static func line(_ value: JSONValue) {
        lineLock.withLock { out(value.compactText) }
    }

    static let lineLock = NSLock()

    /// Pretty JSON on stdout (one document).
    static func json(_ value: JSONValue) {
        out(value.prettyText)
    }

    static var stdoutIsTerminal: Bool { isatty(STDOUT_FILENO) == 1 }
    static var stdinIsTerminal: Bool { isatty(STDIN_FILENO) == 1 }
    static var stderrIsTerminal: Bool { isatty(STDERR_FILENO) == 1 }

    /// The terminal's size in character cells (stdout's window; else $COLUMNS and $LINES), nil when unknown.
    static var terminalSize: (columns: Int, rows: Int)? {
        var w = winsize()
        if ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &w) == 0, w.ws_col > 0, w.ws_row > 0 { return (Int(w.ws_col), Int(w.ws_row)) }
        let env = ProcessInfo.processInfo.environment
        if let c = env["COLUMNS"].flatMap(Int.init), let r = env["LINES"].flatMap(Int.init), c > 0, r > 0 { return (c, r) }
        return nil
    }

    /// Reads all of stdin, refusing more than `limit` bytes.
    static func readStdin(limit: Int, what: String) throws -> [UInt8] {
        var out: [UInt8] = []
        var buf = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = read(STDIN_FILENO, &buf, buf.count)
            if n < 0 {
                if errno == EINTR { continue }
                throw CLIError(.storage, t("cannot read %1$@ from standard input: %2$@", what, String(cString: strerror(errno))))
            }
            if n == 0 { break }
            out += buf[0..<n]
            if out.count > limit { throw CLIError(.malformedInput, t("%1$@ on standard input is larger than %2$@ bytes", what, String(limit))) }
        }
        return out
    }

    /// Two-column "Label  value" lines for people.
    static func table(_ rows: [(String, String)]) {
        let width = rows.map(\.0.count).max() ?? 0
        for (k, v) in rows { out(k.padding(toLength: width + 2) + v) }
    }
}

extension String {
    func padding(toLength n: Int) -> String { count >= n ? self : self + String(repeating: " ", count: n - count) }
}

/// Lines read from standard input, on a thread of their own (reads block).
enum StdinLines {
    static func stream() -> AsyncStream<String> {
        let (stream, continuation) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .bufferingOldest(1024))
        let thread = Thread {
            var pending: [UInt8] = []
            var buf = [UInt8](repeating: 0, count: 16384)
            var discarding = false
            while true {
                let n = read(STDIN_FILENO, &buf, buf.count)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { break }
                for byte in buf[0..<n] {
                    if byte == 0x0A {
                        if !discarding { continuation.yield(String(decoding: pending, as: UTF8.self)) }
                        pending.removeAll(keepingCapacity: true)
                        discarding = false
                    } else if !discarding {
                        pending.append(byte)
                        // An over-long line is refused once (the parser reports it) and the rest of it skipped.
                        if pending.count > JSONLines.maximumCommandLength {
                            continuation.yield(String(decoding: pending, as: UTF8.self))
                            pending.removeAll(keepingCapacity: true)
                            discarding = true
                        }
                    }
                }
            }
            if !pending.isEmpty && !discarding { continuation.yield(String(decoding: pending, as: UTF8.self)) }
            continuation.finish()
        }
        thread.start()
        return stream
    }
}
