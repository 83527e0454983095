public import Foundation
import NearcardCrypto

/// ISO-8601 in the iOS app's QR convention: UTC, no fractional seconds ("2026-05-13T06:15:31Z").
public enum ISO8601 {
    public static func string(_ date: Date) -> String {
        var t = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&t, &parts)
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
    }

    /// `YYYY-MM-DDTHH:MM:SS.fffZ`: UTC with milliseconds (JSON lines' `time`, log lines).
    public static func millisecondString(_ date: Date) -> String {
        let ms = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        let base = string(Date(timeIntervalSince1970: TimeInterval(ms / 1000)))
        let millis = String(ms % 1000)
        return String(base.dropLast()) + "." + String(repeating: "0", count: 3 - millis.count) + millis + "Z"
    }

    /// Parses `YYYY-MM-DDTHH:MM:SS(.fff)?(Z|±HH:MM)`.
    public static func date(_ text: String) -> Date? {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime]
        if let d = f.date(from: text) { return d }
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return f.date(from: text)
    }
}
